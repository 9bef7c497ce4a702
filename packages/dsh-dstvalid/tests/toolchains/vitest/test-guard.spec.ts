import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { boot, bootForSuite, breakDiscount, discountTestFails, expectRolledBack, makeWorkspace, runs, STOPPED } from '../../helpers.ts'

const newTest = `import { expect, it } from 'vitest'
import { add } from '../src/money.ts'

it('subtracts cents', () => expect(add(5, -3)).toBe(3))
`
const testOfUnwrittenCode = `import { expect, it } from 'vitest'
import { subtract } from '../src/money.ts'

it('subtracts', () => expect(subtract(5, 3)).toBe(2))
`

describe('test guard through the vitest CLI (vitest related, type-checking tests too)', () => {
  // One workspace for the steps below, in order (each its own test: none waits on the others' time).
  const suite = bootForSuite(() => makeWorkspace(), { tsconfig: 'tsconfig.full.json', warmTests: false })

  it('rolls back a test break, naming only the newly failing test, byte for byte', async () => {
    const { h } = suite
    // pass → fail: rolled back, naming only the newly failing test; the file is restored byte for byte.
    await expectRolledBack(h, 'edit_file', breakDiscount, 'rolled back: test failed after edit_file on src/money.ts', discountTestFails)
    expect(h.results.map(x => [x.check, x.outcome])).toEqual([['typecheck', 'pass'], ['test', 'rolled-back']])
    const tests = runs(h.session).filter(x => x.check === 'test')
    // The related run after the write (never the whole suite), the failing test file on the content before
    // the write in a mount namespace (ADR 0019), the failing test alone; no re-check: the file is back byte for byte.
    expect(tests.map(x => [x.argv[2], x.outcome])).toEqual([['related', 'fail'], ['run', 'pass'], ['run', 'fail']])
    expect(tests[0]!.argv.slice(3, 5)).toEqual(['src/money.ts', '--run'])
    expect(tests[1]!.argv.slice(3, 4)).toEqual(['tests/money.test.ts'])
    expect(tests[1]!.argv.at(-1)).toBe('(the content before the write, in a mount namespace)')
    expect(tests[2]!.argv.slice(3, 6)).toEqual(['tests/money.test.ts', '-t', '^(money applies a percentage discount)$'])

  })

  it('keeps a new failing test written before its implementation, with a warning', async () => {
    const { h } = suite
    const first = await h.exec('write_file', { path: 'tests/subtract.test.ts', content: newTest })
    expect(first).toEqual({
      content: [
        'created tests/subtract.test.ts (131 bytes)',
        'warning: kept, but test has new problems in tests (test-first work? make them pass):',
        'tests/subtract.test.ts:4 FAIL subtracts cents — AssertionError: expected 2 to be 3 // Object.is equality',
      ].join('\n'),
    })
    expect(h.results.slice(2).map(x => [x.check, x.outcome, x.newProblems.length])).toEqual([['typecheck', 'pass', 0], ['test', 'pass', 1]])

  })

  it('keeps a test importing a function not written yet: its type error is a warning too', async () => {
    const { h } = suite
    const unwritten = await h.exec('write_file', { path: 'tests/unwritten.test.ts', content: testOfUnwrittenCode })
    expect(unwritten.isError).toBeFalsy()
    expect(unwritten.content.split('\n').slice(0, 3)).toEqual([
      'created tests/unwritten.test.ts (134 bytes)',
      'warning: kept, but typecheck has new problems in tests (test-first work? make them pass):',
      `tests/unwritten.test.ts:2 TS2305 Module '"../src/money.ts"' has no exported member 'subtract'.`,
    ])

  })

  it('tolerates a flaky test; a real failure later is still caught', async () => {
    const { h } = suite
    // Flaky: the test fails once, then passes alone — the edit is kept. (The first edit of
    // src/greeting.ts measures its related tests before it runs: arm the flake after that.
    // Code edits: a comment-only write runs no test.)
    expect(await h.exec('edit_file', { path: 'src/greeting.ts', old_string: 'return `Hello, ${name}!`', new_string: "return 'Hello, ' + name + '!'" })).toEqual({ content: 'edited src/greeting.ts' })
    writeFileSync(join(h.root, '.flaky-armed'), '')
    const same = await h.exec('edit_file', { path: 'src/greeting.ts', old_string: "return 'Hello, ' + name + '!'", new_string: 'return `Hello, ${name}!`' })
    expect(same).toEqual({ content: 'edited src/greeting.ts' })
    expect(h.notices.map(n => n.text)).toContain('1 failure did not repeat (flaky); not blamed on the write')
    // It stays "passing" in the accepted state: a real failure later is still caught.
    const real = await h.exec('edit_file', { path: 'src/greeting.ts', old_string: 'Hello,', new_string: 'Hi,' })
    expect(real.content.split('\n')[0]).toBe('rolled back: test failed after edit_file on src/greeting.ts')
  })
  it('stops re-running failures alone at the first that repeats: one is enough to decide the rollback', async () => {
    const { h } = suite
    const from = runs(h.session).length
    const broken = await h.exec('edit_file', { path: 'src/money.ts', old_string: 'return a + b', new_string: 'return a + b + 1' })
    // Every failure after the write is named, re-run alone or not.
    expect(broken.content.split('\n')).toEqual([
      'rolled back: test failed after edit_file on src/money.ts',
      'tests/cart.test.ts:10 FAIL cart > sums line prices times quantities — AssertionError: expected 2102 to be 2100 // Object.is equality',
      'tests/cart.test.ts:11 FAIL cart > applies the discount to the subtotal — AssertionError: expected 1892 to be 1890 // Object.is equality',
      'tests/money.test.ts:5 FAIL money > adds cents — AssertionError: expected 426 to be 425 // Object.is equality',
    ])
    const alone = runs(h.session).slice(from).filter(x => x.check === 'test' && x.argv.includes('-t'))
    // Two test files failed; the first re-run alone repeated its failures, so the second is not re-run.
    expect(alone.map(x => x.argv.slice(3, 6))).toEqual([['tests/cart.test.ts', '-t', '^(cart sums line prices times quantities|cart applies the discount to the subtotal)$']])
    expect(h.notices.map(n => n.text).filter(t => t.startsWith('failures confirmed')).at(-1)).toBe('failures confirmed (2 failures repeated; 1 other not re-run: the verdict was decided)')
  })
  it('runs no test for a write that changed only comments (the vitest CLI too)', async () => {
    const { h } = suite
    const from = runs(h.session).length
    expect(await h.exec('edit_file', { path: 'src/money.ts', old_string: '/** Amounts are integer cents. */', new_string: '/** Amounts are integer cents (never floats). */' })).toEqual({ content: 'edited src/money.ts' })
    expect(runs(h.session).slice(from)).toEqual([])
    expect(h.notices.map(n => n.text)).toContain('test: not run: only comments and whitespace changed in src/money.ts')
  })
  it('rolls back a source rename that breaks a test file it did not touch by the type-check, running no test (ADR 0037)', async () => {
    const { h } = suite
    const from = runs(h.session).length
    // `greet` is imported by tests/greeting.test.ts alone: the test file's new error is the write's, not test-first work.
    await expectRolledBack(h, 'edit_file', { path: 'src/greeting.ts', old_string: 'export function greet(', new_string: 'export function greetPerson(' },
      'rolled back: typecheck failed after edit_file on src/greeting.ts',
      `tests/greeting.test.ts:4 TS2305 Module '"../src/greeting.ts"' has no exported member 'greet'.`,
      STOPPED,
    )
    expect(runs(h.session).slice(from).filter(x => x.check === 'test')).toEqual([])
  })
  it('keeps a source write that changes the errors of a test file whose test-first work is pending, with the warning', async () => {
    const { h } = suite
    // tests/unwritten.test.ts (above) imports `subtract`, not written yet. A first `subtract` taking strings: the test file's
    // error changes (TS2345 instead of TS2305), still its test-first work, and its test fails as before.
    const r = await h.exec('edit_file', { path: 'src/money.ts', old_string: 'export function applyDiscount(', new_string: 'export function subtract(a: string, b: string): number {\n  return Number(a) - Number(b)\n}\n\nexport function applyDiscount(' })
    expect(r.isError).toBeFalsy()
    expect(r.content.split('\n').slice(0, 3)).toEqual([
      'edited src/money.ts',
      'warning: kept, but typecheck has new problems in tests (test-first work? make them pass):',
      `tests/unwritten.test.ts:4 TS2345 Argument of type 'number' is not assignable to parameter of type 'string'.`,
    ])
  })
})

