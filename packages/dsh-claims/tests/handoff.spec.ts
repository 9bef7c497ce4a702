import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { readSessionLog, sessionLogPath } from 'dsh-session'
import { checkpointPath, checkpointsDir, type StoredCheckpoint } from 'dsh-claims'
import { bash, checkpoint, fakeWorkspace, results, setup } from './helpers.ts'

const AUTH = 'login rejects expired tokens — pnpm vitest run tests/auth.test.ts'
const TYPES = 'types check — npx tsc --noEmit'


function stored(vault: string, id: string): StoredCheckpoint {
  return JSON.parse(readFileSync(checkpointPath(vault, id), 'utf8')) as StoredCheckpoint
}

const handoffs = (events: readonly { type: string; data: unknown }[]) =>
  events.filter(e => e.type === 'context/message' && (e.data as { source: string }).source === 'claims').map(e => (e.data as { text: string }).text)

describe('handoff to the next session', () => {
  it('a new session on the workspace starts with the latest checkpoint, unsupported claims marked inline', async () => {
    const h = await setup()
    await h.run('s1', [
      { toolCalls: [bash('node_modules/.bin/vitest run'), bash('FAKE_EXIT=1 node_modules/.bin/tsc --noEmit')] },
      { toolCalls: [checkpoint({ summary: 'auth half done', verified: [AUTH, TYPES, 'cart is faster'], next: ['fix the types'] })] },
    ])
    const { session } = h.open('s2', [])
    const time = new Date(stored(h.vault, 's1').time).toISOString()
    expect(session.events[0]).toMatchObject({ seq: 0, type: 'context/message', data: { source: 'claims' } })
    expect(handoffs(session.events)).toEqual([[
      `Checkpoint left by session s1 at ${time}:`,
      'Summary: auth half done',
      'Verified:',
      '- login rejects expired tokens — pnpm vitest run tests/auth.test.ts',
      '- types check — npx tsc --noEmit [unsupported: last run of `tsc --noEmit` did not pass (exit 1)]',
      '- cart is faster [unsupported: names no command]',
      'Failed:',
      '- none given [that session had failing runs: `tsc --noEmit` (exit 1)]',
      'Next:',
      '- fix the types',
      'Lines marked [unsupported] are not backed by commands the harness saw run; re-check them before building on them.',
    ].join('\n')])
  })

  it('the next agent sees it: the handoff is in the model request as injected context', async () => {
    const h = await setup()
    await h.run('s1', [{ toolCalls: [checkpoint({ verified: [AUTH] })] }])
    const requests: string[] = []
    h.ctx.on('agent/request', async (request, next) => {
      requests.push(JSON.stringify(request.messages))
      return next()
    })
    await h.run('s2', [{ text: 'ok' }])
    expect(requests[0]).toContain('{"role":"user","content":"[harness: claims] Checkpoint left by session s1')
    expect(requests[0]).toContain('[unsupported: `vitest run` not seen run]')
  })

  it('goes only to new, unseeded sessions, never back to the session that wrote it', async () => {
    const h = await setup()
    const { session: s1 } = await h.run('s1', [{ toolCalls: [checkpoint({ verified: [AUTH] })] }])
    const seeded = h.open('s1-resumed', [], s1.events)
    expect(handoffs(seeded.session.events)).toEqual([])

    const again = await setup({ ws: h.ws })
    expect(handoffs(again.open('s1', []).session.events)).toEqual([])
    expect(handoffs(again.open('s3', []).session.events)).toHaveLength(1)
  })

  it('only from checkpoints written on the same workspace', async () => {
    const h = await setup()
    await h.run('s1', [{ toolCalls: [checkpoint({})] }])
    const other = h.ctx.sessions.create('elsewhere', { cwd: fakeWorkspace(), vault: h.vault })
    expect(handoffs(other.events)).toEqual([])
  })

  it('picks the newest of several checkpoints, and keeps two sessions in one vault apart', async () => {
    const h = await setup()
    // Two sessions live at once on one workspace and vault: each is checked against its own runs.
    const a = h.open('a', [{ toolCalls: [bash('node_modules/.bin/vitest run')] }, { toolCalls: [checkpoint({ summary: 'A', verified: [AUTH] })] }])
    const b = h.open('b', [{ toolCalls: [bash('FAKE_EXIT=1 node_modules/.bin/tsc --noEmit')] }, { toolCalls: [checkpoint({ summary: 'B', verified: [AUTH], failed: ['tsc'] })] }])
    await a.agent.send('go')
    await b.agent.send('go')
    expect(results(a.session, 'checkpoint')).toEqual(['Checkpoint recorded.'])
    expect(results(b.session, 'checkpoint')[0]).toContain('`vitest run` not seen run in this session')
    expect(stored(h.vault, 'a').report.unseen).toEqual([])
    expect(stored(h.vault, 'b').report.unseen).toEqual([AUTH])

    const [text] = handoffs(h.open('c', []).session.events)
    expect(text).toMatch(/^Checkpoint left by session b at .*\nSummary: B\n/)
  })

  it('is persisted as the first line of the new session log (dsh-session/jsonl listed first)', async () => {
    const h = await setup({ jsonl: true })
    await h.run('s1', [{ toolCalls: [checkpoint({ verified: [AUTH] })] }])
    const { session } = h.open('s2', [])
    await session.flush()
    const { records } = readSessionLog(sessionLogPath(h.vault, 's2'))
    expect(records[0]).toMatchObject({ seq: 0, type: 'context/message', data: { source: 'claims' } })
  })

  it('skips unreadable checkpoint files and can be turned off', async () => {
    const h = await setup()
    await h.run('s1', [{ toolCalls: [checkpoint({ summary: 'good one' })] }])
    mkdirSync(checkpointsDir(h.vault), { recursive: true })
    writeFileSync(join(checkpointsDir(h.vault), 'torn.json'), '{"version":1,"sess')
    writeFileSync(join(checkpointsDir(h.vault), 'other.json'), '{"version":2}')
    expect(handoffs(h.open('s2', []).session.events)[0]).toContain('Summary: good one')

    const off = await setup({ ws: h.ws, claims: { handoff: false } })
    expect(handoffs(off.open('s3', []).session.events)).toEqual([])
  })

  it('caps the handoff text at handoffMaxBytes', async () => {
    const h = await setup({ claims: { handoffMaxBytes: 400 } })
    await h.run('s1', [{ toolCalls: [checkpoint({ summary: 'x'.repeat(5000) })] }])
    const [text] = handoffs(h.open('s2', []).session.events)
    expect(Buffer.byteLength(text!)).toBeLessThanOrEqual(400)
    expect(text).toContain('bytes truncated')
  })
})
