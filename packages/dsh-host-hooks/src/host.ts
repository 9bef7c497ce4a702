import type { Context } from '@deepseek-ai/cordis'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { PathEscapeError, resolveInside } from 'dsh-common'
import { readSessionLog, sessionLogPath, type RawSessionEvent, type Session, type SessionService } from 'dsh-session'
import type { ToolResult, ToolService } from 'dsh-tools'
import type { HookAdapter, HookAnswer, HookCall, PlannedTool } from './adapter.ts'
import { ChainWitness, type WitnessHead } from './chain-witness.ts'
import { configName, pictureConfig, restoreConfig, type ConfigPicture } from './config-guard.ts'
import { MESSAGES } from './messages.ts'

export interface HookHostParts {
  /** The suite's root context (its plugins listen there). */
  ctx: Context
  sessions: SessionService
  tools: ToolService
  /** The one workspace this host serves. */
  workspace: string
  vault: string
  /** The host's log (what it found that the model is told too). */
  log?: (line: string) => void
}

/** A guarded call between its pre and post hooks. */
interface Pending {
  name: string
  effects: PlannedTool['effects']
  /** A writer's paths (absolute) and their content's hash once the snapshot was taken (null: absent). */
  before: Map<string, string | null>
  /** When its pre hook was answered "go on": from then on the agent may run it, refuse it, or fail it without a post hook. */
  answeredAt?: number
  /** Its post hook came (the agent's result is being judged). */
  posted: boolean
  /** Settled without its post hook (see {@link HookHost.settle}). */
  settling?: Promise<void>
  /** A writer's hashes when it was settled, to tell a post hook that comes later whether it wrote since. */
  atSettle?: Map<string, string | null>
  cap?: NodeJS.Timeout
  /** Resolved when the suite's waterfall reached the tool: the snapshot is taken. */
  entered: Promise<void>
  markEntered: () => void
  /** Hands the agent's result to the waiting waterfall (set once entered). */
  deliver?: (result: ToolResult) => void
  /** The post hook came before the waterfall reached the tool (the pre hook gave up waiting). */
  stale: boolean
  final: Promise<ToolResult>
  /** The guard's own entries in the agent's configuration when the call was let run. */
  config?: ConfigPicture
}

interface Hosted {
  session?: Session
  turn: number
  step: number
  open: boolean
  /** Context the suite appended that the model has not been shown. */
  context: string[]
  calls: Map<string, Pending>
  /** The agent whose hooks this session's calls come from. */
  adapter?: HookAdapter
  /** Calls settled without their post hook, until it comes (if ever). */
  settled: Map<string, Pending>
  /** The reason the last stop was refused with: an agent that sends it back as a prompt (Gemini CLI) goes on with the same turn. */
  refused?: string
  lastSeen: number
}

/** How long another session's write waits on a call whose post hook has not come before settling it: a file tool is done at once; a command may run a while. */
const LEASE_MS = { write: 5_000, shell: 30_000 } as const
/** A call whose post hook never came and that nothing else settled is settled after this long (the host may then go idle). */
const CAP_MS = 600_000

function hashOf(file: string): string | null {
  try {
    return createHash('sha256').update(readFileSync(file)).digest('hex')
  } catch {
    // ENOENT/EISDIR: nothing (a file) there.
    return null
  }
}

function hashes(files: Iterable<string>): Map<string, string | null> {
  return new Map([...files].map(f => [f, hashOf(f)]))
}

function differing(a: Map<string, string | null>, b: Map<string, string | null>): string[] {
  return [...a.keys()].filter(f => a.get(f) !== b.get(f))
}

/** A `suite-tool` pre hook waiting for its MCP call. */
interface AwaitedSuiteCall {
  sessionId: string
  name: string
  key: string
}

