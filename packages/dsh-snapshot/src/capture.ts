import { closeSync, constants, fstatSync, openSync, readSync, readlinkSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { isInside, lstatOrUndefined, readdirOrEmpty, toPosixRelative } from 'dsh-common'
import { SnapshotError } from './errors.ts'
import { checksum } from './journal-format.ts'
import type { PathMatcher } from './internal/ignore.ts'
import type { CaptureEntry } from './types.ts'

/** A path's state as read now: its entry, and a file's bytes. */
export interface ReadState {
  entry: CaptureEntry
  payload?: Buffer
}

/** Patterns `captureDir` always skips, at any depth (before the configured ones, so `!` cannot re-include them). */
export const ALWAYS_SKIPPED = ['.git', 'node_modules'] as const

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} bytes`
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`
  return `${(n / 1024 / 1024).toFixed(1)} MiB`
}


/** Ancestors of `abs` below `root` that do not exist, outermost first (workspace-relative). */
function missingDirs(root: string, abs: string): string[] {
  const out: string[] = []
  for (let dir = dirname(abs); dir !== root && isInside(root, dir); dir = dirname(dir)) {
    if (lstatOrUndefined(dir)) break
    out.push(toPosixRelative(root, dir))
  }
  return out.reverse()
}

/**
 * The whole content of an open file, read from offset 0. `statSize` is a
 * hint: one byte more is asked for, so a file that grew meanwhile is read
 * whole. `check(total)` runs after each read (to stop at a size cap).
 */
export function readFdWhole(fd: number, statSize: number, check?: (total: number) => void): Buffer {
  const chunks: Buffer[] = []
  let total = 0
  for (;;) {
    const want = total < statSize ? statSize - total + 1 : 65536
    const buf = Buffer.allocUnsafe(want)
    const n = readSync(fd, buf, 0, want, total)
    if (n === 0) break
    total += n
    check?.(total)
    chunks.push(n === want ? buf : buf.subarray(0, n))
    if (n < want) break
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total)
}

/**
 * The bytes of the file at `abs` (a symlink is not followed), or undefined
 * when it cannot be opened (ELOOP, ENOENT, EACCES) or is not `size` bytes
 * long: for "is it still the same file?", where each of those means no.
 */
export function readSizedNoFollow(abs: string, size: number): Buffer | undefined {
  let fd: number
  try {
    fd = openSync(abs, constants.O_RDONLY | constants.O_NOFOLLOW)
  } catch {
    return undefined
  }
  try {
    return fstatSync(fd).size === size ? readFdWhole(fd, size) : undefined
  } finally {
    closeSync(fd)
  }
}

function readFileNoFollow(abs: string, rel: string, maxBytes: number): { data: Buffer; mode: number } | 'symlink' {
  let fd: number
  try {
    fd = openSync(abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch (error) {
    // ELOOP: it became a symlink between lstat and open.
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') return 'symlink'
    throw error
  }
  try {
    const st = fstatSync(fd)
    if (!st.isFile()) throw new SnapshotError('unsupported', `${rel} is not a regular file`)
    return { data: readFdWhole(fd, st.size, total => { if (total > maxBytes) throw tooLarge(rel, total, maxBytes) }), mode: st.mode & 0o7777 }
  } finally {
    closeSync(fd)
  }
}

function tooLarge(rel: string, size: number, max: number): SnapshotError {
  return new SnapshotError('too-large', `${rel} is ${formatBytes(size)}, over the per-file snapshot cap of ${formatBytes(max)} (dsh-snapshot maxFileBytes)`)
}

/**
 * Read what is at `abs` now, without following a symlink at the path
 * itself. A directory is returned as a `dir` entry (its contents are the
 * caller's business).
 * @throws SnapshotError for a file over `maxFileBytes` or a special file.
 */
export function readState(root: string, abs: string, maxFileBytes: number): ReadState {
  const rel = toPosixRelative(root, abs)
  const st = lstatOrUndefined(abs)
  if (!st) return { entry: { kind: 'absent', path: rel, dirs: missingDirs(root, abs) } }
  if (st.isSymbolicLink()) return { entry: { kind: 'symlink', path: rel, target: readlinkSync(abs) } }
  if (st.isDirectory()) return { entry: { kind: 'dir', path: rel || '.', mode: st.mode & 0o7777 } }
  if (!st.isFile()) throw new SnapshotError('unsupported', `${rel} is not a regular file, symlink or directory; it cannot be snapshotted`)
  if (st.size > maxFileBytes) throw tooLarge(rel, st.size, maxFileBytes)
  const read = readFileNoFollow(abs, rel, maxFileBytes)
  if (read === 'symlink') return { entry: { kind: 'symlink', path: rel, target: readlinkSync(abs) } }
  return { entry: { kind: 'file', path: rel, mode: read.mode, size: read.data.length, sum: checksum(read.data) }, payload: read.data }
}

export interface WalkResult {
  /** Directories below the walked one (not itself), parents first. */
  dirs: string[]
  /** Files and symlinks, in walk order. */
  leaves: string[]
}

/**
 * Every directory, file and symlink below `absDir` (absolute paths),
 * without following symlinks and without entering skipped names.
 */
export function walk(root: string, absDir: string, skip: PathMatcher): WalkResult {
  const out: WalkResult = { dirs: [], leaves: [] }
  const visit = (dir: string) => {
    for (const name of readdirOrEmpty(dir).sort()) {
      const abs = join(dir, name)
      const st = lstatOrUndefined(abs)
      if (!st || skip(toPosixRelative(root, abs), st.isDirectory())) continue
      if (st.isDirectory()) {
        out.dirs.push(abs)
        visit(abs)
      } else {
        out.leaves.push(abs)
      }
    }
  }
  visit(absDir)
  return out
}
