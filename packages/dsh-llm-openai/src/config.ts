import Schema from '@deepseek-ai/schemastery'
import { optional } from 'dsh-common'
import { DEEPSEEK_BASE_URL, DEEPSEEK_MODEL } from './env.ts'

/**
 * The plugin's options, which are also the adapter's settings: the one
 * source of their text and defaults (the type below and the README table
 * derive from it). Outside Cordis, `Config({ baseUrl, model })` gives the
 * settings `createOpenAIAdapter` takes.
 */
export const Config = Schema.object({
  baseUrl: Schema.string().default(DEEPSEEK_BASE_URL).description('Base URL of an OpenAI-compatible API; requests go to <baseUrl>/chat/completions.'),
  model: Schema.string().default(DEEPSEEK_MODEL).description('Model name sent with every request.'),
  apiKey: optional(Schema.string().role('secret').description('Sent as "Authorization: Bearer <key>"; leave unset for a server that needs none.')),
  timeoutMs: Schema.natural().min(1).default(120_000).description('Longest silence from the server (no bytes) before the attempt fails.'),
  maxRetries: Schema.natural().default(3).description('Retries on 429, 5xx, a reset connection or a timeout, only before any of the answer arrived.'),
  retryDelayMs: Schema.natural().default(1000).description('Wait before the first retry; doubles with each further retry (±25% jitter).'),
  maxRetryDelayMs: Schema.natural().default(20_000).description('Cap on one backoff wait of ours; a Retry-After the server asks for is honoured in full (within maxRetryWaitMs).'),
  maxRetryWaitMs: Schema.natural().default(120_000).description('Budget for all retry waits of one request; a server asking to wait past it fails the request at once, saying how long it asked for.'),
  includeUsage: Schema.boolean().default(true).description('Ask for token usage in the stream (stream_options.include_usage).'),
  temperature: optional(Schema.number().min(0).max(2).description('Sampling temperature; the server default when unset.')),
  maxTokens: optional(Schema.natural().min(1).description('Cap on tokens in one answer (max_tokens); the server default when unset.')),
})
export type Config = Schemastery.TypeT<typeof Config>
