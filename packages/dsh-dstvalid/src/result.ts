/** What dsh-dstvalid tells the world about a judged write: the payloads of its `verify/result` and `verify/learning` events. */

/** The `verify/result` payload: one per check per judged write call. */
export interface VerifyResult {
  sessionId: string
  callId: string
  tool: string
  paths: string[]
  check: string
  /** `error`: the check could not judge the write (timed out, crashed, no baseline) — neither verified nor failed. */
  outcome: 'pass' | 'fail' | 'rolled-back' | 'error'
  newProblems: string[]
  durationMs: number
}

/**
 * The `verify/learning` payload: one write call that was kept and verified —
 * these paths, written by this tool, passed these checks. Never for a
 * rolled-back write, nor for one no check could judge.
 */
export interface VerifyLearning {
  sessionId: string
  /** Workspace-relative paths of the call. */
  paths: string[]
  tool: string
  /** The checks that passed (`typecheck`, `test`, `style`, …), in pipeline order. */
  checks: string[]
}