type AgentView = { id: string; session: Session }
/** What the host reads of dsh-snapshot's `snapshot/recovered` report (it does not depend on the plugin). */
interface RecoveredReport {
  journals: { sessionId?: string; scopes: { restored: string[]; deleted: string[]; left?: { path: string }[] }[] }[]
}
type On = (name: string, listener: (report: RecoveredReport) => void) => void
type Emit = (name: string, ...args: unknown[]) => Promise<void>
type Serial = (name: string, ...args: unknown[]) => Promise<unknown>
type OnAppended = (name: 'proofchain/appended', listener: (entry: WitnessHead, file: string) => void) => () => void

/** A call whose verdict still runs in the background (dsh-dstvalid's `verify/deferred`, no `verify/verdict` after it yet). */
export interface PendingVerdict {
  sessionId: string
  callId: string
  tool: string
  paths: string[]
}

/** The calls of a session whose verdict is pending, from its events (the verdict's lines follow `verify/deferred` when it is final). */
function pendingIn(session: Session): PendingVerdict[] {
  const pending = new Map<string, PendingVerdict>()
  for (const e of session.events as readonly { type: string; data: unknown }[]) {
    const d = (e.data ?? {}) as { callId?: unknown; tool?: unknown; paths?: unknown }
    if (e.type === 'verify/deferred') pending.set(String(d.callId), { sessionId: session.id, callId: String(d.callId), tool: String(d.tool), paths: Array.isArray(d.paths) ? d.paths.map(String) : [] })
    if (e.type === 'verify/verdict') pending.delete(String(d.callId))
  }
  return [...pending.values()]
}

/** JSON with sorted keys: the pre hook's `tool_input` and the MCP call's arguments are the same value, not always the same text. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().map(k => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

/**
 * Turns an agent's hook calls into the suite's session log and tool
 * pipeline: a pre hook starts the call in the suite's `tools/execute`
 * waterfall (dsh-snapshot captures), whose tool body waits for the post
 * hook with the agent's result; dsh-dstvalid then judges it, and what the
 * waterfall returns becomes the agent's answer. One host per workspace.
 */
export class HookHost {
  private readonly hosted = new Map<string, Hosted>()
  private readonly planned = new WeakMap<object, string[]>()
  private readonly shadows = new Set<string>()
  private readonly awaited: AwaitedSuiteCall[] = []
  private suiteCalls = 0
  private readonly p: HookHostParts
  /** The proof chain's head as the suite wrote it, held where the agent's shell cannot rewrite it. */
  readonly witness = new ChainWitness()

  constructor(parts: HookHostParts) {
    this.p = parts
    ;(parts.ctx.on as unknown as OnAppended).call(parts.ctx, 'proofchain/appended', (entry, file) => this.witness.appended(file, entry))
    parts.ctx.on('session/event', (session, event) => {
      if (event.type === 'context/message') this.hosted.get(session.id)?.context.push(event.data.text)
    })
    // A restart after the host died: the model of each session whose call was cut short is told what recovery did.
    ;(parts.ctx.on as unknown as On).call(parts.ctx, 'snapshot/recovered', report => {
      for (const j of report.journals) {
        if (!j.sessionId) continue
        const undone = [...new Set(j.scopes.flatMap(s => [...s.restored, ...s.deleted]))]
        const left = [...new Set(j.scopes.flatMap(s => (s.left ?? []).map(l => l.path)))]
        if (!undone.length && !left.length) continue
        const h = this.hosted.get(j.sessionId) ?? this.hostedOf(j.sessionId)
        h.context.push(MESSAGES.recovered(undone, left))
      }
    })
  }

  /** True while a guarded call waits between its pre and post hooks (the host must not exit then). */
  busy(): boolean {
    return [...this.hosted.values()].some(h => h.calls.size > 0)
  }

  /** Verdicts still running in the background, in every session served (what a reader of the verdicts would wait for). */
  pendingVerdicts(): PendingVerdict[] {
    return [...this.hosted.values()].flatMap(h => (h.session ? pendingIn(h.session) : []))
  }

