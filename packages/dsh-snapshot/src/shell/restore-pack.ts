import { closeSync, openSync, readdirSync, readlinkSync, type Stats } from 'node:fs'
import { join } from 'node:path'
import { lstatOrUndefined } from 'dsh-common'
import { readSizedNoFollow } from '../capture.ts'
import { readPayloadFd } from '../journal-read.ts'
import type { CaptureEntry } from '../types.ts'
import { IgnoreRules } from './ignore-rules.ts'
import { Pack, packSum, type Held } from './pack.ts'

type ManifestEntry = Extract<CaptureEntry, { kind: 'manifest' }>

/** One capture to put back (the shape restoreItems takes). */
export interface PackRestoreItem {
  entry: CaptureEntry
  bytes?: () => Buffer
}

/**
 * The captures that put the workspace back as a `manifest` entry found it:
 * every tracked path compared with the pack replayed to `upto` (a file by
 * size and checksum). Used when a shell call's own changes were never
 * measured — a crash mid-command, a rollback before the measurement.
 * The packed bytes can be read while `run` runs.
 */
export function itemsFromPack<T>(root: string, entry: ManifestEntry, run: (items: PackRestoreItem[]) => T): T {
  const held = Pack.replay(entry.pack, entry.upto)
  const fd = openSync(entry.pack, 'r')
  try {
    const rules = new IgnoreRules(root, entry.skip)
    const items: PackRestoreItem[] = []
    const created: string[] = []
    const seen = new Set<string>([''])
    const visit = (dir: string) => {
      let names: string[]
      try {
        names = readdirSync(dir ? join(root, dir) : root)
      } catch {
        // Gone or not a directory: its pack entries are restored below.
        return
      }
      for (const name of names.sort()) {
        const rel = dir ? `${dir}/${name}` : name
        const st = lstatOrUndefined(join(root, rel))
        if (!st || rules.ignores(rel, st.isDirectory())) continue
        seen.add(rel)
        const before = held.get(rel)
        if (!before) {
          // Made after the snapshot: removed (a directory whole).
          created.push(rel)
          continue
        }
        if (!matches(join(root, rel), st, before)) items.push(itemOf(rel, before, fd, entry.pack))
        if (st.isDirectory() && before.k === 'dir') visit(rel)
      }
    }
    visit('')
    for (const [rel, before] of held) if (!seen.has(rel)) items.push(itemOf(rel, before, fd, entry.pack))
    // Directories first, so that restoring newest-first recreates files before fixing their directory's mode.
    items.sort((a, b) => Number(b.entry.kind === 'dir') - Number(a.entry.kind === 'dir'))
    for (const rel of created) items.push({ entry: { kind: 'absent', path: rel, dirs: [] } })
    return run(items)
  } finally {
    closeSync(fd)
  }
}

function itemOf(rel: string, before: Held, fd: number, file: string): PackRestoreItem {
  switch (before.k) {
    case 'file':
      return { entry: { kind: 'file', path: rel, mode: before.mode, size: before.size, sum: before.sum },
        bytes: () => readPayloadFd(fd, file, before.offset!, before.size, before.sum) }
    case 'big':
      return { entry: { kind: 'uncaptured', path: rel, why: 'its earlier bytes were not kept: over the shell tracking size cap' } }
    case 'symlink':
      return { entry: { kind: 'symlink', path: rel, target: before.target } }
    case 'dir':
      return { entry: { kind: 'dir', path: rel, mode: before.mode } }
  }
}

function matches(abs: string, st: Stats, before: Held): boolean {
  if (st.isDirectory()) return before.k === 'dir' && (st.mode & 0o7777) === before.mode
  if (st.isSymbolicLink()) {
    try {
      return before.k === 'symlink' && readlinkSync(abs) === before.target
    } catch {
      return false
    }
  }
  if (!st.isFile()) return false
  if (before.k === 'big') return (st.mode & 0o7777) === before.mode && st.size === before.size
  if (before.k !== 'file' || (st.mode & 0o7777) !== before.mode || st.size !== before.size) return false
  const bytes = readSizedNoFollow(abs, before.size)
  return bytes !== undefined && bytes.length === before.size && packSum(bytes) === before.sum
}

