/** @jsxImportSource hono/jsx */
import { randomBytes, timingSafeEqual } from 'node:crypto'
import { existsSync, readdirSync, statSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { createAdaptorServer } from '@hono/node-server'
import { Hono } from 'hono'
import { streamSSE } from 'hono/streaming'
import { KeptStore } from 'dsh-snapshot'
import { diffChange } from './diff.ts'
import { SessionPage, SessionsPage, type PageContext } from './page.tsx'
import { listSessions, readSession, type CallView } from './timeline.ts'
import { undo, UndoError } from './undo.ts'

export interface ReviewServerOptions {
  workspace: string
  vault: string
  /** Port on 127.0.0.1 (default 0: any free one). */
  port?: number
  /** The per-launch token (default: 24 random bytes). */
  token?: string
  /** How often live pages look for changes in the vault (ms, default 700). */
  pollMs?: number
}

export interface ReviewServer {
  /** The page's address, token included. */
  url: string
  token: string
  close(): Promise<void>
}

/** The enhancement: with JavaScript on, a page follows the vault as a session runs. */
const LIVE_JS = `(() => {
  const me = new URL(document.currentScript.src)
  const es = new EventSource('/events' + me.search)
  es.onmessage = async () => {
    const html = await (await fetch(location.href)).text()
    const next = new DOMParser().parseFromString(html, 'text/html').querySelector('main')
    if (next) document.querySelector('main').replaceWith(next)
  }
})()
`

/**
 * Serve the review page for one workspace's vault on 127.0.0.1. Every
 * request must carry the launch's token (`?token=`) and a loopback Host
 * header, else 403.
 */
export async function startReviewServer(options: ReviewServerOptions): Promise<ReviewServer> {
  const token = options.token ?? randomBytes(24).toString('base64url')
  const store = () => new KeptStore(options.vault)
  const app = new Hono()
  let port = 0

  app.use('*', async (c, next) => {
    const host = c.req.header('host') ?? ''
    if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) return c.text('dsh review: forbidden host\n', 403)
    const given = Buffer.from(c.req.query('token') ?? '')
    const want = Buffer.from(token)
    if (given.length !== want.length || !timingSafeEqual(given, want)) return c.text('dsh review: this page needs the token printed by dsh review (the URL it printed)\n', 403)
    await next()
    c.header('Cache-Control', 'no-store')
    c.header('X-Frame-Options', 'DENY')
  })

  const pageContext = (flash?: PageContext['flash']): PageContext => {
    const s = store()
    return { token, workspace: options.workspace, diff: change => diffChange(s, change), ...(flash ? { flash } : {}) }
  }
  const flashOf = (q: (k: string) => string | undefined): PageContext['flash'] => {
    const text = q('msg')
    return text ? { ok: q('ok') === '1', text } : undefined
  }

  app.get('/', c => c.html('<!doctype html>' + <SessionsPage ctx={pageContext(flashOf(k => c.req.query(k)))} sessions={listSessions(options.vault)} />))

  app.get('/session/:id', c => {
    const view = readSession(options.vault, c.req.param('id'))
    if (!view) return c.text(`dsh review: no session ${c.req.param('id')} in ${options.vault}\n`, 404)
    return c.html('<!doctype html>' + <SessionPage ctx={pageContext(flashOf(k => c.req.query(k)))} view={view} />)
  })

  app.post('/undo', async c => {
    const form = await c.req.parseBody()
    const id = String(form.id ?? '')
    const session = String(form.session ?? '')
    const back = (ok: boolean, msg: string) => c.redirect(`/session/${encodeURIComponent(session)}?token=${encodeURIComponent(token)}&ok=${ok ? 1 : 0}&msg=${encodeURIComponent(msg)}`, 303)
    try {
      const view = readSession(options.vault, session)
      const calls = new Map((view?.items ?? []).filter((i): i is CallView => i.kind === 'call').map(i => [i.callId, i]))
      const result = await undo({
        workspace: options.workspace, vault: options.vault, ids: [id], force: form.force === '1',
        describeCall: (_s, callId) => { const call = calls.get(callId); return call ? `${call.tool} ${call.paths.join(', ')}`.trim() : undefined },
      })
      const did = [result.restored.length ? `restored ${result.restored.join(', ')}` : '', result.deleted.length ? `deleted ${result.deleted.join(', ')}` : ''].filter(Boolean).join('; ')
      return back(true, `${result.record.reason}: ${did || 'nothing needed changing'} (${result.record.id})`)
    } catch (error) {
      if (error instanceof UndoError) return back(false, error.message)
      throw error
    }
  })

  app.get('/live.js', c => c.body(LIVE_JS, 200, { 'Content-Type': 'text/javascript; charset=utf-8' }))

  app.get('/events', c => streamSSE(c, async stream => {
    let last = signature(options.vault)
    let open = true
    stream.onAbort(() => { open = false })
    while (open) {
      await stream.sleep(options.pollMs ?? 700)
      const now = signature(options.vault)
      if (now !== last) {
        last = now
        await stream.writeSSE({ data: 'changed' })
      }
    }
  }))

  const server = createAdaptorServer({ fetch: app.fetch })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve())
  })
  port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/?token=${encodeURIComponent(token)}`,
    token,
    close: () => new Promise<void>(resolve => {
      (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.()
      server.close(() => resolve())
    }),
  }
}

/** Sizes and times of what the page shows, to notice a change cheaply. */
function signature(vault: string): string {
  const parts: string[] = []
  const add = (file: string) => {
    try {
      const st = statSync(file)
      parts.push(`${file}:${st.size}:${st.mtimeMs}`)
    } catch {
      // Not there yet: part of the signature as absent.
      parts.push(`${file}:-`)
    }
  }
  const sessions = join(vault, 'sessions')
  if (existsSync(sessions)) for (const name of readdirSync(sessions)) add(join(sessions, name))
  add(join(vault, 'kept', 'index.jsonl'))
  add(join(vault, 'proofchain.jsonl'))
  return parts.join('|')
}
