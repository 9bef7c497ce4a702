import type { AgentStatusName, EventRef, Violation } from './types.ts'

const NEXT: Readonly<Record<AgentStatusName, readonly AgentStatusName[]>> = {
  idle: ['running', 'disposed'],
  running: ['idle', 'disposed'],
  disposed: [],
}

interface AgentTrack {
  status: AgentStatusName
  /** Statuses reported so far (the last few), oldest first. */
  history: string[]
  count: number
}

/**
 * The per-agent status contract: an agent starts idle and may move only
 * `idle ↔ running` and `(idle | running) → disposed`. A repeated status,
 * leaving `disposed`, or an unknown status is a violation. Agents are
 * tracked independently by id. Pure: no Cordis.
 */
export class AgentStatusChecker {
  private readonly _agents = new Map<string, AgentTrack>()

  constructor(private readonly _recent = 5) {}

  /** Record an agent's current status without checking it (state rebuilt after a reload). */
  adopt(agentId: string, status: AgentStatusName): void {
    this._agents.set(agentId, { status, history: [], count: 0 })
  }

  /** The status last reported (or adopted) for an agent; `idle` for one never seen. */
  status(agentId: string): AgentStatusName {
    return this._agents.get(agentId)?.status ?? 'idle'
  }

  /** Check one reported status and advance the agent's state; returns the violation, if any. */
  check(agentId: string, status: string): Violation | undefined {
    let track = this._agents.get(agentId)
    if (!track) this._agents.set(agentId, track = { status: 'idle', history: [], count: 0 })
    const from = track.status
    const index = track.count++
    track.history.push(status)
    if (track.history.length > this._recent) track.history.shift()
    let message: string | undefined
    if (!isStatus(status)) {
      message = `${from} → ${status}: unknown status (expected idle, running or disposed)`
    } else {
      track.status = status
      if (!NEXT[from].includes(status)) {
        message = status === from ? `${from} → ${status} repeats the current status` : `${from} → ${status} leaves disposed`
      }
    }
    if (!message) return undefined
    const recent: EventRef[] = track.history.map(s => ({ type: s }))
    return { rule: 'agent-status', message, type: 'agent/status', index, recent }
  }
}

function isStatus(status: string): status is AgentStatusName {
  return Object.hasOwn(NEXT, status)
}
