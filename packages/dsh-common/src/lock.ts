import { randomBytes } from 'node:crypto'
import { closeSync, linkSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { currentProcess, processState, type ProcessIdentity } from './liveness.ts'

/** A file lock could not be taken in time. `code` is stable. */
export class LockTimeoutError extends Error {
  readonly code = 'LOCK_TIMEOUT'
  constructor(readonly lockPath: string, readonly waitedMs: number, readonly holder?: LockOwner) {
    super(`could not lock ${lockPath} within ${waitedMs} ms${holder ? ` (held by pid ${holder.pid} on ${holder.host})` : ''}`)
  }
}

/** What a lock file holds: who took it (a process identity, so a reused pid is not mistaken for the holder) and a token unique to that acquisition. */
export interface LockOwner extends ProcessIdentity {
  time: number
  token: string
  /** Who inside the process holds it (e.g. a session id), for messages. */
  label?: string
}

export interface FileLockOptions {
  /** A lock older than this is presumed abandoned and broken (default 10 000 ms). Holders must finish well within it. */
  staleMs?: number
  /** Give up after this long with {@link LockTimeoutError} (default 30 000 ms). */
  timeoutMs?: number
  /** Upper bound of the randomised wait between attempts (default 8 ms). */
  retryMs?: number
  /**
   * After releasing a lock that others are waiting for, this process holds
   * back from re-taking it for this long, so a process appending back to
   * back cannot starve the others (default 5 ms).
   */
  courtesyMs?: number
  /** Stored in the lock file with the owner (who holds it, for other waiters' messages). */
  label?: string
  /** Called once, with the holder, when the lock is found held by someone else. */
  onWait?: (holder: LockOwner | undefined) => void
}

/** A held lock; `release` is idempotent. */
export interface FileLock {
  readonly path: string
  readonly owner: LockOwner
  release(): void
}

/** Per lock path: do not re-take it before this time (another process is waiting). */
const courtesyUntil = new Map<string, number>()

/**
 * Take an exclusive cross-process lock: `lockPath` is created with O_EXCL
 * and holds a {@link LockOwner}. A lock whose owner is a dead process on
 * this host (by pid, start time and boot id), or that is older than `staleMs`, is broken: it is renamed
 * aside (atomic, so only one waiter wins), and if the renamed file turns
 * out to be a live lock taken in between, it is linked back.
 *
 * Limit: between a waiter's staleness check and its rename, a *different*
 * waiter may break the same stale lock and take a new one; the rename then
 * moves that new lock aside and the link-back restores it — unless a third
 * waiter took the lock in that window too. That needs three processes
 * racing on an abandoned lock within microseconds; callers whose data must
 * survive even that (the proof chain) also re-check their on-disk tail.
 */
export async function acquireFileLock(lockPath: string, options: FileLockOptions = {}): Promise<FileLock> {
  const staleMs = options.staleMs ?? 10_000
  const timeoutMs = options.timeoutMs ?? 30_000
  const retryMs = Math.max(1, options.retryMs ?? 8)
  const started = Date.now()
  const hold = (courtesyUntil.get(lockPath) ?? 0) - started
  if (hold > 0) await sleep(hold)
  courtesyUntil.delete(lockPath)
  let marker: string | undefined
  try {
    for (let attempt = 0; ; attempt++) {
      const lock = tryAcquire(lockPath, options.courtesyMs ?? 5, options.label)
      if (lock) return lock
      const holder = readOwner(lockPath)
      if (!marker && holder && !isStale(lockPath, holder, staleMs)) options.onWait?.(holder)
      // Tell the holder someone waits, so it steps aside after its release.
      marker ??= markWaiting(lockPath)
      if (isStale(lockPath, holder, staleMs)) {
        breakLock(lockPath, staleMs)
        continue
      }
      const waited = Date.now() - started
      if (waited >= timeoutMs) throw new LockTimeoutError(lockPath, waited, holder)
      await sleep(Math.min(retryMs, 1 + attempt / 4) * (0.5 + Math.random()))
    }
  } finally {
    if (marker) rmSync(marker, { force: true })
  }
}

/** Run `fn` while holding the lock; the lock is released however `fn` ends. */
export async function withFileLock<T>(lockPath: string, fn: () => T | Promise<T>, options: FileLockOptions = {}): Promise<T> {
  const lock = await acquireFileLock(lockPath, options)
  try {
    return await fn()
  } finally {
    lock.release()
  }
}

const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))

