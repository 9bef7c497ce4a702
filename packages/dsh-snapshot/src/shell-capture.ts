import { rmSync } from 'node:fs'
import { isInside, toPosixRelative } from 'dsh-common'
import { ALWAYS_SKIPPED } from './capture.ts'
import { SnapshotError } from './errors.ts'
import { markerOf, packOf } from './layout.ts'
import { capturesOf, type MeasuredShell } from './measure.ts'
import { PathCaptures } from './path-capture.ts'
import { selectScopes, type ScopeState } from './scopes.ts'
import { WorkspaceTracker, type Difference, type TrackerStart } from './shell/tracker.ts'
import { removeMarkers } from './shell/watch.ts'
import type { CaptureSummary, ScopeRef } from './types.ts'

/**
 * Shell tracking: the warm picture of the workspace, a shell call's
 * pre-image (the picture as it is), and what the call changed, measured
 * once and journalled as captures of their own.
 */
export class ShellCaptures extends PathCaptures {
  protected _tracker?: WorkspaceTracker
  protected readonly _measured = new Map<string, MeasuredShell>()

  /** Whether shell tracking runs (see {@link startTracking}). */
  get tracking(): boolean {
    return !!this._tracker
  }

  /**
   * `shell: 'track'`: build the warm picture of the workspace (every
   * tracked file's bytes in a pack under the vault, a watch on every
   * tracked directory) so each shell call's pre-image exists before it
   * runs. Once per session; later calls return undefined.
   * @throws SnapshotError `too-large` past `maxDirBytes` of tracked files.
   */
  startTracking(options: { maxFileBytes: number }): TrackerStart | undefined {
    if (this._tracker) return undefined
    if (this._closed) throw new SnapshotError('closed', `snapshots of session ${this.sessionId} were disposed`)
    const journal = this.journal().file
    const vaultRel = isInside(this.root, this.vault) ? [toPosixRelative(this.root, this.vault)] : []
    try {
      const { tracker, stats } = WorkspaceTracker.start({
        root: this.root, pack: packOf(journal), marker: markerOf(journal),
        skip: [...ALWAYS_SKIPPED, ...this._ignore, ...vaultRel.map(v => `/${v}`)], maxFileBytes: options.maxFileBytes, maxBytes: this._maxDir,
      })
      this._tracker = tracker
      return stats
    } catch (error) {
      if (error instanceof SnapshotError) throw error
      const e = error as NodeJS.ErrnoException
      throw new SnapshotError('io', `cannot track the workspace: ${e.message}`)
    }
  }

  /**
   * What changed since the tracker last looked (out of band, or the call
   * that just ended), adopted as the new picture. Workspace-relative paths.
   */
  async refresh(): Promise<Difference[]> {
    const tracker = this._tracker
    if (!tracker) return []
    const diffs = await tracker.differences()
    if (diffs.length) tracker.adopt(diffs)
    return diffs
  }

  /**
   * Record a shell call's pre-image: the tracker's pack as it is now,
   * durably, before the command runs. Its changes are measured later
   * ({@link measureShell}); until then a rollback or a recovery compares
   * the whole workspace with the pack.
   */
  captureWorkspace(scope: ScopeRef): CaptureSummary {
    const tracker = this._tracker
    if (!tracker) throw new SnapshotError('unsupported', 'shell tracking is not running')
    if (this._sync !== 'off') tracker.sync()
    return this.captureEntry(scope, tracker.entry())
  }

  /**
   * What the shell call `callId` changed (created, modified, deleted files),
   * measured once: each changed path's earlier state is journalled as a
   * capture of its own, so a rollback restores exactly those paths.
   * Undefined when no open scope holds a workspace pre-image for the call.
   */
  async measureShell(callId: string): Promise<MeasuredShell | undefined> {
    const known = this._measured.get(callId)
    if (known) return known
    const scope = selectScopes(this._open, { callId }).find(s => s.items.some(i => i.entry.kind === 'manifest'))
    if (!scope || !this._tracker) return undefined
    if (scope.measured) return { created: [], modified: [], deleted: [] }
    const diffs = await this._tracker.differences()
    const { items, changes, before } = capturesOf(diffs, held => this._tracker!.bytes(held))
    const ref: ScopeRef = { key: scope.key, callId }
    // Not fsynced: lost in a crash, recovery compares the whole workspace with the pack instead.
    this.record(ref, false, (state, add) => {
      for (const item of items) {
        if (state.has(item.entry.path)) state.keep(item.entry.path)
        else add(item)
      }
    })
    this.journal().append([{ record: { t: 'measured', scope: scope.id } }])
    scope.measured = true
    const measured: MeasuredShell = before ? { ...changes, before } : changes
    this._measured.set(callId, measured)
    return measured
  }

  protected stopTracking(remove: boolean) {
    if (this._tracker) {
      this._tracker.close(remove)
      this._tracker = undefined
    } else if (remove && this._journal) {
      rmSync(packOf(this._journal.file), { force: true })
    }
    if (this._journal) removeMarkers(markerOf(this._journal.file))
  }

  /** Forget measured shell changes of scopes that closed. */
  protected forgetMeasured(scopes: readonly ScopeState[]) {
    for (const s of scopes) for (const c of s.callIds) this._measured.delete(c)
  }
}
