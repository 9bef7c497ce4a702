import { readFileSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import * as Review from 'dsh-review'
import { startReviewServer, type ReviewServer } from 'dsh-review'
import * as SessionJsonl from 'dsh-session/jsonl'
import * as Snapshot from 'dsh-snapshot'
import { harness, tempDir, type Harness } from 'dsh-testkit'

/** A scripted session (snapshot alone: every write kept) whose log is on disk. */
async function session(): Promise<Harness> {
  const ws = tempDir('dsh-review-srv-')
  writeFileSync(join(ws, 'a.txt'), 'one\ntwo\n')
  const h = await harness({
    workspace: ws,
    script: [
      { text: 'Edit.', toolCalls: [{ name: 'edit_file', arguments: { path: 'a.txt', old_string: 'two', new_string: 'TWO' } }] },
      { text: 'Shell.', toolCalls: [{ name: 'bash', arguments: { command: 'echo three >> a.txt' } }] },
      { text: 'Done.' },
    ],
    plugins: [[SessionJsonl, { intervalMs: 0 }], [Snapshot, Snapshot.Config({ fsync: 'off' })], Review],
  })
  await h.agent.send('go')
  await h.session.flush()
  return h
}

const open: (ReviewServer | Harness)[] = []
afterEach(async () => {
  for (const x of open.splice(0)) 'close' in x ? await x.close() : await x.dispose()
})

/** GET with a chosen Host header (fetch does not let one set it). */
function get(url: string, host?: string): Promise<{ status: number; body: string }> {
  return new Promise((done, fail) => {
    const u = new URL(url)
    const req = request({ host: u.hostname, port: u.port, path: u.pathname + u.search, headers: host ? { host } : {} }, res => {
      let body = ''
      res.on('data', c => { body += c })
      res.on('end', () => done({ status: res.statusCode ?? 0, body }))
    })
    req.on('error', fail)
    req.end()
  })
}

describe('the review page', () => {
  it('serves on 127.0.0.1 only to requests with the token and a loopback Host; the page is whole without JavaScript', async () => {
    const h = await session()
    open.push(h)
    const server = await startReviewServer({ workspace: h.workspace, vault: h.session.vault })
    open.push(server)
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{32}$/)
    const base = server.url.replace(/\?.*/, '')
    expect((await get(base)).status).toBe(403)
    expect((await get(`${base}?token=wrong`)).status).toBe(403)
    expect((await get(server.url, 'evil.example:80')).status).toBe(403)
    const list = await get(server.url)
    expect(list.status).toBe(200)
    expect(list.body).toContain(`/session/${h.session.id}?token=`)
    const page = await get(`${base}session/${h.session.id}?token=${server.token}`)
    expect(page.body.startsWith('<!doctype html>')).toBe(true)
    expect([...page.body.matchAll(/data-verdict="([^"]+)"/g)].map(m => m[1])).toEqual(['not verified', 'not verified'])
    // The diffs are in the HTML itself: the shell call's too.
    expect(page.body).toContain('<td class="t">-two</td>')
    expect(page.body).toContain('<td class="t">+TWO</td>')
    expect(page.body).toContain('<td class="t">+three</td>')
    // Undo is a plain form.
    expect(page.body).toMatch(/<form class="undo" method="post" action="\/undo\?token=[\w-]+">/)
    expect((await get(`${base}session/..%2F..%2Fetc?token=${server.token}`)).status).toBe(404)
  })

  it('tells a live page that the vault changed (Server-Sent Events)', async () => {
    const h = await session()
    open.push(h)
    const server = await startReviewServer({ workspace: h.workspace, vault: h.session.vault, pollMs: 50 })
    open.push(server)
    const res = await fetch(server.url.replace('/?', '/events?'))
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/)
    const reader = res.body!.getReader()
    const log = join(h.session.vault, 'sessions', `${h.session.id}.jsonl`)
    writeFileSync(log, readFileSync(log, 'utf8') + JSON.stringify({ seq: 999, time: Date.now(), type: 'user/message', data: { text: 'more' } }) + '\n')
    const { value } = await reader.read()
    expect(new TextDecoder().decode(value)).toBe('data: changed\n\n')
    await reader.cancel()
  })

  it('undoes from the form and shows what it did, or why not', async () => {
    const h = await session()
    open.push(h)
    const server = await startReviewServer({ workspace: h.workspace, vault: h.session.vault })
    open.push(server)
    const view = Review.readSession(h.session.vault, h.session.id)!
    const edit = view.items.find(i => i.kind === 'call' && i.tool === 'edit_file') as Review.CallView
    const post = (id: string) => fetch(server.url.replace('/?', '/undo?'), { method: 'POST', body: new URLSearchParams({ id, session: h.session.id }), redirect: 'manual' })
    const refused = await post(edit.record!.id)
    expect(refused.status).toBe(303)
    const msg = (r: Response) => new URL(r.headers.get('location')!, server.url).searchParams.get('msg')
    expect(msg(refused)).toBe('not undone: a.txt (a later write changed the same or adjacent lines). Nothing was changed; dsh undo --force overwrites it with the earlier bytes')
    const shell = view.items.find(i => i.kind === 'call' && i.tool === 'bash') as Review.CallView
    const done = await post(shell.record!.id)
    expect(msg(done)).toMatch(/^took back call call_1_0 of session \S+: restored a\.txt \(undo-/)
    expect(readFileSync(join(h.workspace, 'a.txt'), 'utf8')).toBe('one\nTWO\n')
  })
})
