import type { Context } from '@deepseek-ai/cordis'
import type { ToolExecution } from 'dsh-tools'
import type { ChangesRequest, CommitRequest, RollbackRequest, RollbackResult, ShellChanges } from 'dsh-snapshot'

/*
 * The dsh-snapshot contract. Its events are declared by dsh-snapshot (types
 * only are imported here); the plugin itself may be absent, in which case
 * `snapshot/rollback` resolves to undefined and nobody hears the rest.
 */

/** Ask the snapshot plugin to restore a call's (or a step's) captures; undefined when no plugin answered. */
export function requestRollback(ctx: Context, request: RollbackRequest): Promise<RollbackResult | undefined> {
  return ctx.serial('snapshot/rollback', request)
}

/** Tell the snapshot plugin a judged write was kept. */
export function commitSnapshot(ctx: Context, request: CommitRequest): void {
  ctx.emit('snapshot/commit', request)
}

/** Answer `snapshot/judge`: `true` for every write this plugin will judge (so snapshot waits for its commit or rollback). */
export function answerJudge(ctx: Context, answer: (exec: ToolExecution) => boolean | undefined): () => boolean {
  return ctx.on('snapshot/judge', answer)
}

/** Whether the snapshot plugin holds a workspace pre-image for this shell call. */
export function shellTracked(ctx: Context, request: ChangesRequest): boolean {
  return ctx.bail('snapshot/tracked', request) === true
}

/** What a tracked shell call changed (measured by the snapshot plugin); undefined when it cannot say. */
export function shellChanges(ctx: Context, request: ChangesRequest): Promise<ShellChanges | undefined> {
  return ctx.serial('snapshot/changes', request)
}
