import { randomBytes } from 'node:crypto'
import { type Stats, promises as fsp, constants, copyFileSync, utimesSync, lstatSync, readdirSync, readFileSync, openSync, writeSync, fsyncSync, closeSync, renameSync, mkdirSync, chmodSync, statSync, writeFileSync, rmSync } from 'node:fs'
import { dirname, join, basename } from 'node:path'

export interface AtomicWriteOptions {
  /** File mode; defaults to the existing file's mode, else 0o644 (before umask). */
  mode?: number
  /** fsync the file and its directory before returning (durability across a crash). */
  fsync?: boolean
}

/**
 * The sibling temp path an atomic write of `target` uses:
 * `.<name>.<pid>.<8 hex>.<kind>`. Crash recovery finds a dead writer's
 * leftovers with {@link atomicTempTarget}.
 */
export function atomicTempPath(target: string, kind: 'tmp' | 'link' = 'tmp', pid = process.pid): string {
  return join(dirname(target), `.${basename(target)}.${pid}.${randomBytes(4).toString('hex')}.${kind}`)
}

const ATOMIC_TEMP = /^\.(.+)\.(\d+)\.[0-9a-f]{8}\.(?:tmp|link)$/

/** The target name when `fileName` (a directory entry) is a temp file process `pid` made for an atomic write; undefined otherwise. */
export function atomicTempTarget(fileName: string, pid: number): string | undefined {
  const m = ATOMIC_TEMP.exec(fileName)
  return m && Number(m[2]) === pid ? m[1] : undefined
}

const tempPath = (target: string) => atomicTempPath(target)

async function existingMode(target: string): Promise<number | undefined> {
  try {
    return (await fsp.stat(target)).mode & 0o7777
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}

/**
 * Write `data` to `target` atomically: a temp file in the same directory,
 * then rename. Readers see the old content or the new, never a torn file.
 * Keeps the existing file's mode unless `mode` is given.
 */
export async function writeFileAtomic(target: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
  const mode = options.mode ?? (await existingMode(target))
  const tmp = tempPath(target)
  const handle = await fsp.open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode ?? 0o644)
  try {
    await handle.writeFile(data)
    if (mode !== undefined) await handle.chmod(mode)
    if (options.fsync) await handle.sync()
  } catch (error) {
    await handle.close()
    await fsp.rm(tmp, { force: true })
    throw error
  }
  await handle.close()
  try {
    await fsp.rename(tmp, target)
  } catch (error) {
    await fsp.rm(tmp, { force: true })
    throw error
  }
  if (options.fsync) await fsyncDir(dirname(target))
}

/** Synchronous twin of {@link writeFileAtomic}, for exit paths and journals. */
export function writeFileAtomicSync(target: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): void {
  let mode = options.mode
  if (mode === undefined) {
    try { mode = statSync(target).mode & 0o7777 } catch { /* ENOENT: new file */ }
  }
  const tmp = tempPath(target)
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode ?? 0o644)
  try {
    if (typeof data === 'string') writeSync(fd, data)
    else writeSync(fd, data)
    if (options.fsync) fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  if (mode !== undefined) chmodSync(tmp, mode)
  renameSync(tmp, target)
  if (options.fsync) fsyncDirSync(dirname(target))
}

/** fsync a directory so a rename or create inside it survives a crash. */
export async function fsyncDir(dir: string): Promise<void> {
  const handle = await fsp.open(dir, constants.O_RDONLY)
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

export function fsyncDirSync(dir: string): void {
  const fd = openSync(dir, constants.O_RDONLY)
  try { fsyncSync(fd) } finally { closeSync(fd) }
}

/** `mkdir -p` that returns the directories it created, outermost first. */
export function mkdirpTracked(dir: string): string[] {
  const created: string[] = []
  let cur = dir
  const missing: string[] = []
  for (;;) {
    try {
      statSync(cur)
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      missing.push(cur)
      const parent = dirname(cur)
      if (parent === cur) break
      cur = parent
    }
  }
  for (const d of missing.reverse()) {
    try {
      mkdirSync(d)
      created.push(d)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
  }
  return created
}

/** Entry names of `dir`, or `[]` when it does not exist (an empty vault). */
/**
 * Copy a file and give the copy the source's access and modification times.
 * A git index must keep its time: git trusts an entry's cached stat unless
 * the file was written in the same second as the index (racy git), so an
 * index copied with a newer time hides a same-size change made in that second.
 */
export function copyFileKeepingTimes(from: string, to: string): void {
  copyFileSync(from, to)
  const st = statSync(from)
  utimesSync(to, st.atime, st.mtime)
}

export function readdirOrEmpty(dir: string): string[] {
  try {
    return readdirSync(dir)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
}

/** `lstat`, or `undefined` when the path does not exist (ENOENT, or ENOTDIR: an ancestor is a file). */
export function lstatOrUndefined(abs: string): Stats | undefined {
  try {
    return lstatSync(abs)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined
    throw error
  }
}

/** What {@link ensureVault} writes to `<vault>/.gitignore`. */
export const VAULT_GITIGNORE = '# dsh state (sessions, snapshots, proofs): never part of the project\n*\n'

/**
 * Create a vault directory (`mkdir -p`) that ignores itself: a `.gitignore`
 * of `*` inside it, as tool caches do, so `git status` stays clean and an
 * agent's `git add -A` does not commit the suite's state. An existing
 * `.gitignore` is left as it is.
 */
export function ensureVault(vault: string): void {
  mkdirSync(vault, { recursive: true })
  try {
    writeFileSync(join(vault, '.gitignore'), VAULT_GITIGNORE, { flag: 'wx' })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return
    // Created but not written (a full disk): an empty one would stay for good.
    rmSync(join(vault, '.gitignore'), { force: true })
    throw error
  }
}

/**
 * The one line for a file that could not be read, as every command prints
 * it: `<file>: cannot read[ <what>] (<ENOENT | the message>)`.
 */
export function cannotRead(file: string, error: unknown, what?: string): string {
  const why = (error as NodeJS.ErrnoException | undefined)?.code ?? (error instanceof Error ? error.message : String(error))
  return `${file}: cannot read${what ? ` ${what}` : ''} (${why})`
}

/**
 * A text file's content (UTF-8); when it cannot be read, throws
 * `toError(cannotRead(file, error, what))` — the caller's own error class
 * with the one-line message.
 *
 * @example
 * const text = readTextFile(file, 'config', message => new ConfigError(message))
 */
export function readTextFile(file: string, what: string, toError: (message: string) => Error): string {
  try {
    return readFileSync(file, 'utf8')
  } catch (error) {
    throw toError(cannotRead(file, error, what))
  }
}

