/**
 * The warm-up yields to a write: a write made while the warm-up's whole run
 * is running is judged before the rest of that run (the run cancelled, the
 * test files that finished kept), with the verdict it gets without a
 * warm-up; the rest runs after it, and the workspace ends warm.
 */
import { describe, expect, it, vi } from 'vitest'
import { boot, breakDiscount, discountTestFails, expectRolledBack, makeWorkspace, testRuns } from '../../helpers.ts'

const slowTest = (i: number) => `import { expect, it } from 'vitest'\n\nit('waits ${i}', async () => {\n  await new Promise(resolve => setTimeout(resolve, 3000))\n  expect(${i}).toBe(${i})\n})\n`
const slow = Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`tests/slow${i}.test.ts`, slowTest(i)]))

describe('a write during the warm-up', () => {
  it('is judged before the rest of the warm-up, rolled back as without one; the rest runs after it and the workspace ends warm', async () => {
    const root = makeWorkspace('shop', slow)
    // One test file at a time: the cancel lets the running one finish, so the others are left for after the write.
    const h = await boot(root, { tsconfig: 'tsconfig.full.json', warmOnStart: true, warmMap: true, testArgs: ['--pool=threads', '--maxWorkers=1', '--minWorkers=1'] })
    await vi.waitFor(() => expect(h.notices.map(n => n.text)).toContain('warming up: testing the whole suite…'), { timeout: 60_000, interval: 50 })
    expect(h.ctx.dstvalid.warmState(root)).toMatchObject({ state: 'warming' })
    await expectRolledBack(h, 'edit_file', breakDiscount, 'rolled back: test failed after edit_file on src/money.ts', discountTestFails)
    await h.ctx.dstvalid.guardFor(root).queue.idle()
    const order = testRuns(h).map(([argv]) => argv!)
    const edit = order.findIndex(a => a.startsWith('vitest related src/money.ts'))
    // The files the cancel let finish are not run again; when none had finished (a loaded machine), the whole suite runs after the write.
    const rest = order.findIndex((a, i) => i > edit && /^vitest run (\(the \d+ test files the warm-up has left\) )?\(warm\)$/.test(a))
    expect(order[0]).toBe('vitest run (warm)')
    expect(edit).toBeGreaterThan(0)
    expect(rest).toBeGreaterThan(edit)
    expect(h.ctx.dstvalid.warmState(root)).toMatchObject({ state: 'warm', yielded: 1 })
    expect(h.notices.map(n => n.text)).toContain('warming up: yielded to a write; the rest after it')
  })
})
