import type { Context } from '@deepseek-ai/cordis'
import type { Session, TurnEndReason, ToolCallData } from 'dsh-session'
import type { ToolResult } from 'dsh-tools'
import type { ModelRequest } from 'dsh-llm'
import { buildMessages } from './messages.ts'

export type AgentStatus = 'idle' | 'running' | 'disposed'

/** One step's tool calls and what the `tools/execute` waterfall returned for each. */
export interface StepBatch {
  agent: Agent
  session: Session
  turn: number
  step: number
  results: { call: ToolCallData; result: ToolResult }[]
}

/** A refused stop: the turn goes on with one more step, the model reading `text` as a notice from `source`. */
export interface StopRefusal {
  source: string
  text: string
}

export interface AgentOptions {
  maxSteps: number
  systemPrompt?: string
}

/** Thrown inside a turn to end it with a given reason. */
class TurnStop extends Error {
  constructor(readonly reason: TurnEndReason) {
    super(reason)
  }
}

let nextAgentId = 0

/**
 * The turn/step loop for one session. `send` queues a user message and
 * runs turns until the queue is empty; a turn runs steps until the model
 * calls no tool. Never throws for a failing turn: the failure is logged as
 * an `error` event and the turn ends with reason `error`.
 */
export class Agent {
  readonly id = `agent-${++nextAgentId}`
  private _status: AgentStatus = 'idle'
  private readonly _queue: string[] = []
  private _running?: Promise<void>
  private _abort?: AbortController
  private _stopReason?: TurnEndReason
  private _requests: number
  private _turns: number
  /** Reason the most recent turn ended with. */
  lastReason?: TurnEndReason

  constructor(private readonly ctx: Context, readonly session: Session, private readonly options: AgentOptions) {
    // A resumed session continues its own numbering.
    this._requests = session.events.filter(e => e.type === 'step/start').length
    this._turns = session.events.filter(e => e.type === 'turn/start').length
  }

  get status(): AgentStatus {
    return this._status
  }

  private setStatus(status: AgentStatus) {
    if (this._status === status) return
    this._status = status
    this.ctx.emit('agent/status', this, status)
  }

  /** Queue a user message; resolves when the agent is idle again, with the last turn's end reason. */
  async send(text: string): Promise<TurnEndReason | undefined> {
    if (this._status === 'disposed') throw new Error(`${this.id} is disposed`)
    this._queue.push(text)
    this._running ??= this.drain().finally(() => { this._running = undefined })
    await this._running
    return this.lastReason
  }

  /** Resolves when no turn is running. */
  async idle(): Promise<void> {
    while (this._running) await this._running
  }

  /** Abort the running turn (it ends with reason `aborted`). Queued messages are dropped. */
  abort(reason: TurnEndReason = 'aborted') {
    this._queue.length = 0
    this._stopReason = reason
    this._abort?.abort(new TurnStop(reason))
  }

  /** Abort any running turn with reason `disposed` and stop accepting messages. */
  async dispose(): Promise<void> {
    if (this._status === 'disposed') return
    this.abort('disposed')
    await this.idle()
    this.setStatus('disposed')
  }

  private async drain() {
    this.setStatus('running')
    try {
      while (this._queue.length) {
        const texts = this._queue.splice(0)
        try {
          for (const text of texts) this.session.append('user/message', { text })
        } catch (error) {
          // A listener refused the message (e.g. a tripwire): no turn runs for it.
          this.ctx.logger('dsh-agent').warn(error)
          this.lastReason = 'error'
          continue
        }
        this.lastReason = await this.runTurn()
      }
    } finally {
      if (this._status !== 'disposed') this.setStatus('idle')
    }
  }

