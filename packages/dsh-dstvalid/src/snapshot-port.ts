import type { Context } from '@deepseek-ai/cordis'
import type { CallChange, CommitRequest, RollbackRequest, RollbackResult } from 'dsh-snapshot'

/*
 * The dsh-snapshot contract. Its events are declared by dsh-snapshot (types
 * only are imported here); the plugin itself may be absent, in which case
 * nothing is announced and `snapshot/rollback` resolves to undefined.
 */

/** Ask the snapshot plugin to restore a call's (or a step's, or a group's) captures; undefined when no plugin answered. */
export function requestRollback(ctx: Context, request: RollbackRequest): Promise<RollbackResult | undefined> {
  return ctx.serial('snapshot/rollback', request)
}

/** Tell the snapshot plugin a judged write was kept. */
export function commitSnapshot(ctx: Context, request: CommitRequest): void {
  ctx.emit('snapshot/commit', request)
}

/** Answer `snapshot/changed`: `promise(change)` true for every call this plugin will give a verdict (so snapshot keeps its scope open for it). */
export function hearChanges(ctx: Context, promise: (change: CallChange) => boolean): () => boolean {
  return ctx.on('snapshot/changed', change => promise(change) || undefined)
}

/** Whether dsh-snapshot is loaded: something answers rollbacks (and so announces what each guarded call changed). */
export function snapshotLoaded(ctx: Context): boolean {
  return !!ctx.events._hooks['snapshot/rollback']?.length
}
