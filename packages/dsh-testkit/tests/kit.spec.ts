import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { runCommand } from 'dsh-common'
import * as Scripted from 'dsh-llm/scripted'
import { describe, expect, it } from 'vitest'
import { CORE_ENTRIES, harness, listenerCounts, logged, tempDir, waitFor, writeScript } from 'dsh-testkit'

const early = tempDir('dsh-kit-')

describe('dsh-testkit', () => {
  it('tempDir gives a real, existing directory, removed when the process exits', async () => {
    expect(existsSync(early)).toBe(true)
    const script = "import { tempDir } from 'dsh-testkit'; process.stdout.write(tempDir())"
    const r = await runCommand([process.execPath, '--import', 'tsx', '--input-type=module', '-e', script], { cwd: fileURLToPath(new URL('.', import.meta.url)), timeoutMs: 60_000 })
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toMatch(/dsh-test-/)
    expect(existsSync(r.stdout)).toBe(false)
  })

  it('harness loads the real core; waitFor resolves on an event appended later', async () => {
    const h = await harness({ script: [{ text: 'hello' }] })
    const ended = h.waitFor('turn/end')
    await h.agent.send('go')
    expect((await ended).data.reason).toBe('completed')
    expect(h.types()).toContain('assistant/message')
    await h.dispose()
    await h.dispose()
  })

  it('waitFor returns an event already logged, filtered by where', async () => {
    const h = await harness()
    h.session.append('user/message', { text: 'one' })
    h.session.append('user/message', { text: 'two' })
    const second = await waitFor(h.ctx, h.session, 'user/message', { where: e => e.data.text === 'two' })
    expect(second.seq).toBe(1)
    await h.dispose()
  })

  it('call runs one tool call through the tools/execute waterfall, with generated or given ids', async () => {
    const h = await harness()
    const seen: string[] = []
    h.ctx.on('tools/execute', async (exec, next) => { seen.push(`${exec.callId} ${exec.name} step=${exec.step} turn=${exec.turn} ${exec.session.id}`); return next() })
    expect(await h.call('write_file', { path: 'a.txt', content: 'x' })).toEqual({ content: 'created a.txt (1 bytes)' })
    const other = h.ctx.sessions.create('other', { cwd: h.workspace })
    await h.call('read_file', { path: 'a.txt' }, { callId: 'r', step: 2, turn: 1, session: other })
    await h.call('read_file', { path: 'a.txt' })
    expect(seen).toEqual([
      `c1 write_file step=undefined turn=undefined ${h.session.id}`,
      'r read_file step=2 turn=1 other',
      `c2 read_file step=undefined turn=undefined ${h.session.id}`,
    ])
    await h.dispose()
  })

  it('session gives the first session its id, vault and seed', async () => {
    const vault = tempDir()
    const h = await harness({ session: { id: 'resumed', vault, seed: [{ seq: 0, time: 1, type: 'user/message', data: { text: 'before' } }] } })
    expect([h.session.id, h.session.cwd, h.session.vault, h.types()]).toEqual(['resumed', h.workspace, vault, ['user/message']])
    await h.dispose()
  })

  it('logged collects the texts of one log type from then on, placeholders filled', async () => {
    const h = await harness()
    h.ctx.logger('early').warn('before')
    const warnings = logged(h.ctx, 'warn')
    h.ctx.logger('p').warn('one %s of %d', 'thing', 2)
    h.ctx.logger('p').info('not a warning')
    expect(warnings).toEqual(['one thing of 2'])
    await h.dispose()
  })

  it('waitFor rejects after its timeout, saying what was logged meanwhile', async () => {
    const h = await harness()
    const waiting = h.waitFor('turn/end', { timeoutMs: 50 })
    h.session.append('user/message', { text: 'x' })
    await expect(waiting).rejects.toThrow('waitFor: no turn/end event within 50 ms; logged meanwhile: user/message')
    await h.dispose()
  })

  it('harness takes a model adapter plugin instead of a script (not both)', async () => {
    const h = await harness({ model: [Scripted, { script: '{"text":"from the adapter"}' }] })
    await h.agent.send('go')
    expect(h.session.ofType('assistant/message').map(e => e.data.text)).toEqual(['from the adapter'])
    await h.dispose()
    await expect(harness({ script: [], model: Scripted })).rejects.toThrow('harness: pass { script } or { model }, not both')
    const bare = await harness()
    expect(() => bare.agent).toThrow('harness: no agent without a model (pass { script } or { model })')
    await bare.dispose()
  })

  it('listenerCounts: what a fiber adds, and what disposing it leaves (named events give 0 where none)', async () => {
    const h = await harness()
    const before = listenerCounts(h.ctx)
    expect(Object.values(before).every(n => n > 0)).toBe(true)
    const fiber = await h.load({ name: 'probe', apply: ctx => { ctx.on('session/event', () => {}) } })
    expect(listenerCounts(h.ctx, ['session/event', 'no/such-event'])).toEqual({ 'session/event': (before['session/event'] ?? 0) + 1, 'no/such-event': 0 })
    await fiber.dispose()
    expect(listenerCounts(h.ctx)).toEqual(before)
    await h.dispose()
  })

  it('writeScript writes JSON Lines the scripted model replays; CORE_ENTRIES names the core packages in load order', async () => {
    const file = writeScript(tempDir(), [{ text: 'one' }, { text: 'two' }])
    expect(readFileSync(file, 'utf8')).toBe('{"text":"one"}\n{"text":"two"}\n')
    const h = await harness({ script: readFileSync(file, 'utf8') })
    await h.agent.send('a')
    await h.agent.send('b')
    expect(h.session.ofType('assistant/message').map(e => e.data.text)).toEqual(['one', 'two'])
    await h.dispose()
    expect([...CORE_ENTRIES.matchAll(/^ {2}name: (.+)$/gm)].map(m => m[1])).toEqual(['dsh-session', 'dsh-tools', 'dsh-tools-workspace', 'dsh-llm', 'dsh-agent'])
  })
})
