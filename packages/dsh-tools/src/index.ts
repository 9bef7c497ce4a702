import { Context, Service } from '@deepseek-ai/cordis'
import Schema from '@deepseek-ai/schemastery'
import { Ajv, type ValidateFunction } from 'ajv'
import type { ToolDefinition, ToolExecution, ToolResult, ToolSchema } from './types.ts'

declare module '@deepseek-ai/cordis' {
  interface Context {
    tools: ToolService
  }
  interface Events {
    /** The set of registered tools changed. @mode emit */
    'tools/change'(): void
    /**
     * Every tool call runs through this: call `next()` to run the rest (finally
     * the tool), return without calling it to veto, rewrite what it returns.
     * @mode waterfall
     */
    'tools/execute'(exec: ToolExecution, next: () => Promise<ToolResult>): Promise<ToolResult>
    /**
     * The tool's own body returned (inside every `tools/execute` listener, before
     * any of them sees the result): what the call did to the workspace is done.
     * Not for an unknown tool or arguments failing the schema (nothing ran).
     * @mode serial
     */
    'tools/returned'(exec: ToolExecution, result: ToolResult): Promise<void>
    /**
     * Wait until every verdict of a session still running after its call
     * returned (dsh-dstvalid's background verdicts) is final: emitted by
     * whatever reads the workspace as judged (a turn's end, the next prompt,
     * a checkpoint, a proof reader), and by `execute` before a guarded call
     * (`effects` write or shell) enters the waterfall.
     * @mode serial
     */
    'verify/settle'(sessionId: string): Promise<void>
  }
}

/** Thrown by `register` for a duplicate or malformed definition. `code` is stable. */
export class ToolError extends Error {
  readonly code = 'TOOL'
}

/** The `tools` service: a registry of tool definitions and the execution waterfall. */
export class ToolService extends Service {
  static Config: Schema<ToolService.Config> = Schema.object({})
  private readonly _tools = new Map<string, { def: ToolDefinition; validate: ValidateFunction }>()
  private readonly _ajv = new Ajv({ allErrors: true, strict: false })

  constructor(ctx: Context, _config: ToolService.Config = {}) {
    super(ctx, 'tools')
  }

  /**
   * Register a tool; returns a disposer (also run when the caller's fiber is
   * disposed). Emits `tools/change`.
   * @throws ToolError when the name is taken or a writer lacks `paths`.
   */
  register<A>(def: ToolDefinition<A>): () => void {
    if (this._tools.has(def.name)) throw new ToolError(`tool "${def.name}" is already registered`)
    if (def.effects === 'write' && typeof def.paths !== 'function') {
      throw new ToolError(`tool "${def.name}" declares effects 'write' but no paths(args)`)
    }
    const validate = this._ajv.compile(def.parameters)
    // Through Cordis' tracing, `this.ctx` is the caller's context here, so the
    // caller's fiber owns the registration and disposing it unregisters.
    return this.ctx.effect(() => {
      this._tools.set(def.name, { def: def as ToolDefinition, validate })
      this.ctx.emit(this, 'tools/change')
      return () => {
        if (this._tools.get(def.name)?.def === def) {
          this._tools.delete(def.name)
          this.ctx.emit(this, 'tools/change')
        }
      }
    }, `tools.register(${def.name})`)
  }

  get(name: string): ToolDefinition | undefined {
    return this._tools.get(name)?.def
  }

  list(): ToolDefinition[] {
    return [...this._tools.values()].map(t => t.def)
  }

  /** Model-facing schemas of every registered tool, sorted by name. */
  schemas(): ToolSchema[] {
    return this.list()
      .map(({ name, description, parameters }) => ({ name, description, parameters }))
      .sort((a, b) => a.name.localeCompare(b.name))
  }

  /**
   * Check arguments against a tool's JSON schema without running it: the
   * message `execute` would return for them, or `undefined` when they are
   * valid (or the tool is unknown — `execute` reports that itself).
   */
  validate(name: string, args: unknown): string | undefined {
    const entry = this._tools.get(name)
    if (!entry || entry.validate(args)) return undefined
    return invalidMessage(name, entry.validate)
  }

  /**
   * Run a call through the `tools/execute` waterfall. A guarded call (a
   * known tool with `effects` write or shell) first waits for `verify/settle`
   * of its session: it runs on final verdicts, a rollback found meanwhile
   * applied (a read runs at once). Never throws for a bad call: an unknown
   * tool, arguments failing the schema, or a throwing tool become an
   * `isError` result. A throwing waterfall *listener* propagates (the agent
   * ends the turn with an error).
   */
  async execute(exec: Omit<ToolExecution, 'tool'>): Promise<ToolResult> {
    const entry = this._tools.get(exec.name)
    const full: ToolExecution = { ...exec, tool: entry?.def }
    if (entry && entry.def.effects !== 'read') await this.ctx.serial(this, 'verify/settle', exec.session.id)
    return this.ctx.waterfall(this, 'tools/execute', full, async () => {
      if (!entry) return { content: `unknown tool "${exec.name}"; available: ${[...this._tools.keys()].sort().join(', ') || 'none'}`, isError: true }
      if (!entry.validate(exec.arguments)) return { content: invalidMessage(exec.name, entry.validate), isError: true }
      let result: ToolResult
      try {
        result = await entry.def.execute(exec.arguments, full)
      } catch (error) {
        result = { content: `${exec.name} failed: ${(error as Error)?.message ?? String(error)}`, isError: true }
      }
      await this.ctx.serial(this, 'tools/returned', full, result)
      return result
    })
  }
}

function invalidMessage(name: string, validate: ValidateFunction): string {
  const why = (validate.errors ?? []).map(e => `${e.instancePath || 'arguments'} ${e.message}`).join('; ')
  return `invalid arguments for ${name}: ${why}`
}

export namespace ToolService {
  export interface Config {}
}

export default ToolService
export * from './types.ts'
