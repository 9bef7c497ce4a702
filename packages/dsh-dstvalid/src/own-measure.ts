import { readFileSync, statSync } from 'node:fs'
import { changedPaths, scanFileStates, type FileStates } from 'dsh-common'
import { changeOf, MAX_BEFORE_BYTES } from './call-change.ts'
import type { Change } from './types.ts'

/** The notice given once per session when this plugin measures calls itself. */
export const OWN_MEASURE_NOTICE = 'dsh-snapshot is not loaded: dsh-dstvalid reads what each write replaces and compares file times and sizes around each shell call itself, and nothing it judges worse can be rolled back'

/** What this plugin measured before a call itself, where dsh-snapshot is not loaded. */
export type OwnMeasure = { kind: 'write'; before?: Map<string, Buffer | null> } | { kind: 'shell'; root: string; states: FileStates }

/** Before the call: a write's content (undefined when one path cannot be kept), or the workspace's file times and sizes. */
export function measureOwn(root: string, write: Change | undefined): OwnMeasure {
  if (!write) return { kind: 'shell', root, states: scanFileStates(root) }
  const before = readContent(write.paths)
  return before ? { kind: 'write', before } : { kind: 'write' }
}

/** The write with its content before, as measured here. */
export function ownBefore(write: Change, own: OwnMeasure): Change {
  return own.kind === 'write' && own.before ? { ...write, before: own.before } : write
}

/** What the call changed, as measured here: the write's paths, or the files whose times or sizes changed. */
export function ownChange(write: Change | undefined, own: OwnMeasure): Change {
  if (own.kind === 'write') return write ? ownBefore(write, own) : { paths: [], files: [] }
  return changeOf(own.root, changedPaths(own.states, scanFileStates(own.root)))
}

/**
 * What `paths` hold now (bytes; `null`: absent); undefined when one cannot
 * be kept (a directory, unreadable, larger than {@link MAX_BEFORE_BYTES}).
 */
function readContent(paths: readonly string[]): Map<string, Buffer | null> | undefined {
  const out = new Map<string, Buffer | null>()
  for (const path of paths) {
    try {
      const s = statSync(path)
      if (!s.isFile() || s.size > MAX_BEFORE_BYTES) return undefined
      out.set(path, readFileSync(path))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return undefined
      out.set(path, null)
    }
  }
  return out
}
