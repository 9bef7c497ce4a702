import type { Context } from '@deepseek-ai/cordis'
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { readSessionLog, sessionLogPath, type Session, type SessionEvent, type SessionService } from 'dsh-session'
import type { ToolDefinition, ToolResult, ToolService } from 'dsh-tools'
import {
  textOf, type DsBlock, type DsMessageSource, type DsPostDecision, type DsPreStepDecision, type DsSession, type DsSessionEvent,
  type DsSessions, type DsToolExecution, type DsToolResult, type DsTools, type DsUserMessage, type DsAgent,
} from './deepseek-types.ts'
import { MirrorState, translateEvent } from './mirror.ts'
import type { HostOptions, ToolEffect } from './options.ts'

/** What starts the stderr line of a rollback (the rest is the first line of the model's rollback text). */
const ROLLBACK_PREFIX = 'dsh-host-deepseek: '

export type CreateUserMessage = (input: { content: DsBlock[]; source: DsMessageSource }) => DsUserMessage

export interface BridgeParts {
  /** The host's own context: sees the harness's `sessions` and `tools` and receives its events. */
  outer: Context
  /** The suite's scope: the facades answer to `sessions` and `tools` there. */
  inner: Context
  realSessions: DsSessions
  realTools: DsTools
  sessions: SessionService
  tools: ToolService
  options: HostOptions
  createUserMessage: CreateUserMessage
}

interface Mirror {
  /** Unset only while the suite's `session/created` listeners run. */
  session?: Session
  state: MirrorState
  /** Context messages the suite appended that the model has not been sent yet. */
  pending: { source: string; text: string }[]
}

/** What the suite's agent events carry: an id and the (mirror) session. */
interface AgentView {
  id: string
  session: Session
}

// The harness's events share names with the suite's (`tools/execute`,
// `session/event`, …) but not their shapes; these two helpers are the one
// place where a listener or an emit crosses between the two vocabularies.
type AnyListener = (...args: never[]) => unknown
function onHarness(ctx: Context, name: string, listener: AnyListener, options?: { prepend?: boolean }): () => void {
  return (ctx.on as unknown as (name: string, listener: AnyListener, options?: { prepend?: boolean }) => () => void)(name, listener, options)
}
function emitSuite(ctx: Context, receiver: object, name: string, ...args: unknown[]): Promise<void> {
  return (ctx.parallel as unknown as (receiver: object, name: string, ...args: unknown[]) => Promise<void>)(receiver, name, ...args)
}

function suiteResult(result: DsToolResult): ToolResult {
  const content = textOf(result.content)
  return result.isError ? { content, isError: true } : { content }
}

function sameResult(a: ToolResult, b: ToolResult): boolean {
  return a.content === b.content && Boolean(a.isError) === Boolean(b.isError)
}

/** The paths a call of a table tool may write, from its argument fields. */
function pathsOf(effect: ToolEffect, args: unknown): string[] {
  const fields = (args ?? {}) as Record<string, unknown>
  if (effect.readCommands?.includes(String(fields.command))) return []
  return (effect.paths ?? []).map(f => fields[f]).filter((p): p is string => typeof p === 'string' && p.length > 0)
}

/**
 * Translates between the DeepSeek Harness and the suite's facades, both ways:
 * harness sessions are mirrored into suite sessions (their log is the sidecar
 * JSONL in the vault), harness tool calls run through the suite's
 * `tools/execute` waterfall, verdicts come back as `tools/post-execute`
 * decisions, suite context messages reach the model at the next step, and
 * suite tools are registered in the harness's registry.
 */
export class Bridge {
  private readonly mirrors = new Map<string, Mirror>()
  private readonly runners = new Map<string, () => Promise<ToolResult>>()
  private readonly verdicts = new Map<symbol | string, ToolResult>()
  private readonly turns = new Map<string, number>()
  private readonly shadows = new Set<string>()
  private readonly exported = new Map<string, () => void>()
  private readonly p: BridgeParts

  constructor(parts: BridgeParts) {
    this.p = parts
  }

