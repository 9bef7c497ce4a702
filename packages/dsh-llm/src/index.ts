import { Context, Service } from '@deepseek-ai/cordis'
import Schema from '@deepseek-ai/schemastery'
import type { ModelAdapter, ModelChunk, ModelRequest } from './types.ts'

declare module '@deepseek-ai/cordis' {
  interface Context {
    llm: LlmService
  }
}

/** Thrown when no adapter is registered. `code` is stable. */
export class LlmError extends Error {
  readonly code = 'LLM'
}

/**
 * The `llm` service: the seam between the agent loop and model adapters.
 * Adapters register themselves; the most recently registered one answers.
 */
export class LlmService extends Service {
  static Config: Schema<LlmService.Config> = Schema.object({})
  private readonly _adapters: ModelAdapter[] = []

  constructor(ctx: Context, _config: LlmService.Config = {}) {
    super(ctx, 'llm')
  }

  /** Register an adapter; the caller's fiber owns it (disposed with it). */
  register(adapter: ModelAdapter): () => void {
    return this.ctx.effect(() => {
      this._adapters.push(adapter)
      return () => {
        const i = this._adapters.lastIndexOf(adapter)
        if (i >= 0) this._adapters.splice(i, 1)
      }
    }, `llm.register(${adapter.name})`)
  }

  /** The adapter that answers requests now, if any. */
  get current(): ModelAdapter | undefined {
    return this._adapters[this._adapters.length - 1]
  }

  /** Stream one request through the current adapter. */
  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelChunk> {
    const adapter = this.current
    if (!adapter) throw new LlmError('no model adapter is loaded (add dsh-llm/scripted or dsh-llm-openai to cordis.yml)')
    return adapter.stream(request, signal)
  }
}

export namespace LlmService {
  export interface Config {}
}

export default LlmService
export * from './types.ts'
export * from './script.ts'
export { createScriptedAdapter, SCRIPT_EXHAUSTED } from './scripted.ts'
