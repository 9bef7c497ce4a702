import type { Context } from '@deepseek-ai/cordis'
import Schema from '@deepseek-ai/schemastery'
import { appendFile, mkdir, stat } from 'node:fs/promises'
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

/**
 * Write-behind JSON Lines persistence: appended events are buffered and
 * written to `<vault>/sessions/<id>.jsonl` on `session/flush`, on an
 * interval, and on dispose. Seeded events are written only when the file
 * does not exist yet (a resumed session's file already holds them).
 */
export function apply(ctx: Context, config: Config) {
  const pending = new Map<Session, string[]>()
  const draining = new Map<Session, Promise<void>>()

  const drain = (session: Session): Promise<void> => {
    const prev = draining.get(session) ?? Promise.resolve()
    const next = prev.then(async () => {
      const lines = pending.get(session)
      if (!lines?.length) return
      pending.set(session, [])
      const file = sessionLogPath(session.vault, session.id)
      ensureVault(session.vault)
      await mkdir(dirname(file), { recursive: true })
      await appendFile(file, lines.join(''))
    })
    draining.set(session, next.catch(() => {}))
    return next
  }
  const drainAll = () => Promise.all([...pending.keys()].map(drain)).then(() => {})

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
      const timer = setInterval(() => { drainAll().catch(error => ctx.logger('dsh-session').warn(error)) }, config.intervalMs)
      timer.unref()
      return () => clearInterval(timer)
    })
  }

  // Drain on dispose: a hot reload or shutdown loses nothing that was appended.
  ctx.effect(() => () => drainAll())
}
