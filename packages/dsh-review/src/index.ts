import type { Context } from '@deepseek-ai/cordis'
import Schema from '@deepseek-ai/schemastery'
import type {} from 'dsh-agent'
import type {} from 'dsh-tools'
import { deliverUndoNotes } from './plugin.ts'

/**
 * dsh-review — what a person needs to see and take back an agent's work:
 * the session page (`dsh review`), undo (`dsh undo`), and this plugin,
 * which tells a running session's model what an undo changed under it.
 * Listens to `agent/step-start` (parallel) and `tools/execute` (waterfall);
 * appends `context/message` (source `undo`).
 */
export const name = 'dsh-review'
export const inject = ['sessions', 'tools']

export const Config = Schema.object({})
export type Config = Schemastery.TypeT<typeof Config>

export function apply(ctx: Context) {
  deliverUndoNotes(ctx)
}

export { startReviewServer, type ReviewServer, type ReviewServerOptions } from './server.tsx'
export { undo, undoable, undoneBy, describeRecords, UndoError, type UndoOptions, type UndoResult, type Undoable } from './undo.ts'
export { listSessions, latestSession, pendingCalls, readSession, VERDICTS, type PendingCall, type CallVerdict, type CallView, type SessionSummary, type SessionView, type TimelineItem, type CheckView, type CheckpointView, type ProofState } from './timeline.ts'
export { pendingUndoNotes, takeUndoNotes } from './notes.ts'
export { diffChange, type FileDiff, type DiffLine } from './diff.ts'
