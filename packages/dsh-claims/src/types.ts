import type { HiddenBy, RunOutcome } from './attribution.ts'

/** What the agent hands over: the `checkpoint` tool's arguments. */
export interface Checkpoint {
  summary: string
  /** Each line names its evidence: `"login rejects expired tokens — pnpm vitest run tests/auth.test.ts"`. */
  verified: string[]
  /** What was tried and did not work, so the next agent does not retry it. */
  failed: string[]
  next: string[]
}

/** The last run of one command key, as the activity record saw it. */
export interface RunRecord {
  /** `program` or `program arg` (see `formatKey`). */
  key: string
  program: string
  outcome: RunOutcome
  hiddenBy?: HiddenBy
  /** Exit status of the whole command line (or check); `null` when killed, timed out or never started. */
  exitCode: number | null
  /** Seq of the event that started the run (`tool/call` or `verify/run`), or of the `verify/verdict`. */
  seq: number
  /** `verdict`: dsh-dstvalid's verdict on one of the agent's writes (key `<check> of <tool> on <paths>`). */
  source: 'shell' | 'verify' | 'verdict'
  /** For `verdict` records that did not pass: the write was rolled back, or kept failing. */
  verdict?: 'fail' | 'rolled-back'
}

/** Why a verified line was marked. */
export type MarkKind = 'unseen' | 'failing' | 'no-evidence' | 'unconfirmed'

export interface ClaimMark {
  claim: string
  kind: MarkKind
  /** The command keys the mark is about (empty for `no-evidence`). */
  commands: string[]
  /** For `failing` and `unconfirmed`: the run that decided it. */
  run?: RunRecord
}

/** A command whose run failed after the cut-off. */
export interface FailedRun {
  key: string
  exitCode: number | null
  /** Its last run failed too (it was not fixed later). */
  stillFailing: boolean
  /** A check's verdict on one of the agent's writes, not a command the agent ran. */
  verdict?: 'fail' | 'rolled-back'
}

/**
 * The verdict on a checkpoint. `unseen`, `failing`, `noEvidence` and
 * `unconfirmed` hold verified lines as given; each line is in at most one.
 */
export interface ClaimsReport {
  sessionId: string
  /** Its command never ran after the cut-off. */
  unseen: string[]
  /** Its command's last run did not pass. */
  failing: string[]
  /** It names no command. */
  noEvidence: string[]
  /** Its command's last run had its exit status hidden (a pipe, `;`, `||`, …). */
  unconfirmed: string[]
  /** An empty `failed` has been questioned in this session (by this checkpoint or an earlier one). */
  questioned: boolean
  /** This checkpoint asks about an empty `failed`. */
  asked: boolean
  /** Commands that failed after the cut-off (the grounds for the question). */
  failedRuns: FailedRun[]
  /** One entry per marked verified line, in the order given. */
  marks: ClaimMark[]
  /** Where runs start counting: the session start, or the previous checkpoint. */
  since: 'session-start' | 'checkpoint'
  /** Seq of that cut-off (`-1` for the session start); runs at or before it do not count. */
  cutoff: number
}

/** `<vault>/checkpoints/<session>.json`: the latest checkpoint of a session with its report. */
export interface StoredCheckpoint extends Checkpoint {
  version: 1
  sessionId: string
  /** The workspace root of the session; handoff only goes to sessions on the same one. */
  cwd: string
  /** Milliseconds since the epoch. */
  time: number
  /** Seq of the `claims/checkpoint` event in the session log. */
  seq: number
  report: ClaimsReport
}
