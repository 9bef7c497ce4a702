import type { EventRef, InvariantRule, Violation } from './types.ts'

/** Whose contract was broken: a session's log or an agent's status sequence. */
export type InvariantSubject = { session: string } | { agent: string }

/**
 * Thrown by the tripwire when the harness breaks its event contract. The
 * message names the session (or agent), the seq, the rule and the last few
 * events leading to it. `code` is stable.
 */
export class InvariantError extends Error {
  readonly code = 'INVARIANT'
  /** Rule of the first violation (an event may break several). */
  readonly rule: InvariantRule
  /** Seq of the offending event, when it had one. */
  readonly seq?: number

  constructor(readonly subject: InvariantSubject, readonly violations: readonly Violation[]) {
    super(formatInvariantMessage(subject, violations))
    this.name = 'InvariantError'
    this.rule = violations[0]!.rule
    if (violations[0]!.seq !== undefined) this.seq = violations[0]!.seq
  }
}

/**
 * `invariant violated in session s1 at seq 7 (tool/result): [result-without-call] …; last events: 5 assistant/message, 6 tool/call, 7 tool/result`
 * `invariant violated by agent agent-3: [agent-status] disposed → running leaves disposed; last statuses: running, disposed, running`
 */
export function formatInvariantMessage(subject: InvariantSubject, violations: readonly Violation[]): string {
  const first = violations[0]!
  const what = violations.map(v => `[${v.rule}] ${v.message}`).join('; ')
  if ('agent' in subject) {
    return `invariant violated by agent ${subject.agent}: ${what}; last statuses: ${first.recent.map(r => r.type).join(', ')}`
  }
  const at = first.seq !== undefined ? `at seq ${first.seq}` : `at event #${first.index}`
  return `invariant violated in session ${subject.session} ${at} (${first.type}): ${what}; last events: ${formatRecent(first.recent)}`
}

/** `3 step/start, 4 assistant/chunk, ? tool/call` */
export function formatRecent(recent: readonly EventRef[]): string {
  return recent.map(r => `${r.seq ?? '?'} ${r.type}`).join(', ')
}
