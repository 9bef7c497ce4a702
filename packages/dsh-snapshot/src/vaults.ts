import { ensureVault } from 'dsh-common'
import type { Config } from './config.ts'
import { snapshotDir } from './layout.ts'
import { liveInstances, type JournalOwner } from './owner.ts'
import { listJournals, readJournalIfThere, resolveJournal, writerState, type RecoveryReport } from './recover.ts'
import { Snapshots } from './snapshots.ts'
import type { SnapshotsOptions } from './types.ts'

/** What vault recovery needs from the guard. */
export interface VaultHost {
  readonly settings: Config
  readonly owner: JournalOwner
  /** The journals of this instance's sessions, by session id: adopted ones are added. */
  readonly sessions: Map<string, Snapshots>
  recovered(report: RecoveryReport): void
  info(text: string): void
  warn(text: string): void
}

/**
 * Crash recovery, run when a vault is first used (plugin start, a new
 * session): journals whose writer died are resolved, and those a disposed
 * instance of this process left open are adopted. A call only waits for it.
 */
export class Vaults {
  private readonly _ready = new Map<string, Promise<void>>()

  constructor(private readonly host: VaultHost) {}

  /** Once per vault: resolve and adopt; resolves when done (a failure is a warning). */
  prepare(vault: string): Promise<void> {
    let ready = this._ready.get(vault)
    if (!ready) {
      ready = this.recover(vault).catch(error => {
        this.host.warn(`snapshot recovery in ${snapshotDir(vault)} failed: ${(error as Error).message}`)
      })
      this._ready.set(vault, ready)
    }
    return ready
  }

  /** Resolve the vault's journals (again, when the workspace lock was left by a process that died while this one ran). */
  async recover(vault: string): Promise<void> {
    ensureVault(vault)
    const { settings, owner, sessions } = this.host
    const report: RecoveryReport = { dir: snapshotDir(vault), journals: [], skipped: [] }
    for (const file of listJournals(vault).reverse()) {
      const parsed = readJournalIfThere(file)
      if (!parsed) continue
      const writer = parsed.header?.owner
      const state = writerState(parsed)
      if (writer && state === 'this-process' && !liveInstances.has(writer.instance) && !sessions.has(parsed.header!.sessionId)) {
        const snaps = Snapshots.adopt(parsed, this.options(vault), owner)
        sessions.set(snaps.sessionId, snaps)
        if (snaps.openScopes) this.host.info(`adopted ${snaps.openScopes} open snapshot scope(s) of session ${snaps.sessionId} left by a reloaded instance`)
        continue
      }
      if (state !== 'dead' || !settings.recover) continue
      report.journals.push(await resolveJournal(parsed, settings.fsync !== 'off'))
    }
    if (report.journals.length) this.host.recovered(report)
  }

  /** The capture settings a session's journal in `vault` takes. */
  options(vault: string): Omit<SnapshotsOptions, 'root' | 'sessionId'> {
    const { fsync, maxFileBytes, maxDirBytes, exclude, ignore, elsewhere, keepBytes, keepDays } = this.host.settings
    return { vault, fsync, maxFileBytes, maxDirBytes, exclude, ignore, elsewhere, keepBytes, keepDays }
  }
}
