import type { Context } from '@deepseek-ai/cordis'
import type { ToolExecution } from 'dsh-tools'
import type { RollbackOutcome } from './message.ts'

/**
 * The dsh-snapshot contract, typed structurally: the events are declared by
 * dsh-snapshot (which may be absent), so they are reached here through
 * narrow wrappers instead of importing or re-declaring its types.
 */
export interface RollbackRequest {
  sessionId: string
  callId?: string
  step?: number
  reason: string
}

export interface CommitRequest {
  sessionId: string
  callId?: string
  step?: number
}

type Serial = (this: Context, name: string, request: RollbackRequest) => Promise<RollbackOutcome | undefined>
type Emit = (this: Context, name: string, request: CommitRequest) => void
type On = (this: Context, name: string, listener: (exec: ToolExecution) => boolean | undefined) => () => boolean

/** Ask the snapshot plugin to restore a call's (or a step's) captures; undefined when no plugin answered. */
export function requestRollback(ctx: Context, request: RollbackRequest): Promise<RollbackOutcome | undefined> {
  return (ctx.serial as unknown as Serial).call(ctx, 'snapshot/rollback', request)
}

/** Tell the snapshot plugin a judged write was kept. */
export function commitSnapshot(ctx: Context, request: CommitRequest): void {
  ;(ctx.emit as unknown as Emit).call(ctx, 'snapshot/commit', request)
}

/** Answer `snapshot/judge`: `true` for every write this plugin will judge (so snapshot waits for commit/rollback). */
export function answerJudge(ctx: Context, answer: (exec: ToolExecution) => boolean | undefined): () => boolean {
  return (ctx.on as unknown as On).call(ctx, 'snapshot/judge', answer)
}
