import { chmodSync, readlinkSync, renameSync, rmSync, rmdirSync, symlinkSync, unlinkSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { atomicTempPath, fsyncDirSync, isInside, lstatOrUndefined, mkdirpTracked, readdirOrEmpty, realpathNearest, toPosixRelative,
  writeFileAtomicSync } from 'dsh-common'
import { ALWAYS_SKIPPED, readSizedNoFollow } from './capture.ts'
import { compileIgnore, type PathMatcher } from './internal/ignore.ts'
import type { CaptureEntry, RestoreOutcome } from './types.ts'
import { restoreTree } from './git-tree.ts'
import { restoreRefs } from './git-refs.ts'
import { itemsFromPack } from './shell/restore-pack.ts'
import type { ScopeState } from './scopes.ts'

/** What a restore did; paths workspace-relative, a removed directory ends with `/`. */
/** One capture to put back; `bytes()` yields a file's captured content. */
export interface RestoreItem {
  entry: CaptureEntry
  bytes?: () => Buffer
}

export interface RestoreOptions {
  fsync: boolean
  /** Absolute vault path: never written, never deleted. */
  vault?: string
}

function sameBytes(abs: string, data: Buffer): boolean {
  return readSizedNoFollow(abs, data.length)?.equals(data) ?? false
}

/**
 * Put back the captures of one scope, newest capture first so that for every
 * path the oldest capture is what remains. Each file is replaced atomically
 * (temp + rename), so a crash mid-restore never leaves a torn file and a
 * repeated restore is harmless. Failures are collected, never thrown.
 */
function restoreItems(root: string, items: readonly RestoreItem[], options: RestoreOptions): RestoreOutcome {
  const captured = new Set(items.map(i => i.entry.path))
  const createdDirs = new Set<string>()
  // Work newest first, report in capture order.
  const slots: RestoreOutcome[] = items.map(() => ({ restored: [], deleted: [], failed: [] }))
  for (let i = items.length - 1; i >= 0; i--) {
    const { entry, bytes } = items[i]!
    const out = slots[i]!
    const abs = join(root, entry.path)
    try {
      refuseUnsafe(root, abs, options)
      switch (entry.kind) {
        case 'file':
          restoreFile(abs, entry.mode, bytes!(), options, out, entry.path)
          break
        case 'symlink':
          restoreSymlink(abs, entry.target, out, entry.path)
          break
        case 'absent':
          removeTree(abs, entry.path, out)
          for (const d of entry.dirs) createdDirs.add(d)
          break
        case 'dir':
          restoreDir(root, abs, entry, captured, options, out)
          break
        case 'tree':
        case 'manifest':
        case 'refs':
          // Restored by the caller (see restoreScope).
          break
        case 'uncaptured':
          out.failed.push({ path: entry.path, error: entry.why })
          break
      }
    } catch (error) {
      out.failed.push({ path: entry.path, error: errorText(error) })
    }
  }
  const out: RestoreOutcome = {
    restored: slots.flatMap(s => s.restored),
    deleted: slots.flatMap(s => s.deleted),
    failed: slots.flatMap(s => s.failed),
  }
  // Directories the writes created go last, deepest first, and only when empty.
  for (const d of [...createdDirs].sort((a, b) => b.split('/').length - a.split('/').length || b.localeCompare(a))) {
    try {
      rmdirSync(join(root, d))
      out.deleted.push(`${d}/`)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      // ENOENT: never created or already gone; ENOTEMPTY/EEXIST: holds something the scope did not create.
      if (code !== 'ENOENT' && code !== 'ENOTEMPTY' && code !== 'EEXIST') out.failed.push({ path: `${d}/`, error: errorText(error) })
    }
  }
  return out
}

function errorText(error: unknown): string {
  const e = error as NodeJS.ErrnoException
  return e?.code && !String(e.message).startsWith(e.code) ? `${e.code}: ${e.message}` : String(e?.message ?? error)
}

/** A restore must not write through a directory that now leads out of the workspace, nor into the vault. */
function refuseUnsafe(root: string, abs: string, options: RestoreOptions) {
  if (abs === root) return
  const parent = realpathNearest(dirname(abs))
  if (!isInside(root, parent)) throw new Error(`refused: its directory now resolves outside the workspace (${parent})`)
  if (options.vault && isInside(options.vault, abs)) throw new Error('refused: inside the dsh vault')
}

function restoreFile(abs: string, mode: number, data: Buffer, options: RestoreOptions, out: RestoreOutcome, rel: string) {
  const st = lstatOrUndefined(abs)
  if (st?.isFile() && (st.mode & 0o7777) === mode && sameBytes(abs, data)) return
  if (st?.isDirectory()) rmSync(abs, { recursive: true, force: true })
  mkdirpTracked(dirname(abs))
  writeFileAtomicSync(abs, data, { mode, fsync: options.fsync })
  out.restored.push(rel)
}

function restoreSymlink(abs: string, target: string, out: RestoreOutcome, rel: string) {
  const st = lstatOrUndefined(abs)
  if (st?.isSymbolicLink()) {
    try {
      if (readlinkSync(abs) === target) return
    } catch { /* ENOENT: gone meanwhile; recreate below */ }
  }
  if (st?.isDirectory()) rmSync(abs, { recursive: true, force: true })
  mkdirpTracked(dirname(abs))
  // A link made aside and renamed over the path: the swap is atomic and follows nothing.
  const tmp = atomicTempPath(abs, 'link')
  symlinkSync(target, tmp)
  try {
    renameSync(tmp, abs)
  } catch (error) {
    unlinkSync(tmp)
    throw error
  }
  out.restored.push(rel)
}

/** Remove what is at `abs` now (a file, a link, or a directory the scope created). */
function removeTree(abs: string, rel: string, out: RestoreOutcome) {
  const st = lstatOrUndefined(abs)
  if (!st) return
  if (st.isDirectory()) {
    rmSync(abs, { recursive: true, force: true })
    out.deleted.push(`${rel}/`)
  } else {
    unlinkSync(abs)
    out.deleted.push(rel)
  }
}

function restoreDir(root: string, abs: string, entry: Extract<CaptureEntry, { kind: 'dir' }>, captured: Set<string>,
  options: RestoreOptions, out: RestoreOutcome) {
  const st = lstatOrUndefined(abs)
  if (st && !st.isDirectory()) unlinkSync(abs)
  mkdirpTracked(abs)
  if (entry.walk) {
    // What appeared below a captured directory after the capture is removed
    // (a new directory whole), except what the capture skipped and so never knew.
    const vaultRel = options.vault && isInside(root, options.vault) ? [toPosixRelative(root, options.vault)] : []
    removeUncaptured(root, abs, compileIgnore([...ALWAYS_SKIPPED, ...entry.walk.skip], vaultRel), captured, out)
  }
  if (((lstatOrUndefined(abs)?.mode ?? 0) & 0o7777) !== entry.mode) {
    chmodSync(abs, entry.mode)
    out.restored.push(`${entry.path}/`)
  }
}

function removeUncaptured(root: string, dir: string, skip: PathMatcher, captured: Set<string>, out: RestoreOutcome) {
  for (const name of readdirOrEmpty(dir).sort()) {
    const abs = join(dir, name)
    const rel = toPosixRelative(root, abs)
    const isDir = lstatOrUndefined(abs)?.isDirectory() ?? false
    if (skip(rel, isDir)) continue
    if (!captured.has(rel)) {
      removeTree(abs, rel, out)
      continue
    }
    if (isDir) removeUncaptured(root, abs, skip, captured, out)
  }
}

/** Add `from` to `into`, each path once (linear: a shell call may have changed tens of thousands of files). */
export function mergeOutcome(into: RestoreOutcome, from: RestoreOutcome) {
  appendNew(into.restored, from.restored)
  appendNew(into.deleted, from.deleted)
  for (const f of from.failed) into.failed.push(f)
  if (from.git?.length) (into.git ??= []).push(...from.git)
}

function appendNew(into: string[], from: readonly string[]) {
  if (!from.length) return
  const have = new Set(into)
  for (const p of from) {
    if (have.has(p)) continue
    have.add(p)
    into.push(p)
  }
}

/** Make deletions durable: fsync the directories they were in. */
export function syncParents(root: string, deleted: readonly string[]) {
  const dirs = new Set(deleted.map(p => dirname(join(root, p.endsWith('/') ? p.slice(0, -1) : p))))
  for (const d of dirs) {
    try {
      fsyncDirSync(d)
    } catch {
      // ENOENT: the directory itself was removed; its parent is in the set too.
    }
  }
}

/** A payload source: the live journal, or a file read by recovery. */
export interface PayloadSource {
  readPayload(offset: number, size: number, sum: number): Buffer
}

/** Restore one scope's captures (git tree entries through git). */
export async function restoreScope(root: string, scope: ScopeState, source: PayloadSource,
  options: { fsync: boolean; vault?: string; reason?: string }): Promise<RestoreOutcome> {
  const total: RestoreOutcome = { restored: [], deleted: [], failed: [] }
  // Newest first; a git tree entry splits the list, files around it keep their order.
  // Collected newest first, restored in capture order.
  let batch: RestoreItem[] = []
  const flush = () => {
    if (batch.length) mergeOutcome(total, restoreItems(root, batch.reverse(), options))
    batch = []
  }
  for (let i = scope.items.length - 1; i >= 0; i--) {
    const { entry, payloadOffset } = scope.items[i]!
    if (entry.kind === 'tree') {
      flush()
      mergeOutcome(total, await restoreTree(root, entry, options))
      continue
    }
    if (entry.kind === 'refs') {
      flush()
      const r = await restoreRefs(root, entry, options.reason ?? 'no verdict')
      mergeOutcome(total, { restored: [], deleted: [], failed: r.failed, ...(r.done.length ? { git: r.done } : {}) })
      continue
    }
    if (entry.kind === 'manifest') {
      // Spent once the call's changes were captured one by one.
      if (scope.measured) continue
      flush()
      try {
        mergeOutcome(total, itemsFromPack(root, entry, items => restoreItems(root, items, options)))
      } catch (error) {
        total.failed.push({ path: '.', error: `cannot read the shell pre-image ${entry.pack}: ${errorText(error)}` })
      }
      continue
    }
    batch.push(entry.kind === 'file'
      ? { entry, bytes: () => source.readPayload(payloadOffset!, entry.size, entry.sum) }
      : { entry })
  }
  flush()
  return total
}
