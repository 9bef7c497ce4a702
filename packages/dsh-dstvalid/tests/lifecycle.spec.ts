import { describe, expect, it } from 'vitest'
import { TypecheckCheck } from 'dsh-dstvalid'
import { listenerCounts } from 'dsh-testkit'
import { boot, makeWorkspace, runs } from './helpers.ts'

const EVENTS = ['tools/execute', 'agent/step-results', 'snapshot/changed', 'session/created']
/** A cheap generic profile: "compile" fails while a file named `broken` exists. */
const generic = { profiles: ['generic' as const], compileCommand: 'test ! -e broken' }

describe('lifecycle and control', () => {
  it('disposing the fiber (twice) removes every listener it added and terminates the type-check worker', async () => {
    const root = makeWorkspace()
    const h = await boot(root, { tests: 'off' })
    const loaded = listenerCounts(h.ctx, EVENTS)
    await h.ready()
    const check = h.ctx.dstvalid.guardFor(root).checks[0]!
    expect(check).toBeInstanceOf(TypecheckCheck)
    expect((check as TypecheckCheck).warm).toBe(true)
    await h.fiber.dispose()
    await h.fiber.dispose()
    expect(listenerCounts(h.ctx, EVENTS)).toEqual(Object.fromEntries(EVENTS.map(e => [e, loaded[e]! - 1])))
    expect((check as TypecheckCheck).warm).toBe(false)
    // Writes now pass through unjudged.
    const before = runs(h.session).length
    expect(await h.exec('edit_file', { path: 'src/money.ts', old_string: 'return a + b', new_string: 'return a - b' })).toEqual({ content: 'edited src/money.ts' })
    expect(runs(h.session)).toHaveLength(before)
  })

  it('promises verdicts (snapshot/changed) only while enabled; disable drops state, enable measures a fresh baseline', async () => {
    const root = makeWorkspace('')
    const h = await boot(root, generic)
    expect(await h.exec('write_file', { path: 'a', content: '' })).toEqual({ content: 'created a (0 bytes)' })
    expect(h.snapshot!.judged).toHaveLength(1)
    await h.ctx.dstvalid.disable()
    expect(h.ctx.dstvalid.enabled).toBe(false)
    const n = runs(h.session).length
    expect(await h.exec('write_file', { path: 'broken', content: '' })).toEqual({ content: 'created broken (0 bytes)' })
    expect(runs(h.session)).toHaveLength(n)
    expect(h.snapshot!.judged).toHaveLength(1)
    h.ctx.dstvalid.enable()
    // What was written while disabled is part of the new baseline: the next write is not blamed for it.
    expect(await h.exec('write_file', { path: 'b', content: '' })).toEqual({ content: 'created b (0 bytes)' })
    expect(runs(h.session).slice(n).map(r => r.outcome)).toEqual(['fail', 'fail'])
    expect(h.snapshot!.judged).toHaveLength(2)
  })

  it('disabling mid-step commits the pending captures (nobody will judge them)', async () => {
    const root = makeWorkspace('')
    const script = JSON.stringify({ toolCalls: [{ id: 'w1', name: 'write_file', arguments: { path: 'broken', content: '' } }] })
    const h = await boot(root, { ...generic, per: 'step' }, { script })
    h.ctx.on('agent/step-results', async (_batch, next) => {
      await h!.ctx.dstvalid.disable()
      return next()
    }, { prepend: true })
    await h.ctx.agents.create(h.session).send('go')
    expect(h.snapshot!.log).toEqual(['commit step:0'])
    expect(h.session.ofType('tool/result')[0]!.data).toMatchObject({ callId: 'w1', isError: false })
  })

  it('warms the baseline in the background when a session is created', async () => {
    const root = makeWorkspace('')
    const h = await boot(root, { ...generic, warmOnStart: true })
    // boot() created a session after the plugin loaded: its workspace is being measured.
    await h.ctx.dstvalid.guardFor(root).queue.idle()
    expect(runs(h.session).map(r => [r.check, r.argv, r.outcome])).toEqual([['compile', ['test ! -e broken'], 'pass']])
    // A second session on the same workspace shares the measured state.
    const second = h.ctx.sessions.create(undefined, { cwd: root })
    await h.ctx.dstvalid.guardFor(root).queue.idle()
    expect(runs(second)).toEqual([])
    expect(h.notices.filter(x => x.sessionId === h!.session.id).map(x => x.text)).toEqual([
      'measuring the baseline state: running compile…',
      'compile: 0 existing problems in the accepted state',
    ])
  })
})
