import { Context, type Fiber } from '@deepseek-ai/cordis'
import AgentService, { type Agent } from 'dsh-agent'
import LlmService from 'dsh-llm'
import * as Scripted from 'dsh-llm/scripted'
import { definedOnly } from 'dsh-common'
import SessionService, { type CreateSessionOptions, type Session, type SessionEvent, type SessionEventType } from 'dsh-session'
import ToolService, { type ToolResult } from 'dsh-tools'
import * as WorkspaceTools from 'dsh-tools-workspace'
import { scriptLines } from './script.ts'
import { tempDir } from './temp.ts'
import { waitFor, type WaitOptions } from './wait.ts'

/** A plugin to load, with its config: what a cordis.yml entry names. */
export type PluginSpec = Parameters<Context['plugin']>[0] | [Parameters<Context['plugin']>[0], unknown]

export interface HarnessOptions {
  /**
   * Scripted model steps (objects or JSON Lines): with it, dsh-llm, the
   * scripted adapter and dsh-agent are loaded, and `agent` exists.
   */
  script?: readonly object[] | string
  /**
   * A model adapter plugin (a real one, e.g. dsh-llm-openai pointed at a
   * local server) instead of `script`: dsh-llm, this adapter and dsh-agent
   * are loaded, and `agent` exists.
   */
  model?: PluginSpec
  /** Plugins loaded after the core, in order (the suite plugins under test). */
  plugins?: readonly PluginSpec[]
  /** Config of dsh-tools-workspace, or false to leave the workspace tools out. */
  workspaceTools?: Partial<WorkspaceTools.Config> | false
  /** Config of dsh-agent (with `script` or `model`). */
  agent?: Partial<AgentService.Config>
  /** The workspace of the first session (default: a fresh temp dir). */
  workspace?: string
  /** The first session's id (default: a fresh UUID), vault and seed (a resumed session). */
  session?: Omit<CreateSessionOptions, 'cwd'> & { id?: string }
}

/** Where a tool call runs (what the agent loop would give it). */
export interface CallOptions {
  /** Default: `c1`, `c2`, … counted per harness. */
  callId?: string
  step?: number
  turn?: number
  /** Default: the harness's `session`. */
  session?: Session
}

export interface Harness {
  ctx: Context
  /** The first session's workspace. */
  workspace: string
  /** A session on `workspace`, created on first use (after every plugin was loaded). */
  readonly session: Session
  /** An agent on `session` (only with `script` or `model`), created on first use. */
  readonly agent: Agent
  /** Run one tool call through `ctx.tools.execute` (every `tools/execute` listener), as the agent loop would. */
  call(name: string, args: Record<string, unknown>, options?: CallOptions): Promise<ToolResult>
  /** Event types of `session`'s log, in order. */
  types(): string[]
  /** Load one more plugin (a hot reload, a toggle); disposed with the harness. */
  load(plugin: PluginSpec): Promise<Fiber>
  /** `waitFor` on this harness's context; `session` by default. */
  waitFor<K extends SessionEventType>(type: K, options?: WaitOptions<K> & { session?: Session }): Promise<SessionEvent<K>>
  /** Dispose every plugin, last loaded first. Idempotent. */
  dispose(): Promise<void>
}

/**
 * A real harness in one Context: dsh-session, dsh-tools, the workspace
 * tools, the scripted model and the agent loop (with `script`), then the
 * plugins under test — the same plugins `cordis.yml` loads, no mocks.
 */
export async function harness(options: HarnessOptions = {}): Promise<Harness> {
  const ctx = new Context()
  const fibers: Fiber[] = []
  const load = async (spec: PluginSpec): Promise<Fiber> => {
    const [plugin, config] = Array.isArray(spec) ? spec : [spec, undefined]
    const fiber = ctx.plugin(plugin, config)
    fibers.push(fiber)
    await fiber.await()
    return fiber
  }
  await load(SessionService)
  await load(ToolService)
  if (options.workspaceTools !== false) await load([WorkspaceTools, options.workspaceTools ?? {}])
  if (options.script !== undefined && options.model !== undefined) throw new Error('harness: pass { script } or { model }, not both')
  const model: PluginSpec | undefined = options.script === undefined ? options.model
    : [Scripted, { script: typeof options.script === 'string' ? options.script : scriptLines(options.script) }]
  if (model !== undefined) {
    await load(LlmService)
    await load(model)
    await load([AgentService, options.agent ?? {}])
  }
  for (const plugin of options.plugins ?? []) await load(plugin)
  const workspace = options.workspace ?? tempDir()
  let session: Session | undefined
  let agent: Agent | undefined
  const { id, ...sessionOptions } = options.session ?? {}
  const theSession = () => session ??= ctx.sessions.create(id, { ...sessionOptions, cwd: workspace })
  let calls = 0
  let disposed = false
  return {
    ctx,
    workspace,
    get session(): Session {
      return theSession()
    },
    get agent(): Agent {
      if (model === undefined) throw new Error('harness: no agent without a model (pass { script } or { model })')
      return agent ??= ctx.agents.create(theSession())
    },
    call: (name, args, { callId = `c${++calls}`, session, ...at } = {}) =>
      ctx.tools.execute({ session: session ?? theSession(), callId, name, arguments: args, ...definedOnly(at) }),
    types: () => theSession().events.map(e => e.type),
    load,
    waitFor: (type, opts = {}) => waitFor(ctx, opts.session ?? theSession(), type, opts),
    async dispose() {
      if (disposed) return
      disposed = true
      for (const fiber of fibers.reverse()) await fiber.dispose()
    },
  }
}
