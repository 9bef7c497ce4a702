import type { Context } from '@deepseek-ai/cordis'
import { resolve } from 'node:path'
import type { ToolExecution } from 'dsh-tools'
import type {} from 'dsh-session'
import type {} from 'dsh-tools'
import { callReturned, guardCall } from './call.ts'
import { SnapshotGuard } from './guard.ts'
import type { Config } from './config.ts'
import { formatRecovery, type RecoveryReport } from './recover.ts'
import type { CallChange, CommitRequest, OutsideChanges, RestoredInfo, RollbackRequest, RollbackResult } from './types.ts'

declare module '@deepseek-ai/cordis' {
  interface Events {
    /**
     * Put back the open scope(s) a request names (callIds: a group, newest first; else callId, else step, else
     * all of the session); `matched: false` with a `nothing to restore:` message when none. @mode serial
     */
    'snapshot/rollback'(req: RollbackRequest): Promise<RollbackResult | undefined>
    /** Close the scope(s) a request names, keeping the files; their captures are dropped. @mode emit */
    'snapshot/commit'(req: CommitRequest): void
    /** A rollback that matched has run; what it restored, deleted, and could not restore. @mode emit */
    'snapshot/restored'(info: RestoredInfo): void
    /** Journals left by a dead process were resolved (at start-up, per vault). @mode emit */
    'snapshot/recovered'(report: RecoveryReport): void
    /**
     * A guarded write or shell call's tool returned: what it created, modified
     * and deleted, with pre-images (once per call). Return true to promise its
     * verdict, a `snapshot/commit` or `/rollback` naming it (or its step, or a
     * group); when nobody does, it is kept at once. @mode bail
     */
    'snapshot/changed'(change: CallChange): true | undefined
    /** Files changed while no tool call ran, found before the call named (once; then they are the workspace's picture). @mode emit */
    'snapshot/outside'(info: OutsideChanges): void
  }
}

export const name = 'dsh-snapshot'
export const inject = ['sessions', 'tools']

export { Config } from './config.ts'

/**
 * Captures every path a write tool is about to touch (and the workspace a
 * shell call finds), durably, before it runs (outermost `tools/execute`
 * listener); announces what the call changed when its tool returns
 * (`snapshot/changed`), and puts it back on `snapshot/rollback`. A call
 * nobody promised a verdict for is kept as soon as it returns.
 */
export function apply(ctx: Context, config: Config) {
  const logger = ctx.logger('dsh-snapshot')
  const guard = new SnapshotGuard(config, {
    announce: change => ctx.bail('snapshot/changed', change) === true,
    // A shell call no tracker measures is scanned only for a listener.
    announcing: () => !!ctx.events._hooks['snapshot/changed']?.length,
    validate: exec => ctx.tools.validate(exec.name, exec.arguments),
    restored: info => ctx.emit('snapshot/restored', info),
    outside: info => ctx.emit('snapshot/outside', info),
    recovered: (report) => {
      // A warning: files were changed at start-up, undoing what a crashed process left.
      logger.warn('recovered snapshot journals left by a dead process:\n%s', formatRecovery(report))
      ctx.emit('snapshot/recovered', report)
    },
    info: text => logger.info(text),
    warn: text => logger.warn(text),
  })
  ctx.effect(() => () => guard.dispose(), 'dsh-snapshot journals')

  // Recover at start: the configured vault, and the vault of every session already open.
  if (config.vault) void guard.prepareVault(resolve(config.vault))
  for (const session of ctx.sessions.list()) void guard.prepareVault(guard.vaultOf(session))
  ctx.on('session/created', session => void guard.prepareVault(guard.vaultOf(session)))

  ctx.on('tools/execute', (exec, next) => guardCall(guard, exec, next), { prepend: true })
  ctx.on('tools/returned', exec => callReturned(guard, exec))
  ctx.on('snapshot/rollback', req => guard.rollback(req))
  ctx.on('snapshot/commit', req => guard.commit(req))
  ctx.on('session/event', (session, event) => {
    if (event.type === 'turn/end') guard.endTurn(session.id, event.data.turn)
  })
}

export * from './types.ts'
export * from './errors.ts'
export { Snapshots } from './snapshots.ts'
export { snapshotDir } from './layout.ts'
export type { MeasuredShell, PreImages } from './measure.ts'
export { DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_DIR_BYTES } from './config.ts'
export { DEFAULT_EXCLUDES, compileIgnore, type PathMatcher } from './internal/ignore.ts'
export { SnapshotGuard } from './guard.ts'
export { guardCall, callReturned, type GuardHost } from './call.ts'
export { recoverVault, resolveJournal, listJournals, formatRecovery, type RecoveryReport, type RecoveredJournal, type RecoveredScope,
  type RecoverOptions } from './recover.ts'
export { JOURNAL_FORMAT, type JournalHeader, type JournalRecord, type ParsedJournal } from './journal-format.ts'
export { JournalWriter } from './journal.ts'
export { readJournal } from './journal-read.ts'
export { currentOwner, ownerState, type JournalOwner, type OwnerState } from './owner.ts'
export { nothingToRestore, rolledBack, captureRefused, escapeRefused, outsideNote } from './messages.ts'
export { WorkspaceTracker, type ShellChanges, type Difference, type TrackerStart } from './shell/tracker.ts'
export { KeptStore, keptDir, readKeptState, sameState, changeBytes, type KeptRecord, type KeptChange, type KeptState, type KeptKind,
  type KeepBounds } from './kept.ts'