  /**
   * Wait until every verdict still running in the background is final (its
   * rollback applied), then write the session logs: what a reader of the
   * verdicts (dsh proof show, dsh claims check) reads next is the truth.
   * Resolves with the verdicts that were pending.
   */
  async settleVerdicts(): Promise<PendingVerdict[]> {
    const was = this.pendingVerdicts()
    for (const h of this.hosted.values()) {
      if (!h.session) continue
      await (this.p.ctx.serial as unknown as Serial).call(this.p.ctx, 'verify/settle', h.session.id)
      await h.session.flush()
    }
    return was
  }

  /** Sessions seen, newest first. */
  sessionIds(): string[] {
    return [...this.hosted.entries()].sort((a, b) => b[1].lastSeen - a[1].lastSeen).map(([id]) => id)
  }

  /**
   * Answer one hook call of `adapter`'s agent: the JSON to write on the
   * hook's stdout, or undefined for none. Never throws for the agent's input:
   * a payload it cannot read or a failing plugin becomes a fail-open answer
   * with a note.
   * @param gone aborted when the hook client stopped waiting: an answer it can no longer take is kept for the session's next hook.
   */
  async handle(adapter: HookAdapter, event: string, payload: unknown, gone?: AbortSignal): Promise<unknown> {
    const acceptsContext = adapter.hooks.find(h => h.event === event)?.context ?? false
    let call: HookCall
    try {
      call = adapter.translate(event, payload)
    } catch (error) {
      return adapter.reply(event, { kind: 'continue', context: MESSAGES.unreadable((error as Error).message) })
    }
    if (call.kind === 'ignore') return undefined
    const h = this.hostedOf(call.sessionId)
    h.adapter = adapter
    for (const why of await this.witness.check()) {
      this.p.log?.(`proof chain: ${why}`)
      for (const other of this.hosted.values()) other.context.push(MESSAGES.chainRewritten(why))
    }
    let answer: HookAnswer
    try {
      // The agent moved on: a call of this session still without its post hook was refused or failed before it ran (or ran without one).
      await this.settleOpen(h, call.kind === 'post-tool' ? call.callId : undefined)
      answer = await this.answer(h, call)
    } catch (error) {
      answer = { kind: 'continue', context: this.note(h, `the guard failed on this hook (${(error as Error).message})`) }
    }
    if (gone?.aborted) {
      // The agent went on without this answer: tell the model at its next hook.
      const text = answer.kind === 'continue' ? answer.context : answer.reason
      if (text) h.context.push(text)
      return undefined
    }
    if (answer.kind === 'continue' && acceptsContext) {
      const context = [answer.context, ...h.context.splice(0)].filter(Boolean).join('\n\n')
      return adapter.reply(event, context ? { kind: 'continue', context } : { kind: 'continue' })
    }
    return adapter.reply(event, answer)
  }

  private async answer(h: Hosted, call: Exclude<HookCall, { kind: 'ignore' }>): Promise<HookAnswer> {
    switch (call.kind) {
      case 'session-start':
        this.ensureSession(h, call.sessionId)
        return { kind: 'continue' }
      case 'prompt':
        if (h.open && h.refused !== undefined && call.text === h.refused) {
          // The refused stop's reason, sent back as the prompt that continues the turn (Gemini CLI's AfterAgent deny).
          h.refused = undefined
          return { kind: 'continue' }
        }
        await this.openTurn(h, call.sessionId, call.text)
        return { kind: 'continue' }
      case 'stop': {
        const refusal = await this.refuseStop(h)
        if (refusal) return { kind: 'refuse', reason: refusal }
        await this.closeTurn(h, 'completed')
        return { kind: 'continue' }
      }
      case 'suite-tool':
        this.ensureSession(h, call.sessionId)
        this.awaited.push({ sessionId: call.sessionId, name: call.name, key: canonical(call.arguments) })
        return { kind: 'continue' }
      case 'pre-tool':
        return this.pre(h, call.sessionId, call.callId, call.tool)
      case 'post-tool':
        return this.post(h, call.callId, call.name, call.result)
    }
  }

