import { join } from 'node:path'
import { changedPathsByKind, lstatOrUndefined, scanFileStates, type FileStates } from 'dsh-common'
import type { CaptureEntry } from './types.ts'
import type { Difference, ShellChanges } from './shell/tracker.ts'

/** A write's pre-images as its capture read them, by workspace-relative path (`null`: nothing there; undefined: not kept as bytes). */
export type PreImages = Map<string, Buffer | null | undefined>

/** What a tracked shell call changed, and each changed path's earlier bytes (absent when one was not kept). */
export type MeasuredShell = ShellChanges & { before?: Map<string, Buffer | null> }

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

/** The captures that undo measured differences, and the file changes they are. */
export function capturesOf(diffs: readonly Difference[], bytesOf: (held: Difference['before'] & object) => Buffer): { items: { entry: CaptureEntry; payload?: Buffer }[]; changes: ShellChanges; before?: Map<string, Buffer | null> } {
  const changes: ShellChanges = { created: [], modified: [], deleted: [] }
  let before: Map<string, Buffer | null> | undefined = new Map()
  const createdDirs = new Set(diffs.filter(d => !d.before && d.now?.k === 'dir').map(d => d.path))
  const isLeaf = (k: string | undefined) => k === 'file' || k === 'big' || k === 'symlink'
  // Directories below which something was created (a new directory, a new leaf): such a directory is removed with it, not on its own.
  const holders = new Set<string>()
  for (const d of diffs) {
    if (!(createdDirs.has(d.path) || isLeaf(d.now?.k))) continue
    for (let i = d.path.lastIndexOf('/'); i > 0; i = d.path.lastIndexOf('/', i - 1)) {
      const anc = d.path.slice(0, i)
      if (holders.has(anc)) break
      holders.add(anc)
    }
  }
  const dirItems: { entry: CaptureEntry; payload?: Buffer }[] = []
  const items: { entry: CaptureEntry; payload?: Buffer }[] = []
  for (const d of diffs) {
    const wasLeaf = isLeaf(d.before?.k)
    const isNowLeaf = isLeaf(d.now?.k)
    if (wasLeaf && isNowLeaf) changes.modified.push(d.path)
    else if (wasLeaf) changes.deleted.push(d.path)
    else if (isNowLeaf) changes.created.push(d.path)
    const held = d.before
    if (!held) {
      if (isNowLeaf) before?.set(d.path, null)
      if (d.now?.k === 'dir' && holders.has(d.path)) continue
      const dirs: string[] = []
      for (let i = d.path.indexOf('/'); i !== -1; i = d.path.indexOf('/', i + 1)) {
        const anc = d.path.slice(0, i)
        if (createdDirs.has(anc)) dirs.push(anc)
      }
      items.push({ entry: { kind: 'absent', path: d.path, dirs } })
      continue
    }
    switch (held.k) {
      case 'file': {
        const payload = bytesOf(held)
        before?.set(d.path, payload)
        items.push({ entry: { kind: 'file', path: d.path, mode: held.mode, size: held.size, sum: held.sum }, payload })
        break
      }
      case 'big':
        before = undefined
        items.push({ entry: { kind: 'uncaptured', path: d.path,
          why: 'its earlier bytes were not kept: over the shell tracking size cap (dsh-snapshot shellMaxFileBytes)' } })
        break
      case 'symlink':
        before = undefined
        items.push({ entry: { kind: 'symlink', path: d.path, target: held.target } })
        break
      case 'dir':
        dirItems.push({ entry: { kind: 'dir', path: d.path, mode: held.mode } })
        break
    }
  }
  // Directories first: restored newest first, they come last, after the files in them.
  return { items: [...dirItems, ...items], changes, ...(before ? { before } : {}) }
}
