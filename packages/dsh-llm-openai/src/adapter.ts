import { readFileSync } from 'node:fs'
import type { ModelAdapter, ModelChunk, ModelRequest } from 'dsh-llm'
import { AnswerAssembler } from './answer.ts'
import { backoffDelay, sleep } from './backoff.ts'
import type { Config } from './config.ts'
import { OpenAIError } from './errors.ts'
import { connectError, httpError, streamError, type Endpoint } from './http.ts'
import { SseParser } from './sse.ts'
import { buildRequestBody, completionsUrl } from './wire.ts'

const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version
/** Sent as `User-Agent` with every request. */
const USER_AGENT = `dsh/${VERSION} (dsh-llm-openai)`

/** A retry about to happen (after the wait). */
export interface RetryInfo {
  sessionId: string
  requestIndex: number
  /** The attempt that failed (1-based). */
  attempt: number
  maxAttempts: number
  delayMs: number
  /** Why the attempt failed (the error message). */
  reason: string
  status?: number
}

/** The adapter's settings (`Config({ baseUrl, model, … })`: the schema fills in the defaults) and its retry hook. */
export interface OpenAIAdapterOptions extends Config {
  /** Called before each retry's wait. Must not throw. */
  onRetry?(info: RetryInfo): void
}

export interface OpenAIAdapter extends ModelAdapter {
  readonly baseUrl: string
  readonly model: string
  /** The URL requests are POSTed to. */
  readonly url: string
}

/**
 * A model adapter for any OpenAI-compatible `/chat/completions` endpoint,
 * streaming over SSE. Text is passed on as it arrives; tool calls, usage and
 * the finish reason follow when the answer is complete. A failure before
 * any of the answer arrived (429, 5xx, reset, silence) is retried with
 * backoff; after that it never is. Failures throw `OpenAIError` (the agent
 * ends the turn with an `error` event); an abort throws the signal's reason.
 *
 * @throws OpenAIError (kind `config`) when `baseUrl` is not an http(s) URL.
 */
export function createOpenAIAdapter(options: OpenAIAdapterOptions): OpenAIAdapter {
  const settings = options
  if (!/^https?:$/.test(safeProtocol(settings.baseUrl))) {
    throw new OpenAIError(`baseUrl is not an http(s) URL: ${JSON.stringify(settings.baseUrl)}`, 'config')
  }
  const url = completionsUrl(settings.baseUrl)
  const to: Endpoint = { baseUrl: settings.baseUrl, url, model: settings.model, hasKey: !!settings.apiKey }
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream', 'user-agent': USER_AGENT }
  if (settings.apiKey) headers.authorization = `Bearer ${settings.apiKey}`

  async function* stream(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelChunk> {
    const body = JSON.stringify(buildRequestBody(request.messages, request.tools, settings))
    const maxAttempts = settings.maxRetries + 1
    let waitedMs = 0
    for (let attempt = 1; ; attempt++) {
      signal.throwIfAborted()
      const assembler = new AnswerAssembler(url, request.requestIndex)
      try {
        yield* sendOnce(body, assembler, signal)
        return
      } catch (error) {
        if (signal.aborted) throw signal.reason
        const e = error instanceof OpenAIError ? error : new OpenAIError(`request to ${url} failed: ${(error as Error)?.message ?? String(error)}`, 'connect')
        if (!e.retryable) throw e
        if (assembler.tokens > 0) throw new OpenAIError(`${e.message}; not retried because part of the answer had already arrived`, e.kind, false, e.status)
        if (attempt >= maxAttempts) throw new OpenAIError(attempt > 1 ? `${e.message}; gave up after ${attempt} attempts` : e.message, e.kind, false, e.status)
        const left = Math.max(0, settings.maxRetryWaitMs - waitedMs)
        if (e.retryAfterMs !== undefined && e.retryAfterMs > left) {
          throw new OpenAIError(`${e.message}; the server asked to wait ${formatMs(e.retryAfterMs)} before retrying, more than the ${formatMs(settings.maxRetryWaitMs)} retry budget allows (maxRetryWaitMs${waitedMs ? `, ${formatMs(waitedMs)} already waited` : ''})`, e.kind, false, e.status)
        }
        const delayMs = Math.min(backoffDelay(attempt, settings, e.retryAfterMs), left)
        waitedMs += delayMs
        options.onRetry?.({ sessionId: request.session.id, requestIndex: request.requestIndex, attempt, maxAttempts, delayMs, reason: e.message, ...(e.status ? { status: e.status } : {}) })
        await sleep(delayMs, signal)
      }
    }
  }

  /** One HTTP attempt: yields text as it streams, then the assembled rest. */
  async function* sendOnce(body: string, assembler: AnswerAssembler, signal: AbortSignal): AsyncGenerator<ModelChunk> {
    const quiet = new AbortController()
    let timer: NodeJS.Timeout | undefined
    const arm = () => {
      clearTimeout(timer)
      timer = setTimeout(() => {
        quiet.abort(new OpenAIError(`no data from ${url} for ${formatMs(settings.timeoutMs)} (timeoutMs)`, 'timeout', true))
      }, settings.timeoutMs)
    }
    try {
      arm()
      let response: Response
      try {
        response = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.any([signal, quiet.signal]) })
      } catch (error) {
        throw connectError(error, to)
      }
      if (!response.ok) throw await httpError(response, to)
      if (/application\/json/i.test(response.headers.get('content-type') ?? '')) {
        // A server that ignored `stream: true` answers with the whole completion.
        let json: unknown
        try {
          json = JSON.parse(await response.text())
        } catch (error) {
          if (quiet.signal.aborted || signal.aborted) throw error
          throw new OpenAIError(`malformed answer from ${url}: the JSON body does not parse`, 'malformed')
        }
        yield* assembler.acceptCompletion(json)
        yield* assembler.complete()
        return
      }
      if (!response.body) throw new OpenAIError(`malformed stream from ${url}: the answer has no body`, 'malformed')
      const reader = response.body.getReader()
      const parser = new SseParser()
      while (!assembler.done) {
        arm()
        let read: Awaited<ReturnType<typeof reader.read>>
        try {
          read = await reader.read()
        } catch (error) {
          throw streamError(error, to)
        }
        if (read.done) {
          for (const event of parser.end()) yield* assembler.accept(event)
          break
        }
        for (const event of parser.push(read.value)) yield* assembler.accept(event)
      }
      yield* assembler.complete()
    } catch (error) {
      if (signal.aborted) throw signal.reason
      if (quiet.signal.aborted) throw quiet.signal.reason
      throw error
    } finally {
      clearTimeout(timer)
      // Stopped early (abort, [DONE] before the body ended, an error): release the connection.
      quiet.abort()
    }
  }

  return { name: 'openai', baseUrl: settings.baseUrl, model: settings.model, url, stream }
}

function safeProtocol(url: string): string {
  try {
    return new URL(url).protocol
  } catch {
    return ''
  }
}

function formatMs(ms: number): string {
  return ms >= 1000 ? `${+(ms / 1000).toFixed(1)} s` : `${ms} ms`
}