  attach(): void {
    const { outer, inner, options } = this.p
    for (const [name, effect] of Object.entries(options.tools)) this.registerShadow(name, effect)
    inner.on('session/event', (session, event) => this.onSuiteEvent(session, event))
    inner.on('tools/change', () => this.exportSuiteTools())
    this.exportSuiteTools()

    onHarness(outer, 'session/created', (session: DsSession) => { this.mirrorOf(session) })
    onHarness(outer, 'session/event', (session: DsSession, event: DsSessionEvent) => this.onHarnessEvent(session, event))
    onHarness(outer, 'session/flush', async (session: DsSession) => { await this.mirrors.get(session.id)?.session?.flush() })
    onHarness(outer, 'tools/execute', (exec: DsToolExecution, next: () => Promise<DsToolResult>) => this.onExecute(exec, next))
    onHarness(outer, 'tools/post-execute', (exec: DsToolExecution, _result: DsToolResult, next: () => Promise<DsPostDecision>) => this.onPostExecute(exec, next))
    onHarness(outer, 'agent/pre-step', (payload: { agent: DsAgent; turn: number }, next: () => Promise<DsPreStepDecision>) => this.onPreStep(payload, next))
    onHarness(outer, 'agent/status', (payload: { agent: DsAgent; status: string }) => this.onStatus(payload.agent, payload.status))
    for (const session of this.p.realSessions.list()) this.mirrorOf(session)
  }

  /** The suite's session for a harness session, created (or re-seeded from its sidecar log) on first sight. */
  mirrorOf(real: DsSession): Mirror | undefined {
    const known = this.mirrors.get(real.id)
    if (known) return known
    const cwd = real.header.cwd ?? process.cwd()
    const vault = this.p.options.vault ? resolve(cwd, this.p.options.vault) : join(cwd, '.dsh')
    const file = sessionLogPath(vault, real.id)
    const seed = existsSync(file) ? readSessionLog(file).records : []
    const mirror: Mirror = { state: new MirrorState(), pending: [] }
    // Registered before `create`: context a plugin appends inside `session/created` (a handoff) is kept.
    this.mirrors.set(real.id, mirror)
    try {
      mirror.session = this.p.sessions.create(real.id, { cwd, vault, ...(seed.length ? { seed } : {}) })
    } catch (error) {
      this.mirrors.delete(real.id)
      this.p.outer.logger('dsh-host-deepseek').warn('session %s not mirrored: %s', real.id, (error as Error).message)
      return undefined
    }
    return mirror
  }

  private mirrorById(id: string | undefined): Mirror | undefined {
    return id === undefined ? undefined : this.mirrors.get(id)
  }

  private onHarnessEvent(real: DsSession, event: DsSessionEvent): void {
    const mirror = this.mirrorOf(real)
    if (!mirror?.session) return
    const translated = translateEvent(event, mirror.state)
    if (!translated) return
    try {
      mirror.session.append(translated.type, translated.data as never)
    } catch (error) {
      this.p.outer.logger('dsh-host-deepseek').warn('session %s: %s not mirrored: %s', real.id, translated.type, (error as Error).message)
    }
  }

  private onSuiteEvent(session: Session, event: SessionEvent): void {
    if (event.type !== 'context/message') return
    const mirror = this.mirrors.get(session.id)
    mirror?.pending.push({ source: event.data.source, text: event.data.text })
  }

  // Tools ---------------------------------------------------------------------

  private registerShadow(name: string, effect: ToolEffect): void {
    const def: ToolDefinition = {
      name,
      description: `The DeepSeek Harness's ${name} tool.`,
      parameters: { type: 'object' },
      effects: effect.effects,
      ...(effect.effects === 'write' ? { paths: (args: unknown) => pathsOf(effect, args) } : {}),
      execute: (_args, exec) => {
        const run = this.runners.get(exec.callId)
        return run ? run() : { content: `${name} runs only inside the DeepSeek Harness's tool pipeline`, isError: true }
      },
    }
    this.p.tools.register(def)
    this.shadows.add(name)
  }

  private async onExecute(exec: DsToolExecution, next: () => Promise<DsToolResult>): Promise<DsToolResult> {
    const mirror = this.mirrorById(exec.agent?.session.id)
    if (!mirror?.session || !this.shadows.has(exec.name)) return next()
    let real: DsToolResult | undefined
    this.runners.set(exec.callId, async () => suiteResult(real = await next()))
    let ours: ToolResult
    try {
      ours = await this.p.tools.execute({ session: mirror.session, callId: exec.callId, name: exec.name, arguments: exec.arguments, ...(exec.signal ? { signal: exec.signal } : {}) })
    } finally {
      this.runners.delete(exec.callId)
    }
    const key = exec.token ?? exec.callId
    if (real === undefined) {
      // A suite plugin vetoed the call (e.g. a snapshot that could not be taken): the tool never ran.
      this.verdicts.set(key, { ...ours, isError: true })
      return { isError: true, error: { message: ours.content }, content: [{ type: 'text', text: ours.content }] }
    }
    if (!sameResult(ours, suiteResult(real))) this.verdicts.set(key, ours)
    return real
  }

