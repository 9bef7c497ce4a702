import { AgentStatusChecker } from './agents.ts'
import { InvariantError } from './error.ts'
import { deepFreeze } from './freeze.ts'
import { TraceChecker } from './trace.ts'
import type { AgentStatusName, SessionLike, Violation } from './types.ts'

export interface TripwireOptions {
  /** Deep-freeze each event after it is checked. */
  freeze: boolean
  /** How many recent events a violation lists. Default 5. */
  recent?: number
}

/**
 * The runtime side of the contract, with no Cordis in it: one
 * {@link TraceChecker} per session and one {@link AgentStatusChecker} for
 * all agents. `created`, `appended` and `status` throw
 * {@link InvariantError} on a violation (after freezing, so the offending
 * event is frozen too); `adopt*` rebuild state from what already happened
 * and never throw.
 */
export class Tripwire {
  private readonly _sessions = new WeakMap<SessionLike, TraceChecker>()
  private readonly _agents: AgentStatusChecker

  constructor(readonly options: TripwireOptions) {
    this._agents = new AgentStatusChecker(options.recent)
  }

  /**
   * Take over a session whose log already holds events (the plugin applied
   * mid-run, e.g. a hot reload): replay its log to rebuild the state.
   * @returns the violations found in that history (reported, not thrown: it already happened).
   */
  adopt(session: SessionLike): Violation[] {
    const checker = new TraceChecker({ recent: this.options.recent })
    this._sessions.set(session, checker)
    return this.replay(checker, session.events, session.events.length)
  }

  /**
   * A session was created: replay its seed through the contract (and freeze it).
   * @throws InvariantError naming the first seeded event that breaks a rule.
   */
  created(session: SessionLike): void {
    const checker = new TraceChecker({ recent: this.options.recent })
    this._sessions.set(session, checker)
    const found = this.replay(checker, session.events, session.events.length)
    if (found.length) throw new InvariantError({ session: session.id }, violationsAt(found, found[0]!.index))
  }

  /**
   * An event was appended to a session's log. A session never seen before
   * is adopted first from the events before this one.
   * @throws InvariantError when the event breaks a rule.
   */
  appended(session: SessionLike, event: unknown): void {
    let checker = this._sessions.get(session)
    if (!checker) {
      checker = new TraceChecker({ recent: this.options.recent })
      this._sessions.set(session, checker)
      const events = session.events
      this.replay(checker, events, events[events.length - 1] === event ? events.length - 1 : events.length)
    }
    const violations = checker.check(event)
    if (this.options.freeze) deepFreeze(event)
    if (violations.length) throw new InvariantError({ session: session.id }, violations)
  }

  /** Record an agent's status as found at start-up (no check). */
  adoptAgent(agentId: string, status: AgentStatusName): void {
    this._agents.adopt(agentId, status)
  }

  /**
   * An agent reported a status.
   * @throws InvariantError for a repeated status, leaving `disposed`, or an unknown status.
   */
  status(agentId: string, status: string): void {
    const violation = this._agents.check(agentId, status)
    if (violation) throw new InvariantError({ agent: agentId }, [violation])
  }

  private replay(checker: TraceChecker, events: readonly unknown[], end: number): Violation[] {
    const found: Violation[] = []
    const freeze = this.options.freeze
    for (let i = 0; i < end; i++) {
      const violations = checker.check(events[i])
      if (violations.length) found.push(...violations)
      if (freeze) deepFreeze(events[i])
    }
    return found
  }
}

/** All violations found at one event (an event may break several rules). */
function violationsAt(found: readonly Violation[], index: number): Violation[] {
  return found.filter(v => v.index === index)
}
