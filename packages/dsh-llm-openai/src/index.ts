import type { Context } from '@deepseek-ai/cordis'
import Schema from '@deepseek-ai/schemastery'
import type {} from 'dsh-llm'
import { createOpenAIAdapter, DEFAULT_SETTINGS, type OpenAISettings, type RetryInfo } from './adapter.ts'
import { DEEPSEEK_BASE_URL, DEEPSEEK_MODEL } from './env.ts'

declare module '@deepseek-ai/cordis' {
  interface Events {
    /** A model request failed before any of the answer arrived and will be sent again after `delayMs`. @mode emit */
    'llm/retry'(info: RetryInfo): void
  }
}

export const name = 'dsh-llm-openai'
export const inject = ['llm']

/** The plugin's options: the adapter's settings. */
export type Config = OpenAISettings

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  baseUrl: Schema.string().default(DEEPSEEK_BASE_URL).description('Base URL of an OpenAI-compatible API; requests go to <baseUrl>/chat/completions.'),
  model: Schema.string().default(DEEPSEEK_MODEL).description('Model name sent with every request.'),
  apiKey: Schema.string().role('secret').description('Sent as "Authorization: Bearer <key>"; leave unset for a server that needs none.'),
  timeoutMs: Schema.natural().min(1).default(DEFAULT_SETTINGS.timeoutMs).description('Longest silence from the server (no bytes) before the attempt fails.'),
  maxRetries: Schema.natural().default(DEFAULT_SETTINGS.maxRetries).description('Retries on 429, 5xx, a reset connection or a timeout, only before any of the answer arrived.'),
  retryDelayMs: Schema.natural().default(DEFAULT_SETTINGS.retryDelayMs).description('Wait before the first retry; doubles with each further retry (±25% jitter).'),
  maxRetryDelayMs: Schema.natural().default(DEFAULT_SETTINGS.maxRetryDelayMs).description('Cap on one backoff wait of ours; a Retry-After the server asks for is honoured in full (within maxRetryWaitMs).'),
  maxRetryWaitMs: Schema.natural().default(DEFAULT_SETTINGS.maxRetryWaitMs).description('Budget for all retry waits of one request; a server asking to wait past it fails the request at once, saying how long it asked for.'),
  includeUsage: Schema.boolean().default(DEFAULT_SETTINGS.includeUsage).description('Ask for token usage in the stream (stream_options.include_usage).'),
  temperature: Schema.number().min(0).max(2).description('Sampling temperature; the server default when unset.'),
  maxTokens: Schema.natural().min(1).description('Cap on tokens in one answer (max_tokens); the server default when unset.'),
})

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
