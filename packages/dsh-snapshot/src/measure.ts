import { join } from 'node:path'
import { changedPathsByKind, lstatOrUndefined, scanFileStates, type FileStates } from 'dsh-common'
import type { MeasuredShell, PreImages } from './snapshots.ts'

/** What a call changed, before it is addressed to a session and a call (see `CallChange`). */
export interface Measured {
  created: string[]
  modified: string[]
  deleted: string[]
  before?: ReadonlyMap<string, Buffer | null>
}

/**
 * A writer's change: every path it named, sorted by what is there now
 * against what its capture found (`images`); the pre-images when each was
 * kept as bytes.
 */
export function writeChange(root: string, images: PreImages): Measured {
  const out: Measured = { created: [], modified: [], deleted: [] }
  const before = new Map<string, Buffer | null>()
  let known = true
  for (const [path, image] of [...images].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const now = lstatOrUndefined(join(root, path)) !== undefined
    if (!now) out.deleted.push(path)
    else if (image === null) out.created.push(path)
    else out.modified.push(path)
    if (image === undefined) known = false
    else before.set(path, image)
  }
  return known ? { ...out, before } : out
}

/** A tracked shell call's change as the tracker measured it (each list sorted; the pre-images when every one was kept). */
export function shellChange(measured: MeasuredShell): Measured {
  const sorted = (xs: readonly string[]) => [...xs].sort()
  const out: Measured = { created: sorted(measured.created), modified: sorted(measured.modified), deleted: sorted(measured.deleted) }
  const before = measured.before
  const complete = before && [...out.created, ...out.modified, ...out.deleted].every(p => before.has(p))
  return complete ? { ...out, before } : out
}

/** What changed since `before` (`scanFileStates` before the call), by file times and sizes: a shell call no tracker measures (`shell: 'git'` or `'off'`). */
export function scannedChange(root: string, before: FileStates): Measured {
  return changedPathsByKind(before, scanFileStates(root))
}