  private async runTurn(): Promise<TurnEndReason> {
    const turn = this._turns++
    const controller = new AbortController()
    this._abort = controller
    this._stopReason = undefined
    let reason: TurnEndReason = 'completed'
    let openStep: number | undefined
    // Results of calls that ran but are not logged yet (the step failed before its results were).
    let unlogged: StepBatch['results'] = []
    try {
      // A verdict still running from the turn before (background verdicts) is final before the prompt is read.
      await this.ctx.serial('verify/settle', this.session.id)
      this.session.append('turn/start', { turn })
      await this.ctx.parallel('agent/turn-start', this, turn)
      for (let step = 0; ; step++) {
        if (step >= this.options.maxSteps) throw new Error(`step limit reached: maxSteps is ${this.options.maxSteps} (dsh-agent config)`)
        this.checkAbort(controller)
        this.session.append('step/start', { turn, step })
        openStep = step
        await this.ctx.parallel('agent/step-start', this, turn, step)
        const { calls, invalid } = await this.requestModel(controller.signal)
        const batch: StepBatch = { agent: this, session: this.session, turn, step, results: [] }
        unlogged = batch.results
        for (const call of calls) {
          this.checkAbort(controller)
          this.session.append('tool/call', call)
          const why = invalid.get(call)
          // Arguments the model sent that are no JSON object never reach a tool: the model is told.
          const result = why !== undefined
            ? { content: invalidArgumentsMessage(call.name, why), isError: true }
            : await this.ctx.tools.execute({
              session: this.session, callId: call.callId, name: call.name, arguments: call.arguments, turn, step, signal: controller.signal,
            })
          batch.results.push({ call, result })
        }
        const results = await this.ctx.waterfall('agent/step-results', batch, async () => batch.results)
        unlogged = []
        this.logResults(results)
        await this.ctx.parallel('agent/step-end', this, turn, step)
        this.session.append('step/end', { turn, step })
        openStep = undefined
        if (calls.length) continue
        // The model stopped: a plugin may refuse (the turn is not done), once more, with a reason the model reads.
        const refusal = await this.ctx.serial('agent/stop', this, turn)
        if (!refusal) break
        this.session.append('context/message', refusal)
      }
    } catch (error) {
      // Calls that did run keep their (un-rewritten) results in the log: the
      // model must not be told a write or a command never returned when it did.
      if (unlogged.length) this.safeAppend(() => this.logResults(unlogged))
      reason = this._stopReason ?? (error instanceof TurnStop ? error.reason : 'error')
      if (reason === 'error') {
        const message = (error as Error)?.message ?? String(error)
        this.safeAppend(() => this.session.append('error', { message, source: 'agent' }))
        this.ctx.logger('dsh-agent').warn('turn %d of %s ended with an error: %s', turn, this.session.id, message)
      }
    }
    try {
      // The turn ends with every verdict of its calls final.
      await this.ctx.serial('verify/settle', this.session.id)
    } catch (error) {
      this.ctx.logger('dsh-agent').warn(error)
    }
    if (openStep !== undefined) {
      const step = openStep
      this.safeAppend(() => this.session.append('step/end', { turn, step }))
    }
    this.safeAppend(() => this.session.append('turn/end', { turn, reason }))
    this._abort = undefined
    try {
      await this.ctx.parallel('agent/turn-end', this, turn, reason)
    } catch (error) {
      this.ctx.logger('dsh-agent').warn(error)
    }
    try {
      await this.session.flush()
    } catch (error) {
      if (this.ctx.bail('agent/flush-failed', this, error as Error) !== true) this.ctx.logger('dsh-agent').warn('flush of session %s failed: %s', this.session.id, (error as Error).message)
    }
    return reason
  }

  private logResults(results: StepBatch['results']) {
    for (const { call, result } of results) {
      this.session.append('tool/result', {
        callId: call.callId, name: call.name, content: result.content, isError: !!result.isError,
        ...(result.exitCode !== undefined ? { exitCode: result.exitCode } : {}),
      })
    }
  }

  private checkAbort(controller: AbortController) {
    if (controller.signal.aborted) throw new TurnStop(this._stopReason ?? 'aborted')
  }

  /** An append that must not mask the original failure (e.g. a tripwire already fired). */
  private safeAppend(append: () => void) {
    try {
      append()
    } catch (error) {
      this.ctx.logger('dsh-agent').warn(error)
    }
  }

  private async requestModel(signal: AbortSignal): Promise<{ calls: ToolCallData[]; invalid: Map<ToolCallData, string> }> {
    const base: ModelRequest = {
      session: this.session,
      messages: buildMessages(this.session.events, this.options.systemPrompt),
      tools: this.ctx.tools.schemas(),
      requestIndex: this._requests++,
    }
    const request = await this.ctx.waterfall('agent/request', base, async () => base)
    let text = ''
    const calls: ToolCallData[] = []
    const invalid = new Map<ToolCallData, string>()
    for await (const chunk of this.ctx.llm.stream(request, signal)) {
      if (signal.aborted) break
      switch (chunk.type) {
        case 'text':
          text += chunk.text
          this.session.append('assistant/chunk', { text: chunk.text })
          break
        case 'tool-call': {
          const call = { callId: chunk.id, name: chunk.name, arguments: chunk.arguments }
          calls.push(call)
          if (chunk.invalid !== undefined) invalid.set(call, chunk.invalid)
          break
        }
        case 'usage':
          this.session.append('usage', { inputTokens: chunk.inputTokens, outputTokens: chunk.outputTokens })
          break
        case 'finish':
          if (chunk.reason === 'error') throw new Error('the model ended its answer with an error')
          break
      }
    }
    this.checkAbort(this._abort!)
    this.session.append('assistant/message', { text, toolCalls: calls })
    return { calls, invalid }
  }
}

/** The tool error for a call whose arguments the adapter could not read (`why`, from the adapter). */
function invalidArgumentsMessage(name: string, why: string): string {
  return `invalid arguments for ${name}: ${why}; nothing was run. Send the call again with its arguments as one JSON object.`
}
