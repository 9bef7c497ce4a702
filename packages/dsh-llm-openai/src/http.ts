import { errorText } from './answer.ts'
import { OpenAIError } from './errors.ts'
import { parseRetryAfter } from './backoff.ts'

/** Where the request went, for messages. */
export interface Endpoint {
  baseUrl: string
  url: string
  model: string
  hasKey: boolean
}

function oneLine(text: string, max = 300): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > max ? flat.slice(0, max - 1) + '…' : flat
}

/** The error codes of an undici/Node failure, outermost first (`cause` chains, AggregateErrors). */
function causeOf(error: unknown): { code?: string; message: string } {
  let e = error as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown[] } | undefined
  let message = String((e as Error | undefined)?.message ?? error)
  for (let depth = 0; e && depth < 5; depth++) {
    if (typeof e.code === 'string') return { code: e.code, message: String(e.message ?? e.code) }
    if (Array.isArray(e.errors) && e.errors.length) e = e.errors[0] as typeof e
    else if (e.cause) {
      e = e.cause as typeof e
      if (typeof e?.message === 'string' && e.message) message = e.message
    } else break
  }
  return { message }
}

const RETRYABLE_CONNECT = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_CLOSED'])

/** `fetch` itself failed: no answer at all. Refused and unknown hosts fail fast; resets are retried. */
export function connectError(error: unknown, to: Endpoint): OpenAIError {
  const { code, message } = causeOf(error)
  if (code === 'ECONNREFUSED') return new OpenAIError(`cannot connect to ${to.url} (connection refused): is the server running?`, 'connect')
  if (code === 'ENOTFOUND') return new OpenAIError(`cannot connect to ${to.url} (unknown host ${new URL(to.url).hostname})`, 'connect')
  if (code && RETRYABLE_CONNECT.has(code)) return new OpenAIError(`cannot connect to ${to.url} (${code === 'UND_ERR_SOCKET' ? 'connection reset' : code})`, 'connect', true)
  return new OpenAIError(`request to ${to.url} failed (${code ?? oneLine(message, 120)})`, 'connect')
}

/** Reading the body failed after the answer had started. */
export function streamError(error: unknown, to: Endpoint): OpenAIError {
  const { code, message } = causeOf(error)
  const why = code === 'UND_ERR_SOCKET' || !code ? oneLine(message, 120) : code
  return new OpenAIError(`connection to ${to.url} was lost mid-stream (${why})`, 'disconnect', true)
}

/** A non-2xx answer, with the server's own message where it gave one. */
export async function httpError(response: Response, to: Endpoint): Promise<OpenAIError> {
  const text = await response.text().catch(() => '')
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {
    // not JSON: the text itself is the message
  }
  const status = response.status
  const detail = oneLine(errorText(body) ?? (text || response.statusText))
  const requestId = response.headers.get('x-request-id') ?? response.headers.get('request-id')
  const said = (detail ? `: ${detail}` : '') + (requestId ? `; request id ${oneLine(requestId, 120)}` : '')
  const retryAfter = parseRetryAfter(response.headers)
  if (status === 401) {
    return to.hasKey
      ? new OpenAIError(`API key rejected by ${to.baseUrl} (HTTP 401${said})`, 'auth', false, status)
      : new OpenAIError(`${to.baseUrl} wants an API key and none is configured (HTTP 401${said}): set DSH_API_KEY`, 'auth', false, status)
  }
  if (status === 403) return new OpenAIError(`access denied by ${to.baseUrl} (HTTP 403${said})`, 'auth', false, status)
  if (status === 429) return new OpenAIError(`${to.baseUrl} is rate limiting requests (HTTP 429${said})`, 'http', true, status, retryAfter)
  if (status === 408 || status >= 500) return new OpenAIError(`${to.url} answered HTTP ${status}${said}`, 'http', true, status, retryAfter)
  if (status === 404) {
    return new OpenAIError(`${to.url} answered HTTP 404${said} (check the base URL, which usually ends in /v1, and the model "${to.model}")`, 'http', false, status)
  }
  return new OpenAIError(`${to.url} rejected the request (HTTP ${status}${said})`, 'http', false, status)
}