describe('the failures a rollback names first', () => {
  it('are those that repeated alone; a timeout nobody re-ran (the verdict was decided) comes after them', async () => {
    const root = makeWorkspace('shop', {
      'src/settle.ts': 'export async function settle(n: number): Promise<number> {\n  return n\n}\n\nexport const rate = 1\n',
      // Sorted first, and failing only by its time limit after the write: re-run last, so not at all.
      'tests/a-settle.test.ts': "import { expect, it } from 'vitest'\nimport { settle } from '../src/settle.ts'\n\nit('settles', async () => { expect(await settle(1)).toBe(1) }, 300)\n",
      'tests/rate.test.ts': "import { expect, it } from 'vitest'\nimport { rate } from '../src/settle.ts'\n\nit('keeps the rate', () => { expect(rate).toBe(1) })\n",
    })
    const h = await boot(root)
    const r = await h.exec('write_file', { path: 'src/settle.ts', content: 'export async function settle(_n: number): Promise<number> {\n  return new Promise(() => {})\n}\n\nexport const rate = 2\n' })
    expect(r.content.split('\n')).toEqual([
      'rolled back: test failed after write_file on src/settle.ts',
      expect.stringMatching(/^tests\/rate\.test\.ts:4 FAIL keeps the rate — AssertionError: expected 2 to be 1/),
      expect.stringMatching(/^tests\/a-settle\.test\.ts:4 FAIL settles — Error: Test timed out in 300ms/),
    ])
    expect(h.notices.map(n => n.text).filter(t => t.startsWith('failures confirmed')).at(-1)).toBe('failures confirmed (1 failure repeated; 1 other not re-run: the verdict was decided)')
  }, 120_000)
})
