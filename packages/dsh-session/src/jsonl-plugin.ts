import type { Context } from '@deepseek-ai/cordis'
import Schema from '@deepseek-ai/schemastery'
import { appendFile, mkdir, stat, truncate } from 'node:fs/promises'
import { dirname } from 'node:path'
import { ensureVault } from 'dsh-common'
import type { Session } from './session.ts'
import { sessionLogPath } from './jsonl-store.ts'
import './index.ts'

export const name = 'dsh-session/jsonl'
export const inject = ['sessions']

export const Config = Schema.object({
  intervalMs: Schema.natural().default(1000).description('Milliseconds between background drains; 0 drains only on session/flush and dispose.'),
})
export type Config = Schemastery.TypeT<typeof Config>

/** The session log could not be written (a full disk, a read-only vault); its events stay buffered. */
export class SessionLogError extends Error {
  readonly code = 'SESSION_LOG'
  constructor(readonly file: string, readonly unsaved: number, cause: unknown) {
    const why = cause instanceof Error && cause.message ? cause.message : String((cause as NodeJS.ErrnoException)?.code ?? cause)
    super(`cannot write the session log ${file} (${unsaved} event(s) not saved): ${why}`, { cause })
  }
}

/**
 * Write-behind JSON Lines persistence: appended events are buffered and
 * written to `<vault>/sessions/<id>.jsonl` on `session/flush`, on an
 * interval, and on dispose. Seeded events are written only when the file
 * does not exist yet (a resumed session's file already holds them).
 */
export function apply(ctx: Context, config: Config) {
  const pending = new Map<Session, string[]>()
  const draining = new Map<Session, Promise<void>>()

  /** The last write failure warned about per session (a full disk is said once, not at every interval). */
  const warned = new Map<Session, string>()

  const drain = (session: Session): Promise<void> => {
    const prev = draining.get(session) ?? Promise.resolve()
    const next = prev.then(async () => {
      const lines = pending.get(session)
      if (!lines?.length) return
      pending.set(session, [])
      const file = sessionLogPath(session.vault, session.id)
      let size: number | undefined
      try {
        ensureVault(session.vault)
        await mkdir(dirname(file), { recursive: true })
        size = await stat(file).then(s => s.size, () => 0)
        await appendFile(file, lines.join(''))
      } catch (error) {
        // Nothing is lost: the events go back to the front of the buffer for
        // the next drain, and a partial append is cut off (the file never
        // holds a torn line, nor one line twice).
        pending.get(session)!.unshift(...lines)
        if (size !== undefined) await truncate(file, size).catch(() => {})
        throw new SessionLogError(file, lines.length, error)
      }
      warned.delete(session)
    })
    draining.set(session, next.catch(() => {}))
    return next
  }
  /** Drain every session; a failure is warned about (once while it lasts), not thrown. */
  const drainAll = () => Promise.all([...pending.keys()].map(session => drain(session).catch((error: Error) => {
    if (warned.get(session) === error.message) return
    warned.set(session, error.message)
    ctx.logger('dsh-session').warn(error.message)
  }))).then(() => {})

  ctx.on('session/created', (session) => {
    // A listener before this one may already have appended (e.g. a handoff).
    if (!pending.has(session)) pending.set(session, [])
    // Seeded events are the ones not already buffered through session/event.
    const seededCount = session.length - pending.get(session)!.length
    if (seededCount <= 0) return
    const file = sessionLogPath(session.vault, session.id)
    const seeded = session.events.slice(0, seededCount).map(e => JSON.stringify(e) + '\n')
    draining.set(session, stat(file).then(() => {}, () => { pending.get(session)!.unshift(...seeded) }))
  })

  // Prepended: the log on disk must hold every appended event, even one a
  // later listener (a tripwire) throws on.
  ctx.on('session/event', (session, event) => {
    let lines = pending.get(session)
    if (!lines) pending.set(session, lines = [])
    lines.push(JSON.stringify(event) + '\n')
  }, { prepend: true })

  ctx.on('session/flush', (session) => drain(session))

  if (config.intervalMs > 0) {
    ctx.effect(() => {
      const timer = setInterval(() => { void drainAll() }, config.intervalMs)
      timer.unref()
      return () => clearInterval(timer)
    })
  }

  // Drain on dispose: a hot reload or shutdown loses nothing that was appended.
  ctx.effect(() => () => drainAll())
}
