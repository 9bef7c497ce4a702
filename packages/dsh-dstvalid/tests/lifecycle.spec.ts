import { afterAll, afterEach, describe, expect, it } from 'vitest'
import type { Context } from '@deepseek-ai/cordis'
import { boot, cleanupWorkspaces, makeWorkspace, runs, type Harness } from './helpers.ts'

let h: Harness | undefined
afterEach(async () => { await h?.dispose(); h = undefined })
afterAll(cleanupWorkspaces)

const EVENTS = ['tools/execute', 'agent/step-results', 'snapshot/judge', 'session/created']
const counts = (ctx: Context) => Object.fromEntries(EVENTS.map(e => [e, ctx.events._hooks[e]?.length ?? 0]))

describe('lifecycle and control', () => {
  it('disposing the fiber (twice) removes every listener it added', async () => {
    const root = makeWorkspace()
    h = await boot(root, { tests: 'off' })
    const loaded = counts(h.ctx)
    await h.ready()
    await h.fiber.dispose()
    await h.fiber.dispose()
    const after = counts(h.ctx)
    expect(after['agent/step-results']).toBe(loaded['agent/step-results']! - 1)
    expect(after['snapshot/judge']).toBe(loaded['snapshot/judge']! - 1)
    expect(after['session/created']).toBe(loaded['session/created']! - 1)
    expect(after['tools/execute']).toBe(loaded['tools/execute']! - 1)
    // Writes now pass through unjudged.
    const before = runs(h.session).length
    expect(await h.exec('edit_file', { path: 'src/money.ts', old_string: 'return a + b', new_string: 'return a - b' })).toEqual({ content: 'edited src/money.ts' })
    expect(runs(h.session)).toHaveLength(before)
  })

  it('answers snapshot/judge only while enabled; disable drops state, enable measures a fresh baseline', async () => {
    const root = makeWorkspace()
    h = await boot(root, { tests: 'off' })
    await h.exec('edit_file', { path: 'src/money.ts', old_string: 'return a + b', new_string: 'return b + a' })
    expect(h.snapshot!.judged).toHaveLength(1)
    await h.ctx.dstvalid.disable()
    expect(h.ctx.dstvalid.enabled).toBe(false)
    const n = runs(h.session).length
    expect(await h.exec('edit_file', { path: 'src/greeting.ts', old_string: 'return `Hello, ${name}!`', new_string: 'return name.lenght' })).toEqual({ content: 'edited src/greeting.ts' })
    expect(runs(h.session)).toHaveLength(n)
    expect(h.snapshot!.judged).toHaveLength(1)
    h.ctx.dstvalid.enable()
    // The broken file written while disabled is part of the new baseline: an unrelated edit is kept.
    expect(await h.exec('edit_file', { path: 'src/money.ts', old_string: 'return b + a', new_string: 'return a + b' })).toEqual({ content: 'edited src/money.ts' })
    expect(runs(h.session).slice(n).map(r => [r.argv.at(-1), r.outcome])).toEqual([['(in-process, cold)', 'fail'], ['(in-process, incremental)', 'fail']])
  })

  it('warms the baseline in the background when a session is created', async () => {
    const root = makeWorkspace()
    h = await boot(root, { tests: 'off', warmOnStart: true })
    // boot() created a session after the plugin loaded: its workspace is being measured.
    await h.ctx.dstvalid.guardFor(root).queue.idle()
    expect(runs(h.session).map(r => [r.check, r.argv.at(-1)])).toEqual([['typecheck', '(in-process, cold)']])
    // A second session on the same workspace shares the measured state.
    const second = h.ctx.sessions.create(undefined, { cwd: root })
    await h.ctx.dstvalid.guardFor(root).queue.idle()
    expect(runs(second)).toEqual([])
    expect(h.notices.filter(x => x.sessionId === h!.session.id).map(x => x.text)).toEqual([
      'measuring the baseline state: type-checking…',
      'typecheck: 0 existing problems in the accepted state',
    ])
  })
})