  // Sessions and turns ---------------------------------------------------------

  private hostedOf(id: string): Hosted {
    let h = this.hosted.get(id)
    if (!h) {
      h = { turn: 0, step: 0, open: false, context: [], calls: new Map(), settled: new Map(), lastSeen: 0 }
      this.hosted.set(id, h)
    }
    h.lastSeen = Date.now()
    return h
  }

  /** The suite's session for the agent's: created (or re-seeded from its log in the vault) on first sight. */
  private ensureSession(h: Hosted, id: string): Session {
    if (h.session) return h.session
    const { workspace, vault } = this.p
    const file = sessionLogPath(vault, id)
    const seed = existsSync(file) ? readSessionLog(file).records : []
    // Registered before `create`: a handoff appended inside `session/created` is collected.
    h.session = this.p.sessions.create(id, { cwd: workspace, vault, ...(seed.length ? { seed } : {}) })
    this.resume(h, seed)
    return h.session
  }

  /** Turn and step numbers from a seeded log; a turn a previous host left open is closed as aborted. */
  private resume(h: Hosted, seed: readonly RawSessionEvent[]): void {
    for (const e of seed) {
      const data = e.data as { turn?: number; step?: number }
      if (e.type === 'turn/start') Object.assign(h, { turn: data.turn ?? h.turn, step: 0, open: true })
      if (e.type === 'turn/end') h.open = false
      if (e.type === 'step/start') h.step = data.step ?? h.step
    }
    if (!h.open) return
    const last = [...seed].reverse().find(e => e.type === 'step/start' || e.type === 'step/end')
    if (last?.type === 'step/start') h.session!.append('step/end', { turn: h.turn, step: h.step })
    h.session!.append('turn/end', { turn: h.turn, reason: 'aborted' })
    h.open = false
  }

  private agent(h: Hosted, id: string): AgentView {
    return { id: `hooks:${id}`, session: h.session! }
  }

  private emit(name: string, ...args: unknown[]): Promise<void> {
    return (this.p.ctx.parallel as unknown as Emit).call(this.p.ctx, name, ...args)
  }

  private async openTurn(h: Hosted, id: string, text?: string): Promise<void> {
    const session = this.ensureSession(h, id)
    if (h.open) await this.closeTurn(h, 'completed')
    if (text) session.append('user/message', { text })
    h.turn += 1
    h.step = 1
    h.open = true
    session.append('turn/start', { turn: h.turn })
    session.append('step/start', { turn: h.turn, step: h.step })
    const agent = this.agent(h, id)
    await this.emit('agent/turn-start', agent, h.turn)
    await this.emit('agent/step-start', agent, h.turn, h.step)
  }

  /**
   * The agent stopped: the suite may refuse (`agent/stop`, as the lean
   * harness asks it), e.g. while the turn leaves the project worse than it
   * began. The refusal is logged as the model's context and answered as the
   * agent's stop block; the turn stays open.
   */
  private async refuseStop(h: Hosted): Promise<string | undefined> {
    const session = h.session
    if (!session || !h.open) return undefined
    // Calls whose post hook never came are settled first: their verdicts are part of what the stop is judged on.
    await this.settleOpen(h)
    const serial = this.p.ctx.serial as unknown as (name: string, ...args: unknown[]) => Promise<{ source: string; text: string } | undefined>
    const refusal = await serial.call(this.p.ctx, 'agent/stop', this.agent(h, session.id), h.turn)
    if (!refusal) return undefined
    session.append('context/message', refusal)
    // Said as the stop's answer, not again at the next hook.
    const at = h.context.lastIndexOf(refusal.text)
    if (at !== -1) h.context.splice(at, 1)
    h.refused = refusal.text
    return refusal.text
  }

