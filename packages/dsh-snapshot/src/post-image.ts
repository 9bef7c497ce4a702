import { createHash } from 'node:crypto'
import { lstatSync, readFileSync, readlinkSync } from 'node:fs'
import { join } from 'node:path'
import { checksum } from './journal-format.ts'
import type { CaptureEntry } from './types.ts'

/**
 * What a path holds, as a comparable text: a file's sha-256, a symlink's
 * target's, `dir` for a directory; null when nothing is there. A call's
 * post record holds these, so recovery can tell a file still as the call
 * left it from one written since.
 */
export function pathState(root: string, path: string): string | null {
  const abs = join(root, path)
  try {
    const st = lstatSync(abs)
    if (st.isSymbolicLink()) return `link:${createHash('sha256').update(readlinkSync(abs)).digest('hex')}`
    if (st.isDirectory()) return 'dir'
    return createHash('sha256').update(readFileSync(abs)).digest('hex')
  } catch {
    // ENOENT/ENOTDIR: nothing there.
    return null
  }
}

/** The captured entries a post record covers: one path's content each (not a workspace picture or a tree). */
export function postable(entry: CaptureEntry): boolean {
  return entry.kind === 'file' || entry.kind === 'absent' || entry.kind === 'symlink'
}

/** Whether `path` holds now what `entry` captured (restoring it would change nothing). */
export function holdsCapture(root: string, entry: CaptureEntry): boolean {
  const abs = join(root, entry.path)
  try {
    const st = lstatSync(abs)
    if (entry.kind === 'symlink') return st.isSymbolicLink() && readlinkSync(abs) === entry.target
    if (entry.kind !== 'file' || !st.isFile() || st.size !== entry.size) return false
    return checksum(readFileSync(abs)) === entry.sum
  } catch {
    return entry.kind === 'absent'
  }
}
