import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { boot, cleanupWorkspaces, makeWorkspace, readText, runs, type Harness } from './helpers.ts'

let h: Harness | undefined
afterEach(async () => { await h?.dispose(); h = undefined })
afterAll(cleanupWorkspaces)

const newTest = `import { expect, it } from 'vitest'
import { add } from '../src/money.ts'

it('subtracts cents', () => expect(add(5, -3)).toBe(3))
`

describe('test guard (vitest related)', () => {
  it('rolls back a test-breaking edit, naming only the newly failing tests, and restores the file byte for byte', async () => {
    const root = makeWorkspace()
    h = await boot(root)
    const before = readText(root, 'src/money.ts')
    const r = await h.exec('edit_file', { path: 'src/money.ts', old_string: 'Math.round(amount * (1 - percent / 100))', new_string: 'Math.ceil(amount * (1 - percent / 100))' })
    expect(r.isError).toBe(true)
    expect(r.content).toBe([
      'rolled back: test failed after edit_file on src/money.ts',
      'tests/money.test.ts:6 FAIL money > applies a percentage discount — AssertionError: expected 900 to be 899 // Object.is equality',
    ].join('\n'))
    expect(readText(root, 'src/money.ts')).toBe(before)
    expect(h.results.map(x => [x.check, x.outcome])).toEqual([['typecheck', 'pass'], ['test', 'rolled-back']])
    const tests = runs(h.session).filter(x => x.check === 'test')
    // Baseline (whole suite), the related run, the failing test alone, the re-check after the rollback.
    expect(tests.map(x => [x.argv[2], x.outcome])).toEqual([['run', 'pass'], ['related', 'fail'], ['run', 'fail'], ['related', 'pass']])
    expect(tests[1]!.argv.slice(3, 5)).toEqual(['src/money.ts', '--run'])
    expect(tests[2]!.argv.slice(3, 6)).toEqual(['tests/money.test.ts', '-t', '^(money applies a percentage discount)$'])
  })

  it('keeps a new failing test written before its implementation, with a warning', async () => {
    const root = makeWorkspace()
    h = await boot(root)
    const r = await h.exec('write_file', { path: 'tests/subtract.test.ts', content: newTest })
    expect(r.isError).toBeFalsy()
    expect(r.content).toBe([
      'created tests/subtract.test.ts (131 bytes)',
      'warning: kept, but test has new problems in tests (test-first work? make them pass):',
      'tests/subtract.test.ts:4 FAIL subtracts cents — AssertionError: expected 2 to be 3 // Object.is equality',
    ].join('\n'))
    expect(readText(root, 'tests/subtract.test.ts')).toBe(newTest)
    expect(h.results.map(x => [x.check, x.outcome, x.newProblems.length])).toEqual([['typecheck', 'pass', 0], ['test', 'pass', 1]])
  })

  it('rolls the same test back under strictTests', async () => {
    const root = makeWorkspace()
    h = await boot(root, { strictTests: true })
    const r = await h.exec('write_file', { path: 'tests/subtract.test.ts', content: newTest })
    expect(r.content.split('\n')[0]).toBe('rolled back: test failed after write_file on tests/subtract.test.ts')
    expect(r.isError).toBe(true)
    expect(() => readText(root, 'tests/subtract.test.ts')).toThrow(/ENOENT/)
  })

  it('keeps an edit when a newly failing test passes when re-run alone (flaky)', async () => {
    const root = makeWorkspace()
    h = await boot(root)
    await h.ready()
    writeFileSync(join(root, '.flaky-armed'), '')
    const r = await h.exec('edit_file', { path: 'src/greeting.ts', old_string: 'export function greet', new_string: '/** Greets. */\nexport function greet' })
    expect(r).toEqual({ content: 'edited src/greeting.ts' })
    expect(h.notices.some(n => n.text === '1 failure did not repeat (flaky); not blamed on the write')).toBe(true)
    expect(h.results.map(x => [x.check, x.outcome])).toEqual([['typecheck', 'pass'], ['test', 'pass']])
    // The flaky test stays "passing" in the accepted state: a real failure later is still caught.
    const broken = await h.exec('edit_file', { path: 'src/greeting.ts', old_string: 'Hello,', new_string: 'Hi,' })
    expect(broken.content.split('\n')[0]).toBe('rolled back: test failed after edit_file on src/greeting.ts')
  })
})
