/**
 * Stable ids of the contract rules. A violation names exactly one; tests,
 * `dsh lint-log --json` and the README refer to them by id.
 */
export type InvariantRule =
  | 'seq'
  | 'shape'
  | 'turn-overlap'
  | 'turn-end'
  | 'turn-end-open-step'
  | 'step-outside-turn'
  | 'step-overlap'
  | 'step-end'
  | 'outside-step'
  | 'result-without-call'
  | 'agent-status'

/** One event as a violation message shows it: its seq (when it had a usable one) and type. */
export interface EventRef {
  seq?: number
  type: string
}

/** One broken rule, found at one event (or one agent status). */
export interface Violation {
  rule: InvariantRule
  /** What is wrong, without the location (the formatter adds it). */
  message: string
  /** Type of the offending event (`agent/status` for agents). */
  type: string
  /** Seq of the offending event, when it had a numeric one. */
  seq?: number
  /** 0-based position of the offending event among those the checker saw. */
  index: number
  /** The last few events up to and including the offending one, oldest first. */
  recent: readonly EventRef[]
}

/** The statuses an agent reports on `agent/status`. */
export type AgentStatusName = 'idle' | 'running' | 'disposed'

/**
 * What the tripwire needs of a session: structurally satisfied by
 * dsh-session's `Session`, so the core carries no runtime dependency on it.
 */
export interface SessionLike {
  readonly id: string
  readonly events: readonly unknown[]
}
