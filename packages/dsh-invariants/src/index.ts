import type { Context } from '@deepseek-ai/cordis'
import Schema from '@deepseek-ai/schemastery'
import type { Agent, AgentStatus } from 'dsh-agent'
import type { Session, SessionEvent } from 'dsh-session'
import { Tripwire } from './tripwire.ts'

// dsh-invariants declares no events and no session-log event types of its
// own. It only listens, on events declared by the harness core:
//   'session/created' (dsh-session, emit) — replay and freeze a seeded log
//   'session/event'   (dsh-session, emit) — check and freeze each appended event
//   'agent/status'    (dsh-agent, emit)   — check each agent's status transition
// A violation is thrown from the listener, i.e. out of `sessions.create()`,
// `session.append()` or the agent's status change (the agent loop turns
// it into an `error` event ending the turn).

export const name = 'dsh-invariants'
export const inject = ['sessions']

export const Config = Schema.object({
  freeze: Schema.boolean().default(true).description('Deep-freeze each logged event after it is checked, so mutating history throws.'),
})
export type Config = Schemastery.TypeT<typeof Config>

/**
 * The dev/test tripwire: asserts the harness event contract on every
 * session and agent, throwing `InvariantError` (code `INVARIANT`) at the
 * first event that breaks it. At apply it rebuilds its state from the logs
 * of sessions that already exist (and the status of agents that already
 * exist), so loading it mid-turn — a hot reload — rejects nothing legal.
 * Disposing it removes its three listeners; frozen events stay frozen.
 */
export function apply(ctx: Context, config: Config) {
  const tripwire = new Tripwire({ freeze: config.freeze })
  const logger = ctx.logger('dsh-invariants')

  for (const session of ctx.sessions.list()) {
    const found = tripwire.adopt(session)
    if (found.length) {
      logger.warn('session %s already broke the event contract before dsh-invariants was applied: %s', session.id,
        found.map(v => `seq ${v.seq ?? '?'} [${v.rule}] ${v.message}`).join('; '))
    }
  }
  // Optional: the agent loop need not be loaded. Agents that already exist
  // keep the status they have now (a reload mid-turn sees `running`).
  for (const agent of ctx.get('agents')?.list() ?? []) tripwire.adoptAgent(agent.id, agent.status)

  ctx.on('session/created', (session: Session) => tripwire.created(session))
  ctx.on('session/event', (session: Session, event: SessionEvent) => tripwire.appended(session, event))
  ctx.on('agent/status', (agent: Agent, status: AgentStatus) => tripwire.status(agent.id, status))
}

export * from './types.ts'
export * from './rules.ts'
export * from './trace.ts'
export * from './agents.ts'
export * from './freeze.ts'
export * from './error.ts'
export * from './tripwire.ts'
export * from './lint.ts'