  private async closeTurn(h: Hosted, reason: 'completed' | 'disposed'): Promise<void> {
    const session = h.session
    if (!session || !h.open) return
    // A call whose post hook never came (Codex fires none after an apply_patch that failed its own checks) ends with its turn at the latest.
    await this.settleOpen(h)
    // Verdicts still running in the background (dsh-dstvalid) are final before the turn ends.
    await (this.p.ctx.serial as unknown as Serial).call(this.p.ctx, 'verify/settle', session.id)
    session.append('step/end', { turn: h.turn, step: h.step })
    session.append('turn/end', { turn: h.turn, reason })
    h.open = false
    h.refused = undefined
    await this.emit('agent/turn-end', this.agent(h, session.id), h.turn, reason)
    await session.flush()
  }

  /** Close every open turn (the host is going away) and flush the logs. */
  async shutdown(): Promise<void> {
    for (const h of this.hosted.values()) await this.closeTurn(h, 'disposed')
  }

  /** The note that something was not verified (given each time: the model must not take a later unchecked write for a checked one). */
  private note(_h: Hosted, why: string): string {
    return MESSAGES.notVerified(why)
  }

  // Calls without their post hook ------------------------------------------------

  /** Settle every call of `h` the agent was told to go on with and whose post hook has not come (but `except`). */
  private async settleOpen(h: Hosted, except?: string): Promise<void> {
    for (const [callId, pending] of [...h.calls]) {
      if (callId !== except && pending.answeredAt !== undefined && !pending.posted) await this.settle(h, callId)
    }
  }

  /**
   * Before a call of `h`: another session's call still without its post
   * hook holds the workspace (the suite takes writes of two sessions in
   * turn); past its lease it is settled, so no session waits on a call the
   * agent refused.
   */
  private async leaseOthers(h: Hosted): Promise<void> {
    for (const other of this.hosted.values()) {
      if (other === h) continue
      for (const [callId, pending] of [...other.calls]) {
        if (pending.answeredAt === undefined || pending.posted) continue
        const wait = pending.answeredAt + LEASE_MS[pending.effects] - Date.now()
        if (wait > 0) {
          let timer: NodeJS.Timeout | undefined
          await Promise.race([pending.final, new Promise(r => { timer = setTimeout(r, wait) })])
          clearTimeout(timer)
        }
        if (other.calls.get(callId) === pending && !pending.posted) await this.settle(other, callId)
      }
    }
  }

  /**
   * End a call whose post hook did not come: its snapshot is checked
   * against the files. A writer that changed nothing is released as a call
   * that did not run; one whose files changed, and any command (its changes
   * are measured), is judged as that call. What the suite says about it
   * reaches the model at its next context-taking hook.
   */
  private settle(h: Hosted, callId: string): Promise<void> {
    const pending = h.calls.get(callId)
    if (!pending) return Promise.resolve()
    return pending.settling ??= (async () => {
      clearTimeout(pending.cap)
      const now = hashes(pending.before.keys())
      const wrote = differing(pending.before, now)
      const result: ToolResult = pending.effects === 'write' && wrote.length
        ? { content: MESSAGES.noResultButWrote(wrote.map(f => this.relative(f))) }
        : { content: MESSAGES.noResult, isError: true }
      pending.atSettle = now
      h.settled.set(callId, pending)
      const final = await this.finish(h, callId, pending, result)
      if (final.content === result.content) return
      const added = final.content.startsWith(result.content) ? final.content.slice(result.content.length).trim() : final.content
      h.context.push(MESSAGES.settled(pending.name, added))
    })()
  }

  private relative(file: string): string {
    return file.startsWith(this.p.workspace + '/') ? file.slice(this.p.workspace.length + 1) : file
  }

