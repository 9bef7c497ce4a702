/**
 * What went wrong talking to the server. The agent turns a thrown error
 * into an `error` event, so `message` is what the user reads: it names the
 * URL and says what to do next.
 */
export type OpenAIErrorKind =
  | 'config' // bad adapter settings (not a URL, …)
  | 'auth' // 401 / 403
  | 'http' // any other non-2xx answer
  | 'connect' // no connection (refused, unknown host, reset before an answer)
  | 'timeout' // the server went quiet for `timeoutMs`
  | 'disconnect' // the stream broke off before the answer was complete
  | 'malformed' // the stream was not what the protocol says
  | 'model' // the server reported an error inside the stream

/** The one error class of dsh-llm-openai; `code` is stable, `kind` says which failure. */
export class OpenAIError extends Error {
  readonly code = 'LLM_OPENAI'

  constructor(
    message: string,
    readonly kind: OpenAIErrorKind,
    /** True when the same request may succeed if sent again (429, 5xx, reset, timeout). */
    readonly retryable = false,
    /** HTTP status, for `auth` and `http`. */
    readonly status?: number,
    /** What the server asked us to wait (Retry-After), in milliseconds. */
    readonly retryAfterMs?: number,
  ) {
    super(message)
    this.name = 'OpenAIError'
  }
}
