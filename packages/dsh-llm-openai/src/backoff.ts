import { setTimeout as delay } from 'node:timers/promises'

export interface BackoffSettings {
  /** Wait before the first retry; doubles with each further retry. */
  retryDelayMs: number
  /** Cap on any single backoff wait (not on a wait the server asks for). */
  maxRetryDelayMs: number
}

/**
 * How long to wait after failed attempt number `attempt` (1-based): what the
 * server asked for (Retry-After), in full, else exponential backoff with
 * ±25 % jitter, never more than `maxRetryDelayMs`. (The adapter holds all
 * waits of one request to its `maxRetryWaitMs` budget.)
 */
export function backoffDelay(attempt: number, settings: BackoffSettings, retryAfterMs?: number, random: () => number = Math.random): number {
  if (retryAfterMs !== undefined) return Math.max(0, retryAfterMs)
  const base = settings.retryDelayMs * 2 ** Math.max(0, attempt - 1)
  return Math.round(Math.min(settings.maxRetryDelayMs, base * (0.75 + 0.5 * random())))
}

/**
 * The wait a response asks for, in milliseconds: `retry-after-ms`, else
 * `Retry-After` as seconds or as an HTTP date. Undefined when absent or unreadable.
 */
export function parseRetryAfter(headers: Headers, now: number = Date.now()): number | undefined {
  const ms = headers.get('retry-after-ms')
  if (ms && Number.isFinite(Number(ms))) return Math.max(0, Number(ms))
  const value = headers.get('retry-after')?.trim()
  if (!value) return undefined
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000)
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/** Wait `ms`, or stop early with the signal's reason. */
export async function sleep(ms: number, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted()
  try {
    await delay(ms, undefined, { signal })
  } catch (error) {
    if (signal.aborted) throw signal.reason
    throw error
  }
}