  /** Hand the agent's (or the settled) result to the call's waterfall and log what it returned. */
  private async finish(h: Hosted, callId: string, pending: Pending, result: ToolResult): Promise<ToolResult> {
    pending.posted = true
    // The shadow tool returns with it: dsh-snapshot journals what the agent's tool left (tools/returned) before it is judged.
    pending.deliver?.(result)
    let final: ToolResult
    try {
      final = await pending.final
    } finally {
      h.calls.delete(callId)
    }
    h.session!.append('tool/result', {
      callId, name: pending.name, content: final.content, isError: !!final.isError, ...(final.exitCode !== undefined ? { exitCode: final.exitCode } : {}),
    })
    return final
  }

  /** The post hook of a call settled before it came: silent unless a writer wrote after it was settled. */
  private async late(h: Hosted, callId: string, name: string): Promise<HookAnswer> {
    const pending = h.settled.get(callId)!
    h.settled.delete(callId)
    await pending.settling
    const since = pending.atSettle ? differing(pending.atSettle, hashes(pending.atSettle.keys())) : []
    if (!since.length) return { kind: 'continue' }
    return { kind: 'continue', context: this.note(h, MESSAGES.afterSettle(name, since.map(f => this.relative(f)))) }
  }

  // Tool calls ----------------------------------------------------------------

  /** A suite tool standing for the agent's tool of that name: its body waits for the post hook. */
  private shadow(tool: PlannedTool): void {
    if (this.shadows.has(tool.name) || this.p.tools.get(tool.name)) return
    this.shadows.add(tool.name)
    this.p.tools.register({
      name: tool.name,
      description: `The agent's ${tool.name} tool (run by the agent; seen through its hooks).`,
      parameters: { type: 'object' },
      effects: tool.effects,
      ...(tool.effects === 'write' ? { paths: (args: unknown) => this.planned.get(args as object) ?? [] } : {}),
      execute: async (_args, exec) => {
        const h = this.hosted.get(exec.session.id)
        const pending = h?.calls.get(exec.callId)
        if (!pending) return { content: `${tool.name} runs only in the agent`, isError: true }
        return this.guardConfig(h!, exec.session.id, exec.callId, pending, await this.awaitAgent(pending))
      },
    })
  }

  /**
   * A call that changed the guard's own entries in the agent's configuration
   * is rolled back like a regression: those files are put back, then the
   * rest of the call (through dsh-snapshot), and the model is told why.
   */
  private async guardConfig(h: Hosted, sessionId: string, callId: string, pending: Pending, result: ToolResult): Promise<ToolResult> {
    if (!pending.config || !h.adapter) return result
    let restored: string[] | undefined
    try {
      restored = restoreConfig(h.adapter, this.p.workspace, pending.config)
    } catch (error) {
      return { content: MESSAGES.configNotRestored(pending.name, (error as Error).message), isError: true }
    }
    if (!restored) return result
    const names = restored.map(f => configName(f, this.p.workspace))
    await (this.p.ctx.serial as unknown as Serial).call(this.p.ctx, 'snapshot/rollback', { sessionId, callId, reason: `${pending.name} changed the guard's configuration` })
    return { content: MESSAGES.configGuarded(pending.name, names), isError: true }
  }

  private awaitAgent(pending: Pending): Promise<ToolResult> {
    return new Promise(resolve => {
      if (pending.stale) return resolve({ content: 'ran before its snapshot was taken', isError: true })
      pending.deliver = resolve
      pending.markEntered()
    })
  }

