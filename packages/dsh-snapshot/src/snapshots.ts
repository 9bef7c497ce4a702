import { definedOnly } from 'dsh-common'
import { SnapshotError } from './errors.ts'
import { releaseRefs } from './git-refs.ts'
import { removeTreeStore } from './git-tree.ts'
import type { JournalRecord, ParsedJournal } from './journal-format.ts'
import { JournalWriter } from './journal.ts'
import { keepScopes } from './keep.ts'
import { treeStoreOf } from './layout.ts'
import { describeScopes, nothingToRestore, rolledBack } from './messages.ts'
import { currentOwner, type JournalOwner } from './owner.ts'
import { mergeOutcome, restoreScope, syncParents } from './restore.ts'
import { replayScopes, selectScopes, type ScopeState } from './scopes.ts'
import { ShellCaptures } from './shell-capture.ts'
import type { RestoreOutcome, RollbackResult, ScopeSelector, ScopeSummary, SnapshotsOptions } from './types.ts'

/**
 * One session's snapshots: what its write calls are about to change,
 * journalled durably before they run, so it can be put back exactly.
 *
 * Scopes group captures until a verdict: `commit` drops them, `rollback`
 * restores them. Within an open scope the first capture of a path wins.
 * Every method is synchronous except `rollback` (a git tree restore runs
 * git); the journal is on disk before `capture` returns.
 *
 * @example
 * const snaps = new Snapshots({ root: '/work/app', vault: '/work/app/.dsh', sessionId: 's1' })
 * snaps.capture({ key: 'call:c1', callId: 'c1' }, ['src/a.ts'])
 * // … the write runs …
 * const r = await snaps.rollback({ callId: 'c1' }, 'type-check failed')
 */
export class Snapshots extends ShellCaptures {
  /**
   * Continue a journal this process left behind (a disposed plugin
   * instance): its open scopes become this instance's.
   */
  static adopt(parsed: ParsedJournal, options: Omit<SnapshotsOptions, 'root' | 'sessionId'>, owner: JournalOwner = currentOwner()): Snapshots {
    const header = parsed.header
    if (!header) throw new SnapshotError('journal', `${parsed.file} has no readable header`)
    const snaps = new Snapshots({ ...options, root: header.root, sessionId: header.sessionId }, owner)
    snaps._journal = JournalWriter.adopt(parsed, owner, snaps._sync)
    const scopes = replayScopes(parsed.records)
    snaps._open = scopes.filter(s => !s.verdict)
    // Scope ids keep counting across resets, so continue after the highest one seen.
    snaps._nextScope = Math.max(0, ...scopes.map(sc => Number(sc.id.slice(1)) || 0)) + 1
    return snaps
  }

  /** Close the selected open scopes, keeping the files as they are. */
  commit(selector: ScopeSelector = {}): ScopeSummary[] {
    const chosen = selectScopes(this._open, selector)
    if (!chosen.length) return []
    this.keep(chosen, 'commit')
    this.close(chosen, 'commit')
    this.forgetMeasured(chosen)
    return chosen.reverse().map(summary)
  }

  /**
   * Restore the selected open scopes (newest first, so each path ends as
   * its oldest capture had it) and close them. Never throws for a path that
   * could not be restored: it is listed in `failed`. When nothing matches,
   * `matched` is false and nothing is touched.
   */
  async rollback(selector: ScopeSelector, reason: string): Promise<RollbackResult> {
    const chosen = selectScopes(this._open, selector)
    if (!chosen.length) return { matched: false, restored: [], deleted: [], failed: [], message: nothingToRestore(selector, this.sessionId) }
    const what = describeScopes(selector, chosen, this.sessionId)
    // What the rolled-back calls wrote, for the record (a person reviewing the session sees its diff).
    this.keep(chosen, 'rollback', reason)
    // The verdict goes first: a crash mid-restore leaves a rollback for recovery to finish
    // (and were the verdict lost, a scope without one is rolled back all the same).
    this.appendVerdicts(chosen, 'rollback', reason)
    this._open = this._open.filter(s => !chosen.includes(s))
    this.forgetMeasured(chosen)
    // Newest scope first, so each path ends as its oldest capture had it; reported oldest first.
    const outcomes: RestoreOutcome[] = []
    for (const scope of chosen) outcomes.unshift(await restoreScope(this.root, scope, this._journal!,
      { fsync: this._sync !== 'off', vault: this.vault, reason }))
    releaseIndexLinks(chosen)
    const total: RestoreOutcome = { restored: [], deleted: [], failed: [] }
    for (const outcome of outcomes) mergeOutcome(total, outcome)
    // Restored files are durable before the journal may forget them.
    if (this._sync !== 'off') syncParents(this.root, total.deleted)
    const failedOf = (i: number) => outcomes[outcomes.length - 1 - i]!.failed.length
    this.finish(chosen.map((s, i) => ({ record: { t: 'done', scope: s.id, failed: failedOf(i) } as JournalRecord })))
    return { matched: true, ...total, message: rolledBack(what, total) }
  }

  /**
   * Keep what the closing scopes changed, before and after, for `dsh undo`
   * and `dsh review`. Best effort: a commit or rollback stands when this
   * fails (a full disk); the call then shows as having nothing kept.
   */
  private keep(scopes: readonly ScopeState[], kind: 'commit' | 'rollback', reason?: string) {
    if (!this._keep.maxBytes) return
    try {
      keepScopes(this, scopes, kind, reason, this._keep, (offset, size, sum) => this._journal!.readPayload(offset, size, sum))
    } catch {
      // Retention is not the verdict: nothing kept for these calls, and the review page shows none.
    }
  }

  /** Drop every capture of every scope and delete the journal. */
  clear(): void {
    this._open = []
    this.stopTracking(true)
    if (this._journal) removeTreeStore(treeStoreOf(this._journal.file))
    this._journal?.remove()
    this._journal = undefined
  }

  /**
   * Release the journal. With no open scope it is deleted; otherwise it
   * stays for recovery (or for the next instance in this process to adopt).
   */
  dispose(): void {
    if (this._closed) return
    this._closed = true
    if (!this._journal) return
    if (this._open.length) {
      // Left for recovery or adoption: its verdicts so far must be on disk (the pack too).
      this.stopTracking(false)
      this._journal.flush()
      this._journal.close()
    } else {
      this.stopTracking(true)
      removeTreeStore(treeStoreOf(this._journal.file))
      this._journal.remove()
    }
  }

  private close(scopes: ScopeState[], verdict: 'commit') {
    releaseIndexLinks(scopes)
    const remaining = this._open.filter(s => !scopes.includes(s))
    if (!remaining.length) {
      // Nothing left open: resetting the journal is the verdict.
      this.reset()
    } else {
      this.appendVerdicts(scopes, verdict)
    }
    this._open = remaining
  }
}

/** A closed scope's index links are of no more use (a reset removes them all anyway). */
function releaseIndexLinks(scopes: readonly ScopeState[]) {
  for (const s of scopes) for (const { entry } of s.items) if (entry.kind === 'refs') releaseRefs(entry)
}

function summary(s: ScopeState): ScopeSummary {
  return {
    scope: s.id, key: s.key, callIds: [...s.callIds], paths: [...s.paths],
    ...definedOnly({ step: s.step, turn: s.turn }),
  }
}
