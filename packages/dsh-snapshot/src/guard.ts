import { resolve } from 'node:path'
import { definedOnly } from 'dsh-common'
import type { Session } from 'dsh-session'
import { adoptOwn, type CallGuard, type GuardHost, type OpenCall } from './call.ts'
import type { Config } from './config.ts'
import { SnapshotError } from './errors.ts'
import { gitRestored, listPaths, nothingToRestore } from './messages.ts'
import { WrittenBy } from './outside.ts'
import { currentOwner, liveInstances, type JournalOwner } from './owner.ts'
import { Snapshots } from './snapshots.ts'
import type { CommitRequest, RollbackRequest, RollbackResult } from './types.ts'
import { Vaults } from './vaults.ts'
import { unlockIfIdle } from './workspace-lock.ts'

/**
 * Snapshots for every session of one plugin instance: recovers vaults at
 * start, holds what each call's path (`guardCall`, `callReturned` in
 * `call.ts`) needs, answers verdicts. No Cordis in here; `index.ts` wires
 * it to events.
 */
export class SnapshotGuard implements CallGuard {
  readonly owner: JournalOwner = currentOwner()
  readonly vaults: Vaults
  readonly written = new WrittenBy()
  readonly running = new Map<string, OpenCall>()
  readonly gitNotes = new Map<string, string>()
  readonly warned = new Set<string>()
  private readonly _sessions = new Map<string, Snapshots>()
  disposed = false

  constructor(readonly settings: Config, readonly host: GuardHost) {
    liveInstances.add(this.owner.instance)
    this.vaults = new Vaults({ settings, owner: this.owner, sessions: this._sessions, recovered: r => host.recovered(r), info: t => host.info(t),
      warn: t => host.warn(t) })
  }

  vaultOf(session: Session): string {
    return this.settings.vault ? resolve(this.settings.vault) : session.vault
  }

  /** Recover a vault now (plugin start, a new session), so a call only waits for it. */
  prepareVault(vault: string): Promise<void> {
    return this.vaults.prepare(vault)
  }

  /** The session's snapshots (its vault recovered first). */
  async snapshotsFor(session: Session): Promise<Snapshots> {
    const vault = this.vaultOf(session)
    await this.vaults.prepare(vault)
    let snaps = this._sessions.get(session.id)
    if (!snaps) {
      snaps = new Snapshots({ root: session.cwd, sessionId: session.id, ...this.vaults.options(vault) }, this.owner)
      this._sessions.set(session.id, snaps)
    }
    return snaps
  }

  async rollback(req: RollbackRequest): Promise<RollbackResult> {
    const selector = definedOnly({ callId: req.callId, step: req.step, callIds: req.callIds })
    const snaps = this._sessions.get(req.sessionId)
    if (!snaps) return { matched: false, restored: [], deleted: [], failed: [], message: nothingToRestore(selector, req.sessionId) }
    const result = await snaps.rollback(selector, req.reason)
    if (result.git?.length && req.callId !== undefined && this.running.has(req.callId)) this.gitNotes.set(req.callId, gitRestored(result.git))
    // What the restore wrote is the workspace's picture again, not a change out of band.
    if (snaps.tracking) await adoptOwn(this, snaps)
    unlockIfIdle(snaps)
    if (result.matched) {
      this.host.restored({ ...selector, sessionId: req.sessionId, reason: req.reason, restored: result.restored, deleted: result.deleted,
        failed: result.failed })
    }
    return result
  }

  commit(req: CommitRequest): void {
    const snaps = this._sessions.get(req.sessionId)
    if (!snaps) return
    try {
      snaps.commit(definedOnly({ callId: req.callId, step: req.step, callIds: req.callIds }))
    } catch (error) {
      if (!(error instanceof SnapshotError)) throw error
      this.host.warn(`snapshot commit for session ${req.sessionId} failed: ${error.message}`)
    }
    // A step's verdict (scope: 'step') comes after its calls returned.
    unlockIfIdle(snaps)
  }

  /**
   * At a turn's end a scope still open had a judge that never answered; the
   * files stay as they are (committed) so captures never pile up, and the
   * miss is logged.
   */
  endTurn(sessionId: string, turn: number): void {
    const snaps = this._sessions.get(sessionId)
    if (!snaps?.openScopes) return
    const closed = snaps.commit({})
    unlockIfIdle(snaps)
    const calls = closed.flatMap(s => s.callIds)
    this.host.warn(`session ${sessionId} turn ${turn}: ${closed.length} snapshot scope(s) got no verdict (calls ${listPaths(calls)}); kept the files as they are`)
  }

  /** The snapshots of a session, if it captured anything (for tests and tools). */
  get(sessionId: string): Snapshots | undefined {
    return this._sessions.get(sessionId)
  }

  dispose(): void {
    if (this.disposed) return
    this.disposed = true
    // A session with scopes still open keeps its lock: the next instance in this process adopts both.
    for (const snaps of this._sessions.values()) unlockIfIdle(snaps)
    for (const snaps of this._sessions.values()) {
      try {
        snaps.dispose()
      } catch (error) {
        this.host.warn(`closing snapshots of session ${snaps.sessionId}: ${(error as Error).message}`)
      }
    }
    this._sessions.clear()
    liveInstances.delete(this.owner.instance)
  }
}