  private async onPostExecute(exec: DsToolExecution, next: () => Promise<DsPostDecision>): Promise<DsPostDecision> {
    const decision = await next()
    const key = exec.token ?? exec.callId
    const verdict = this.verdicts.get(key)
    if (!verdict) return decision
    this.verdicts.delete(key)
    // Headless, the terminal shows only the final answer: one line per rollback on stderr, as `dsh run` shows it.
    if (verdict.isError && verdict.content.startsWith('rolled back:')) process.stderr.write(`${ROLLBACK_PREFIX}${verdict.content.split('\n', 1)[0]}\n`)
    const text: DsBlock[] = [{ type: 'text', text: verdict.content }]
    const contexts = decision.additionalContexts ? { additionalContexts: decision.additionalContexts } : {}
    return verdict.isError ? { kind: 'block', feedback: text, ...contexts } : { kind: 'accept', content: text, ...contexts }
  }

  /** Register the suite's own tools (`checkpoint`) in the harness's registry, with an `output` declaration. */
  private exportSuiteTools(): void {
    const current = new Set(this.p.tools.list().map(d => d.name).filter(n => !this.shadows.has(n)))
    for (const [name, dispose] of this.exported) {
      if (!current.has(name)) {
        dispose()
        this.exported.delete(name)
      }
    }
    for (const name of current) {
      if (this.exported.has(name)) continue
      const def = this.p.tools.get(name)!
      try {
        this.exported.set(name, this.p.realTools.register({
          name,
          description: def.description,
          parameters: def.parameters,
          output: { schema: { type: 'string' }, render: (_args, value) => [{ type: 'text', text: String(value) }] },
          execute: async (args, exec) => {
            const mirror = this.mirrorById(exec.agent?.session.id)
            if (!mirror?.session) throw new Error(`${name}: this call has no suite session`)
            const result = await this.p.tools.execute({ session: mirror.session, callId: exec.callId, name, arguments: args, ...(exec.signal ? { signal: exec.signal } : {}) })
            if (result.isError) throw new Error(result.content)
            return result.content
          },
        }))
      } catch (error) {
        this.p.outer.logger('dsh-host-deepseek').warn('tool %s not registered in the harness: %s', name, (error as Error).message)
      }
    }
  }

  // Agents --------------------------------------------------------------------

  private agentView(agent: DsAgent, session: Session): AgentView {
    return { id: agent.id, session }
  }

  private async onPreStep(payload: { agent: DsAgent; turn: number }, next: () => Promise<DsPreStepDecision>): Promise<DsPreStepDecision> {
    const mirror = this.mirrorOf(payload.agent.session)
    if (!mirror?.session) return next()
    const agent = this.agentView(payload.agent, mirror.session)
    const { inner, sessions } = this.p
    if (this.turns.get(agent.id) !== payload.turn) {
      this.turns.set(agent.id, payload.turn)
      await emitSuite(inner, sessions, 'agent/turn-start', agent)
    }
    await emitSuite(inner, sessions, 'agent/step-start', agent)
    const decision = await next()
    if (decision.kind !== 'enter' || mirror.pending.length === 0) return decision
    const contexts = mirror.pending.splice(0).map(c => this.p.createUserMessage({
      content: [{ type: 'text', text: c.text }],
      source: { kind: 'plugin', plugin: `${this.p.options.source}/${c.source}` },
    }))
    return { kind: 'enter', messages: [...decision.messages, ...contexts] }
  }

  private onStatus(agent: DsAgent, status: string): void {
    const mirror = this.mirrors.get(agent.session.id)
    if (!mirror?.session || (status !== 'idle' && status !== 'running')) return
    const { inner, sessions } = this.p
    const emit = inner.emit as unknown as (receiver: object, name: string, ...args: unknown[]) => void
    try {
      emit(sessions, 'agent/status', this.agentView(agent, mirror.session), status)
    } catch (error) {
      this.p.outer.logger('dsh-host-deepseek').warn('agent/status not delivered: %s', (error as Error).message)
    }
  }
}
