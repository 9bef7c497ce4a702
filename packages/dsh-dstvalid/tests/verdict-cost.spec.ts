/**
 * No check whose answer cannot change the verdict: the after-state is judged
 * first; the accepted state of the related tests is measured only for the
 * tests that fail after the write, on the accepted content served to the warm
 * runner (nothing written); a rollback that puts every file back byte for
 * byte is confirmed without measuring again.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { boot, breakDiscount, discountTestFails, expectRolledBack, makeWorkspace, runs, STOPPED } from './helpers.ts'

/** The test runs of the session: the command as recorded, and what it found. */
const testRuns = (h: Awaited<ReturnType<typeof boot>>) => runs(h.session).filter(r => r.check === 'test').map(r => [r.argv.join(' '), r.outcome])

// Each test boots a type-checker and a warm vitest: minutes on a loaded machine.
describe('judging a write costs only the checks that can change its verdict', { timeout: 600_000 }, () => {
  it('a write the type-check rolls back runs no test, and its byte-identical rollback re-checks nothing', async () => {
    const root = makeWorkspace()
    const h = await boot(root, { tsconfig: 'tsconfig.full.json' })
    // The first write at once: no baseline measured before it.
    await expectRolledBack(h, 'edit_file', { path: 'src/money.ts', old_string: 'export function add(', new_string: 'export function plus(' },
      'rolled back: typecheck failed after edit_file on src/money.ts',
      "src/cart.ts:1 TS2305 Module '\"./money.ts\"' has no exported member 'add'.",
      STOPPED)
    expect(testRuns(h)).toEqual([])
    // The baseline and the after-state; nothing after the rollback.
    expect(runs(h.session).map(r => r.check)).toEqual(['typecheck', 'typecheck'])
    expect(h.notices.map(n => n.text)).toContain('accepted state confirmed: every file is back byte for byte (nothing re-checked)')
    // The checker is back to the accepted state: a good write is kept, a bad one still caught.
    expect((await h.exec('edit_file', { path: 'src/money.ts', old_string: '/** Amounts', new_string: '/** All amounts' })).isError).toBeUndefined()
    expect((await h.exec('edit_file', { path: 'src/money.ts', old_string: 'export function add(', new_string: 'export function plus(' })).isError).toBe(true)
  })

  it('a passing after-state never measures the accepted state of its tests', async () => {
    const h = await boot(makeWorkspace(), { tsconfig: 'tsconfig.full.json' })
    const kept = await h.exec('edit_file', { path: 'src/money.ts', old_string: 'return a + b', new_string: 'return b + a' })
    expect(kept).toEqual({ content: 'edited src/money.ts' })
    expect(testRuns(h)).toEqual([['vitest related src/money.ts --run (warm)', 'pass']])
  })

  it('a test that fails after the write is measured on the accepted content, served to the runner: it passed there, so the write is rolled back', async () => {
    const root = makeWorkspace()
    const h = await boot(root, { tsconfig: 'tsconfig.full.json' })
    await expectRolledBack(h, 'edit_file', breakDiscount, 'rolled back: test failed after edit_file on src/money.ts', discountTestFails)
    expect(testRuns(h)).toEqual([
      ['vitest related src/money.ts --run (warm)', 'fail'],
      ['vitest run tests/money.test.ts (the content before the write) (warm)', 'pass'],
      ['vitest run tests/money.test.ts -t ^(money applies a percentage discount)$ (warm)', 'fail'],
    ])
  })

  it('a test failing before and after the write is not a regression', async () => {
    const root = makeWorkspace('shop', {
      'tests/known.test.ts': "import { expect, it } from 'vitest'\nimport { add } from '../src/money.ts'\n\nit('is known to fail', () => expect(add(1, 1)).toBe(3))\n",
    })
    const h = await boot(root, { tsconfig: 'tsconfig.full.json' })
    const kept = await h.exec('edit_file', { path: 'src/money.ts', old_string: 'return a + b', new_string: 'return b + a' })
    expect(kept).toEqual({ content: 'edited src/money.ts' })
    expect(testRuns(h)).toEqual([
      ['vitest related src/money.ts --run (warm)', 'fail'],
      ['vitest run tests/known.test.ts (the content before the write) (warm)', 'fail'],
    ])
    expect(readFileSync(join(root, 'src/money.ts'), 'utf8')).toContain('return b + a')
    // Now known: the next write's failing test is compared without measuring it again.
    expect(await h.exec('edit_file', { path: 'src/money.ts', old_string: 'return b + a', new_string: 'return a + b' })).toEqual({ content: 'edited src/money.ts' })
    expect(testRuns(h).slice(2)).toEqual([['vitest related src/money.ts --run (warm)', 'fail']])
  })
})
