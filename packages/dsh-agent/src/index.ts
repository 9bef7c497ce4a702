import { Context, Service } from '@deepseek-ai/cordis'
import Schema from '@deepseek-ai/schemastery'
import type { Session, TurnEndReason } from 'dsh-session'
import type { ToolResult } from 'dsh-tools'
import type { ModelRequest } from 'dsh-llm'
import type { ToolCallData } from 'dsh-session'
import { Agent, type AgentStatus, type StepBatch, type StopRefusal } from './agent.ts'

declare module '@deepseek-ai/cordis' {
  interface Context {
    agents: AgentService
  }
  interface Events {
    /** An agent changed status: idle ↔ running, then disposed. @mode emit */
    'agent/status'(agent: Agent, status: AgentStatus): void
    /** A turn started (after `turn/start` was logged), before its first step. @mode parallel */
    'agent/turn-start'(agent: Agent, turn: number): Promise<void>
    /** A turn ended (after `turn/end` was logged), before the session flush. @mode parallel */
    'agent/turn-end'(agent: Agent, turn: number, reason: TurnEndReason): Promise<void>
    /**
     * The session's flush at the end of a turn failed (a full disk). A host
     * that reports it itself (the CLI says at its end why the log was not
     * saved) returns true; else dsh-agent logs a warning.
     * @mode bail
     */
    'agent/flush-failed'(agent: Agent, error: Error): boolean | void
    /** A step started (after `step/start` was logged), before the model request. @mode parallel */
    'agent/step-start'(agent: Agent, turn: number, step: number): Promise<void>
    /** A step's tool results are logged; `step/end` follows. @mode parallel */
    'agent/step-end'(agent: Agent, turn: number, step: number): Promise<void>
    /**
     * The model answered without calling a tool: the turn would end. A
     * listener that returns a refusal keeps it going with one more step, the
     * refusal logged as a `context/message` the model reads (a guard whose
     * turn still leaves the project worse than it began). Whoever refuses
     * bounds how often; `maxSteps` bounds the turn anyway.
     * @mode serial
     */
    'agent/stop'(agent: Agent, turn: number): Promise<StopRefusal | undefined>
    /** Last chance to change the model request; return the (possibly new) request. @mode waterfall */
    'agent/request'(request: ModelRequest, next: () => Promise<ModelRequest>): Promise<ModelRequest>
    /**
     * All tool calls of a step have run; rewrite their results before the
     * `tool/result` events are logged (per-step checks hook in here).
     * @mode waterfall
     */
    'agent/step-results'(batch: StepBatch, next: () => Promise<StepBatch['results']>): Promise<StepBatch['results']>
  }
}

const Config = Schema.object({
  maxSteps: Schema.natural().min(1).default(50).description('Steps (model requests) allowed in one turn before it ends with an error.'),
  systemPrompt: Schema.string().default(
    'You are a coding agent working in a workspace. Use the tools to read, write and edit files and to run commands. '
    + 'Writes are verified after each change; a result that starts with "rolled back:" means your change was undone — read why and fix it. '
    + 'Text starting with "[harness: <name>]" is a notice from the harness (proofs, handoffs), not from the user.',
  ).description('System prompt sent first in every request.'),
})

/** The `agents` service: one agent loop per session. */
export class AgentService extends Service {
  static inject = ['sessions', 'tools', 'llm']
  static Config = Config
  private readonly _agents = new Set<Agent>()

  constructor(ctx: Context, public config: AgentService.Config = Config({})) {
    super(ctx, 'agents')
    ctx.effect(() => () => Promise.all([...this._agents].map(a => a.dispose())).then(() => {}))
    // A disposed agent leaves the service: a long chat or dev session does not grow without bound.
    ctx.on('agent/status', (agent, status) => {
      if (status === 'disposed') this._agents.delete(agent)
    })
  }

  /** Create the loop for a session; `agent.dispose()` removes it from `list()`. */
  create(session: Session): Agent {
    const agent = new Agent(this.ctx, session, { maxSteps: this.config.maxSteps, systemPrompt: this.config.systemPrompt })
    this._agents.add(agent)
    return agent
  }

  list(): Agent[] {
    return [...this._agents]
  }
}

export namespace AgentService {
  export type Config = Schemastery.TypeT<typeof Config>
}

export default AgentService
export { Agent, type AgentStatus, type StepBatch, type StopRefusal }
export { buildMessages } from './messages.ts'
export type { ToolCallData, ToolResult }
