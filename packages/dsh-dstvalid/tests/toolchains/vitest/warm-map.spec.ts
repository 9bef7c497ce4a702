/**
 * `warmMap` (what the hooks host turns on): a session's start runs the tests
 * measured per write once, whole, in the background, so the first write
 * measures no accepted state of its own.
 */
import { describe, expect, it } from 'vitest'
import { boot, makeWorkspace, runs } from '../../helpers.ts'

const testRuns = (h: Awaited<ReturnType<typeof boot>>) => runs(h.session).filter(x => x.check === 'test').map(x => [x.argv.join(' '), x.outcome])
const bodyEdit = { path: 'src/money.ts', old_string: 'Math.round(amount * (1 - percent / 100))', new_string: 'Math.round(amount * (1 - percent / 100)) // to the cent' }

describe('warmMap', () => {
  it('runs the whole suite when a session is created; the first write then runs only its related tests', async () => {
    const root = makeWorkspace()
    const h = await boot(root, { tsconfig: 'tsconfig.full.json', warmOnStart: true, warmMap: true })
    await h.ctx.dstvalid.guardFor(root).queue.idle()
    expect(testRuns(h)).toEqual([['vitest run (warm)', 'pass']])
    // The suite's run begins while the type-check baseline is measured (the naive check runs them one after the other).
    const texts = h.notices.map(n => `${n.phase ?? ''} ${n.text}`)
    const suiteBegins = texts.indexOf('start warming up: testing the whole suite…')
    const baselineEnds = texts.findIndex(t => t.startsWith('end typecheck:'))
    expect(suiteBegins).toBeGreaterThan(-1)
    expect(baselineEnds).toBeGreaterThan(suiteBegins)
    expect(await h.exec('edit_file', bodyEdit)).toEqual({ content: 'edited src/money.ts' })
    expect(testRuns(h)).toEqual([['vitest run (warm)', 'pass'], ['vitest related src/money.ts --run (warm)', 'pass']])
  })

  it('off (the default): a session\'s start runs no test', async () => {
    const root = makeWorkspace()
    const h = await boot(root, { tsconfig: 'tsconfig.full.json', warmOnStart: true })
    await h.ctx.dstvalid.guardFor(root).queue.idle()
    expect(testRuns(h)).toEqual([])
  })
})
