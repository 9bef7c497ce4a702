import type { RawSessionEvent, Session } from 'dsh-session'
import type { ToolDefinition } from 'dsh-tools'
import { ActivityRecorder, type ShellResultLike } from './activity.ts'
import { checkClaims } from './check.ts'
import { writeCheckpoint } from './store.ts'
import { formatReceipt } from './text.ts'
import type { Checkpoint, ClaimsReport, StoredCheckpoint } from './types.ts'

export interface RecordOptions {
  /** Which tools are shell tools. Default: the tool named `bash`. */
  isShellTool?: (name: string) => boolean
  /** Results of shell calls that ran earlier in the current step and are not logged yet. */
  pending?: (callId: string) => ShellResultLike | undefined
  /** The checkpoint tool call, for the log events. */
  callId?: string
  /**
   * The session's activity record so far, kept up to date as events are
   * appended (the plugin keeps one per session): the checkpoint then costs
   * what its claims cost, not the log's length. It is not changed (open
   * calls are settled on a copy). Without it the session's events are folded.
   */
  activity?: ActivityRecorder
}

export interface RecordOutcome {
  report: ClaimsReport
  /** What the tool answers. */
  receipt: string
  /** The checkpoint file, when it was written. */
  file?: string
  /** Why the file could not be written. */
  saveError?: string
}

/**
 * Record a checkpoint: hold it against the session's activity record, append
 * the `claims/questioned` marker first when this checkpoint asks about an
 * empty `failed` (so a crash never asks twice), append `claims/checkpoint`,
 * then write `<vault>/checkpoints/<session>.json` atomically. Never refuses:
 * a file that cannot be written is reported in the receipt.
 */
export async function recordCheckpoint(session: Session, checkpoint: Checkpoint, options: RecordOptions = {}): Promise<RecordOutcome> {
  const recorder = options.activity?.fork() ?? foldActivity(session, options.isShellTool)
  if (options.pending) recorder.settleOpenCalls(options.pending)
  const report = checkClaims(checkpoint, recorder.activity, session.id)
  const call = options.callId === undefined ? {} : { callId: options.callId }
  if (report.asked) session.append('claims/questioned', { failedRuns: report.failedRuns, ...call })
  const event = session.append('claims/checkpoint', { ...checkpoint, report, ...call })
  const stored: StoredCheckpoint = { version: 1, sessionId: session.id, cwd: session.cwd, time: event.time, seq: event.seq, ...checkpoint, report }
  try {
    const file = await writeCheckpoint(session.vault, stored)
    return { report, receipt: formatReceipt(report), file }
  } catch (error) {
    const saveError = `${(error as NodeJS.ErrnoException).code ?? 'error'}: ${(error as Error).message}`
    return { report, receipt: formatReceipt(report, saveError), saveError }
  }
}

/** The activity record of a session's log so far (every event folded, oldest first). */
export function foldActivity(session: Session, isShellTool?: (name: string) => boolean): ActivityRecorder {
  const recorder = new ActivityRecorder({ isShellTool })
  for (const event of session.events as readonly RawSessionEvent[]) recorder.add(event)
  return recorder
}

/** Arguments of the `checkpoint` tool. */
export interface CheckpointArgs {
  summary: string
  verified?: string[]
  failed?: string[]
  next?: string[]
}

const lines = (v: string[] | undefined) => (v ?? []).map(s => s.trim()).filter(Boolean)

/** Normalise tool arguments into a checkpoint (missing lists are empty, blank lines dropped). */
export function toCheckpoint(args: CheckpointArgs): Checkpoint {
  return { summary: args.summary.trim(), verified: lines(args.verified), failed: lines(args.failed), next: lines(args.next) }
}

export interface CheckpointToolOptions {
  isShellTool(name: string): boolean
  pending(session: Session, callId: string): ShellResultLike | undefined
  /** The session's live activity record, when one is kept (see `RecordOptions.activity`). */
  activity?(session: Session): ActivityRecorder | undefined
}

/** The model-facing tool description. */
export const CHECKPOINT_DESCRIPTION = 'Record a checkpoint for the agent that continues this work: a summary, what you verified, what failed, and what to do next. '
  + 'End each verified line with the command that shows it after " — ", e.g. "login rejects expired tokens — pnpm vitest run tests/auth.test.ts". '
  + 'Claims are compared with the commands this session actually ran; unsupported ones are recorded as given and marked for the next agent.'

/** The `checkpoint` tool. Effects `read`: it changes nothing in the workspace (it writes only to the vault). */
export function createCheckpointTool(options: CheckpointToolOptions): ToolDefinition<CheckpointArgs> {
  const list = (description: string) => ({ type: 'array', items: { type: 'string' }, description })
  return {
    name: 'checkpoint',
    description: CHECKPOINT_DESCRIPTION,
    effects: 'read',
    parameters: {
      type: 'object',
      properties: {
        summary: { type: 'string', description: 'Where the work stands, in a few sentences.' },
        verified: list('Claims you checked, each ending with " — <command that shows it>".'),
        failed: list('What you tried that did not work, so it is not retried.'),
        next: list('What the next agent should do, in order.'),
      },
      required: ['summary'],
    },
    async execute(args, exec) {
      const outcome = await recordCheckpoint(exec.session, toCheckpoint(args), {
        isShellTool: options.isShellTool,
        pending: callId => options.pending(exec.session, callId),
        callId: exec.callId,
        activity: options.activity?.(exec.session),
      })
      return { content: outcome.receipt }
    },
  }
}
