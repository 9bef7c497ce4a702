import type { Context } from '@deepseek-ai/cordis'
import type {} from 'dsh-llm'
import { createOpenAIAdapter, type RetryInfo } from './adapter.ts'
import { Config } from './config.ts'

declare module '@deepseek-ai/cordis' {
  interface Events {
    /** A model request failed before any of the answer arrived and will be sent again after `delayMs`. @mode emit */
    'llm/retry'(info: RetryInfo): void
  }
}

export const name = 'dsh-llm-openai'
export const inject = ['llm']

export { Config }

/** Registers the OpenAI-compatible adapter with `ctx.llm`; retries are announced as `llm/retry`. */
export function apply(ctx: Context, config: Config) {
  const logger = ctx.logger('dsh-llm-openai')
  const adapter = createOpenAIAdapter({
    ...config,
    onRetry(info) {
      logger.info('retrying request %d of session %s in %d ms (attempt %d of %d): %s', info.requestIndex, info.sessionId, info.delayMs, info.attempt + 1, info.maxAttempts, info.reason)
      try {
        ctx.emit('llm/retry', info)
      } catch (error) {
        // A throwing listener must not turn a retry into a failed turn.
        logger.warn(error)
      }
    },
  })
  ctx.llm.register(adapter)
}

export * from './adapter.ts'
export * from './env.ts'
export * from './errors.ts'
export { SseParser, type SseEvent } from './sse.ts'
export { AnswerAssembler } from './answer.ts'
export { buildRequestBody, toWireMessages, toWireTools, completionsUrl, type WireMessage, type WireRequest, type WireTool, type WireToolCall } from './wire.ts'
export { backoffDelay, parseRetryAfter } from './backoff.ts'
