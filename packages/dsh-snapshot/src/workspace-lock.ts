import { join } from 'node:path'
import { acquireFileLock, ensureVault, processState, readLockOwner, type FileLock, type LockOwner } from 'dsh-common'
import type { Snapshots } from './snapshots.ts'

/**
 * Take the workspace lock for a session about to capture (kept until it
 * has no scope open): another session's write is judged and settled
 * before this one runs, so a rollback never takes what the other was told
 * was kept. A lock left by a dead process is broken, and `orphaned` (that
 * process's journals resolved) runs first. Returns the note for the model
 * when the call had to wait.
 */
export async function lockWorkspace(snaps: Snapshots, waitMs: number, orphaned: () => Promise<void>,
  info: (text: string) => void): Promise<string | undefined> {
  const path = join(snaps.vault, 'workspace.lock')
  const key = lockKey(snaps)
  if (heldLocks.has(key)) return undefined
  ensureVault(snaps.vault)
  const before = readLockOwner(path)
  const dead = before && processState(before) === 'dead'
  let holder: LockOwner | undefined
  const started = Date.now()
  try {
    heldLocks.set(key, await acquireFileLock(path, {
      staleMs: Number.POSITIVE_INFINITY, timeoutMs: waitMs, retryMs: 100, label: snaps.sessionId,
      onWait: h => { holder = h },
    }))
  } catch (error) {
    const h = (error as { holder?: LockOwner }).holder ?? holder
    throw new Error(`another dsh session (${whoHolds(h)}) has been writing in this workspace for over ${Math.round(waitMs / 1000)} s`)
  }
  if (dead) await orphaned()
  if (!holder) return undefined
  const s = ((Date.now() - started) / 1000).toFixed(1)
  info(`session ${snaps.sessionId} waited ${s} s for ${whoHolds(holder)} to finish its write`)
  return `note: another dsh session (${whoHolds(holder)}) is writing in this workspace too; this call waited ${s} s for its write to be judged (writes of two sessions are taken in turn, and neither session's rollback touches the other's kept files)`
}

/** Release the session's workspace lock once it has no scope open. */
export function unlockIfIdle(snaps: Snapshots): void {
  if (snaps.openScopes) return
  const key = lockKey(snaps)
  heldLocks.get(key)?.release()
  heldLocks.delete(key)
}

/**
 * Workspace locks held by sessions of this process, by lock file and
 * session, shared across module copies (a hot reload re-imports the module)
 * so a reloaded instance adopts a session's lock with its open scopes.
 */
const LOCKS_KEY = Symbol.for('dsh-snapshot.workspace-locks')
const lockRegistry = globalThis as { [LOCKS_KEY]?: Map<string, FileLock> }
const heldLocks: Map<string, FileLock> = lockRegistry[LOCKS_KEY] ??= new Map()

function lockKey(snaps: Snapshots): string {
  return `${join(snaps.vault, 'workspace.lock')}\u0000${snaps.sessionId}`
}

function whoHolds(holder: LockOwner | undefined): string {
  if (!holder) return 'its holder is unknown'
  return `${holder.label ? `session ${holder.label}, ` : ''}pid ${holder.pid}`
}