  private async pre(h: Hosted, id: string, callId: string, tool: PlannedTool): Promise<HookAnswer> {
    if (!h.open) await this.openTurn(h, id)
    const session = h.session!
    if (h.calls.has(callId)) return { kind: 'continue' }
    for (const path of tool.paths) {
      try {
        resolveInside(this.p.workspace, path)
      } catch (error) {
        if (!(error instanceof PathEscapeError)) throw error
        return { kind: 'deny', reason: MESSAGES.outside(path, this.p.workspace) }
      }
    }
    this.shadow(tool)
    const args = { ...tool.arguments }
    if (tool.effects === 'write') this.planned.set(args, tool.paths)
    session.append('tool/call', { callId, name: tool.name, arguments: args })
    let markEntered!: () => void
    const entered = new Promise<void>(r => { markEntered = r })
    const files = tool.effects === 'write' ? tool.paths.map(p => resolveInside(this.p.workspace, p)) : []
    const pending: Pending = {
      name: tool.name, effects: tool.effects, before: new Map(), posted: false, stale: false, entered, markEntered, final: Promise.resolve({ content: '' }),
    }
    h.calls.set(callId, pending)
    await this.leaseOthers(h)
    pending.final = this.p.tools.execute({ session, callId, name: tool.name, arguments: args, turn: h.turn, step: h.step })
    const first = await Promise.race([pending.entered.then(() => 'entered' as const), pending.final.then(() => 'done' as const)])
    if (first === 'entered') {
      // Nothing runs between the snapshot and this answer: what the files hold now is what the call found.
      pending.before = hashes(files)
      if (h.adapter) pending.config = pictureConfig(h.adapter, this.p.workspace)
      pending.answeredAt = Date.now()
      pending.cap = setTimeout(() => { void this.settle(h, callId) }, CAP_MS)
      pending.cap.unref()
      return { kind: 'continue' }
    }
    // A suite plugin answered without running the tool (a snapshot that could not be taken): the agent must not run it.
    const vetoed = await pending.final
    h.calls.delete(callId)
    session.append('tool/result', { callId, name: tool.name, content: vetoed.content, isError: true })
    return { kind: 'deny', reason: vetoed.content }
  }

  private async post(h: Hosted, callId: string, name: string, result: ToolResult): Promise<HookAnswer> {
    if (h.settled.has(callId)) return this.late(h, callId, name)
    const pending = h.calls.get(callId)
    if (!pending) return { kind: 'continue', context: this.note(h, MESSAGES.unseen(name)) }
    clearTimeout(pending.cap)
    const late = !pending.deliver
    if (late) pending.stale = true
    const final = await this.finish(h, callId, pending, result)
    if (late) return { kind: 'continue', context: this.note(h, MESSAGES.late(name)) }
    if (final.isError && !result.isError) return { kind: 'block', reason: final.content }
    if (final.content === result.content) return { kind: 'continue' }
    const added = final.content.startsWith(result.content) ? final.content.slice(result.content.length).trim() : final.content
    return { kind: 'continue', context: added }
  }

  // The suite's own tools (MCP) --------------------------------------------------

  /** The suite's tools an agent is offered through MCP (every one that is not standing for an agent's tool). */
  suiteTools(): { name: string; description: string; parameters: unknown }[] {
    return this.p.tools.list().filter(d => !this.shadows.has(d.name)).map(d => ({ name: d.name, description: d.description, parameters: d.parameters }))
  }

  /**
   * Run one of the suite's tools for an MCP call, in the session whose pre
   * hook announced the same call (else the session seen last).
   */
  async callSuiteTool(name: string, args: unknown): Promise<ToolResult> {
    const key = canonical(args ?? {})
    const at = this.awaited.findIndex(a => a.name === name && a.key === key)
    const id = at === -1 ? this.sessionIds()[0] : this.awaited.splice(at, 1)[0]!.sessionId
    if (id === undefined) return { content: MESSAGES.noSession, isError: true }
    const h = this.hostedOf(id)
    if (!h.open) await this.openTurn(h, id)
    const session = h.session!
    const callId = `dsh-mcp-${++this.suiteCalls}`
    session.append('tool/call', { callId, name, arguments: args ?? {} })
    const result = await this.p.tools.execute({ session, callId, name, arguments: args ?? {}, turn: h.turn, step: h.step })
    session.append('tool/result', { callId, name, content: result.content, isError: !!result.isError })
    return result
  }
}
