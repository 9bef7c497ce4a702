import { readFileSync, realpathSync, statSync } from 'node:fs'
import { resolveInside, toPosixRelative } from 'dsh-common'
import type { CallChange } from 'dsh-snapshot'
import type { Change } from './types.ts'

/** Files larger than this are not kept as the accepted content (their tests are measured before the write instead). */
export const MAX_BEFORE_BYTES = 8 * 1024 * 1024

/** Stands for a file's bytes before a write runs: only that a file is there is known then. */
const UNREAD = Buffer.alloc(0)

/** Changes dsh-snapshot announced, waiting for their call's judgement (each taken once), by session and call. */
export class Announced {
  private readonly _changes = new Map<string, CallChange>()

  put(change: CallChange): void {
    this._changes.set(`${change.sessionId}\u0000${change.callId}`, change)
  }

  take(sessionId: string, callId: string): CallChange | undefined {
    const key = `${sessionId}\u0000${callId}`
    const change = this._changes.get(key)
    this._changes.delete(key)
    return change
  }

  clear(): void {
    this._changes.clear()
  }
}

/** Resolve a tool's paths inside the workspace; a path outside is left to the tool to refuse. */
export function changeOf(root: string, paths: readonly string[]): Change {
  const abs: string[] = []
  for (const p of paths) {
    try {
      abs.push(resolveInside(root, p))
    } catch {
      // Outside the workspace: the tool refuses it, nothing to check.
    }
  }
  const real = realpathSync(root)
  return { paths: abs, files: abs.map(a => toPosixRelative(real, a)) }
}

/**
 * A write about to run, as its judgement is prepared: which of its paths
 * hold a file and which nothing, so the checks can tell whether the
 * accepted content will be servable after it. The bytes themselves come
 * with the change dsh-snapshot announces when the write returns; until
 * then each file's stand-in is empty. No `before` when one path cannot be
 * kept (a directory, larger than {@link MAX_BEFORE_BYTES}).
 */
export function expectedBefore(change: Change): Change {
  const before = new Map<string, Buffer | null>()
  for (const path of change.paths) {
    try {
      const s = statSync(path)
      if (!s.isFile() || s.size > MAX_BEFORE_BYTES) return change
      before.set(path, UNREAD)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return change
      before.set(path, null)
    }
  }
  return { ...change, before }
}

/**
 * What a call changed, to judge: a write's own paths, or the paths a
 * command created, modified and deleted, with the pre-images dsh-snapshot
 * announced for them (a command's tests are judged after it first, the
 * failing ones on that content). No `before` when one of them was not kept.
 */
export function announcedChange(root: string, write: Change | undefined, announced: CallChange | undefined): Change {
  const change = write ?? changeOf(root, announced ? [...announced.created, ...announced.modified, ...announced.deleted].sort() : [])
  const images = announced?.before
  if (!images) return write ?? change
  const before = new Map<string, Buffer | null>()
  for (let i = 0; i < change.paths.length; i++) {
    const bytes = images.get(change.files[i]!)
    if (bytes === undefined || (bytes && bytes.length > MAX_BEFORE_BYTES)) return change
    before.set(change.paths[i]!, bytes)
  }
  return { ...change, before }
}

/**
 * Whether every path of `change` holds exactly what it held before the
 * write (a rollback put it back byte for byte); false when that is not
 * known (`change.before` absent).
 */
export function restoredExactly(change: Change): boolean {
  const before = change.before
  if (!before || before.size !== change.paths.length) return false
  return change.paths.every(path => {
    const was = before.get(path)
    if (was === undefined) return false
    const now = readIfPresent(path)
    return was === null ? now === null : !!now && was.equals(now)
  })
}

/** A file's bytes; null when it does not exist; undefined when it cannot be read (then it is not known to be what was restored). */
export function readIfPresent(path: string): Buffer | null | undefined {
  try {
    return readFileSync(path)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? null : undefined
  }
}