const waitingPrefix = (lockPath: string) => `${basename(lockPath)}.waiting-`

function markWaiting(lockPath: string): string {
  const marker = `${lockPath}.waiting-${process.pid}-${randomBytes(4).toString('hex')}`
  closeSync(openSync(marker, 'w'))
  return marker
}

/** Whether another process left a waiting marker (markers of dead processes are removed). */
function othersWaiting(lockPath: string): boolean {
  const prefix = waitingPrefix(lockPath)
  let names: string[]
  try {
    names = readdirSync(dirname(lockPath))
  } catch {
    return false // the directory is gone: nobody can be waiting in it
  }
  let waiting = false
  const me = currentProcess()
  for (const name of names) {
    if (!name.startsWith(prefix)) continue
    const pid = Number(name.slice(prefix.length).split('-')[0])
    if (pid === process.pid) continue
    if (processState({ pid, host: me.host }) === 'alive') waiting = true
    else rmSync(join(dirname(lockPath), name), { force: true })
  }
  return waiting
}

function tryAcquire(lockPath: string, courtesyMs: number, label?: string): FileLock | undefined {
  const owner: LockOwner = { ...currentProcess(), time: Date.now(), token: randomBytes(8).toString('hex'), ...(label !== undefined ? { label } : {}) }
  let fd: number
  try {
    fd = openSync(lockPath, 'wx', 0o644)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined
    throw error
  }
  try {
    writeSync(fd, JSON.stringify(owner))
  } finally {
    closeSync(fd)
  }
  let released = false
  return {
    path: lockPath,
    owner,
    release() {
      if (released) return
      released = true
      // Only remove the lock if it is still ours (it may have been broken as stale).
      if (readOwner(lockPath)?.token !== owner.token) return
      try {
        unlinkSync(lockPath)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      }
      if (courtesyMs > 0 && othersWaiting(lockPath)) courtesyUntil.set(lockPath, Date.now() + courtesyMs)
    },
  }
}

/** The owner recorded in a lock file; undefined when it is gone or still being written. */
export function readLockOwner(lockPath: string): LockOwner | undefined {
  return readOwner(lockPath)
}

function readOwner(lockPath: string): LockOwner | undefined {
  try {
    const parsed = JSON.parse(readFileSync(lockPath, 'utf8')) as Partial<LockOwner>
    if (typeof parsed.pid === 'number' && typeof parsed.token === 'string') return parsed as LockOwner
  } catch {
    // ENOENT (released meanwhile) or an empty/partial file (its owner is between open and write).
  }
  return undefined
}

function isStale(lockPath: string, holder: LockOwner | undefined, staleMs: number): boolean {
  if (holder && processState(holder) === 'dead') return true
  try {
    return Date.now() - statSync(lockPath).mtimeMs > staleMs
  } catch {
    // ENOENT: released meanwhile; the next attempt will take it.
    return false
  }
}

function breakLock(lockPath: string, staleMs: number) {
  const aside = `${lockPath}.stale-${process.pid}-${randomBytes(4).toString('hex')}`
  try {
    renameSync(lockPath, aside)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return // another waiter broke it first
    throw error
  }
  if (!isStale(aside, readOwner(aside), staleMs)) {
    // We moved a lock taken after our check: put it back unless a newer one exists.
    try {
      linkSync(aside, lockPath)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
  }
  try {
    unlinkSync(aside)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
}
