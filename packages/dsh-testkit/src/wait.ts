import type { Context } from '@deepseek-ai/cordis'
import type { Session, SessionEvent, SessionEventType } from 'dsh-session'

export interface WaitOptions<K extends SessionEventType> {
  /** Only an event this accepts counts. */
  where?: (event: SessionEvent<K>) => boolean
  /** Reject after this long (default 10 000 ms), naming what was logged meanwhile, so a hang says what did happen. */
  timeoutMs?: number
}

/**
 * The first event of `type` in a session's log — already logged, or the
 * next one appended (heard on `session/event`). Replaces fixed sleeps: a
 * test waits for the thing it needs, as long as it takes and no longer.
 */
export function waitFor<K extends SessionEventType>(ctx: Context, session: Session, type: K, options: WaitOptions<K> = {}): Promise<SessionEvent<K>> {
  const accepts = (event: SessionEvent): boolean =>
    event.type === type && (!options.where || options.where(event as SessionEvent<K>))
  const logged = session.events.find(accepts)
  if (logged) return Promise.resolve(logged as SessionEvent<K>)
  const from = session.length
  const timeoutMs = options.timeoutMs ?? 10_000
  return new Promise((resolve, reject) => {
    const off = ctx.on('session/event', (s, event) => {
      if (s !== session || !accepts(event)) return
      off()
      clearTimeout(timer)
      resolve(event as SessionEvent<K>)
    })
    const timer = setTimeout(() => {
      off()
      const since = session.events.slice(from).map(e => e.type).join(', ') || '(nothing)'
      reject(new Error(`waitFor: no ${type} event within ${timeoutMs} ms; logged meanwhile: ${since}`))
    }, timeoutMs)
  })
}
