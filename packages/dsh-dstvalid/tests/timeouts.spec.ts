/**
 * A failure that is only a test's own time limit is not blamed on the write
 * until it is shown not to be load: the test is re-run alone with
 * four times its limit. One that then passes is kept, with a warning naming
 * the test and the time it took; one that still times out is re-run the same
 * way on the content before the write: timing out there too (it hangs alone,
 * whatever the write) it is kept with a warning, else — the write made it
 * hang — rolled back. Real vitest (the warm runner, the CLI for the longer
 * limit), real Jest (`--testTimeout`) and real `go test -timeout`; the
 * slowness is a sleep that a marker file the spec controls turns on, never
 * time that has to pass.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { tempDir } from 'dsh-testkit'
import { boot, expectRolledBack, makeWorkspace, readText, testRuns } from './helpers.ts'

/**
 * Two tests of `src/wait.js` (their limit is 300 ms): `waits` sleeps 600 ms while `slow` exists,
 * else not at all; `runs after it` waits for the test before it in its file (alone it never ends),
 * which does not let it go on while `unready` exists.
 */
function vitestWorkspace(slow: string, unready: string): string {
  return makeWorkspace('', {
    'package.json': '{ "name": "timeouts", "private": true, "type": "module" }\n',
    'vitest.config.js': 'export default { test: { testTimeout: 300 } }\n',
    'src/wait.js': '/** Resolves after `ms`. */\nexport function wait(ms) {\n  return new Promise(resolve => setTimeout(resolve, ms))\n}\n',
    'tests/wait.test.js': [
      "import { existsSync } from 'node:fs'",
      "import { expect, it } from 'vitest'",
      "import { wait } from '../src/wait.js'",
      '',
      "it('waits', async () => {",
      `  await wait(existsSync(${JSON.stringify(slow)}) ? 600 : 0)`,
      '  expect(1).toBe(1)',
      '})',
      '',
    ].join('\n'),
    'tests/order.test.js': [
      "import { existsSync } from 'node:fs'",
      "import { expect, it } from 'vitest'",
      "import { wait } from '../src/wait.js'",
      '',
      'let ready = false',
      "it('prepares', () => {",
      `  ready = !existsSync(${JSON.stringify(unready)})`,
      '})',
      '',
      "it('runs after it', async () => {",
      '  while (!ready) await new Promise(resolve => setTimeout(resolve, 5))',
      "  expect(typeof wait).toBe('function')",
      '})',
      '',
    ].join('\n'),
  })
}

/** The warning line's time: measured, so only its shape is fixed. */
const TOOK = String.raw`took \d+\.\d s, over its 0\.3 s limit \(passed alone with 1\.2 s\)`

describe('a test that fails only by its own time limit', { timeout: 300_000 }, () => {
  it('vitest: slow only under "load" is kept with a warning naming the test and its time; one that hangs alone before the write too is kept with a warning; a hang the write causes is rolled back', async () => {
    const dir = tempDir('dsh-timeouts-')
    const [slow, unready] = [join(dir, 'slow'), join(dir, 'unready')]
    const root = vitestWorkspace(slow, unready)
    const h = await boot(root, { profiles: ['typescript'] })
    // The accepted state: both tests pass at once (the first write's related run).
    expect(await h.exec('edit_file', { path: 'src/wait.js', old_string: 'resolve => setTimeout(resolve, ms)', new_string: 'done => setTimeout(done, ms)' })).toEqual({ content: 'edited src/wait.js' })

    // "Load": from now on `waits` needs 600 ms of its 300. A harmless edit times it out; alone, with 1.2 s, it passes.
    writeFileSync(slow, '')
    const kept = await h.exec('edit_file', { path: 'src/wait.js', old_string: 'done => setTimeout(done, ms)', new_string: 'resolve => setTimeout(resolve, ms)' })
    expect(kept.isError).toBeUndefined()
    const lines = String(kept.content).split('\n')
    expect(lines.slice(0, 2)).toEqual([
      'edited src/wait.js',
      'warning: kept, but 1 test passed only when given more time than its limit (slowed by load, or by this write?):',
    ])
    expect(lines[2]).toMatch(new RegExp(`^tests/wait\\.test\\.js > waits: ${TOOK}$`))
    expect(lines).toHaveLength(3)
    expect(readText(root, 'src/wait.js')).toContain('resolve => setTimeout(resolve, ms)')
    // The related run in the warm runner timed out; the re-run alone went to the CLI with four times the limit.
    expect(testRuns(h).slice(1)).toEqual([
      ['vitest related src/wait.js --run (warm)', 'fail'],
      [expect.stringMatching(/ run tests\/wait\.test\.js -t \^\(waits\)\$ --testTimeout=1200 --reporter=/), 'pass'],
    ])

    // `runs after it` now times out in its file; alone it never ends, with 1.2 s, after the write and before it.
    rmSync(slow)
    writeFileSync(unready, '')
    expect(await h.exec('edit_file', { path: 'src/wait.js', old_string: 'resolve => setTimeout(resolve, ms)', new_string: 'done => setTimeout(done, ms)' })).toEqual({
      content: [
        'edited src/wait.js',
        'warning: kept, but 1 test times out when run alone before this write too (not blamed on it; does it depend on the tests before it?):',
        'tests/order.test.js > runs after it: times out alone with 1.2 s before and after the write (its limit is 0.3 s)',
      ].join('\n'),
    })
    expect(testRuns(h).slice(3)).toEqual([
      ['vitest related src/wait.js --run (warm)', 'fail'],
      [expect.stringMatching(/ run tests\/order\.test\.js -t \^\(runs after it\)\$ --testTimeout=1200 --reporter=/), 'fail'],
      [expect.stringMatching(/ run tests\/order\.test\.js -t \^\(runs after it\)\$ --testTimeout=1200 .*\(the content before the write, in a mount namespace\)$/), 'fail'],
    ])

    // A write that makes the wait never end: it times out alone with the longer limit, passes so before the write: rolled back.
    rmSync(unready)
    await expectRolledBack(h, 'edit_file', { path: 'src/wait.js', old_string: 'setTimeout(done, ms)', new_string: 'setTimeout(() => {}, ms)' },
      'rolled back: test failed after edit_file on src/wait.js',
      'tests/wait.test.js:5 FAIL waits — Error: Test timed out in 300ms.')
    expect(testRuns(h).slice(6).map(r => [r[0]!.endsWith('(the content before the write, in a mount namespace)'), r[1]])).toEqual([[false, 'fail'], [false, 'fail'], [true, 'pass']])
  })

  it('Jest: a test slow only under "load" is kept with the warning (its limit raised with --testTimeout)', async () => {
    const slow = join(tempDir('dsh-timeouts-'), 'slow')
    const root = makeWorkspace('', {
      'package.json': JSON.stringify({ name: 'jt', private: true, jest: { testEnvironment: 'node', testTimeout: 300 } }),
      'src/wait.js': 'exports.wait = ms => new Promise(resolve => setTimeout(resolve, ms))\n',
      'tests/wait.test.js': [
        "const { existsSync } = require('node:fs')",
        "const { wait } = require('../src/wait')",
        '',
        `test('waits', () => wait(existsSync(${JSON.stringify(slow)}) ? 600 : 0))`,
        '',
      ].join('\n'),
    }, { nodeModules: 'package' })
    const h = await boot(root, { testArgs: [] })
    expect(await h.exec('edit_file', { path: 'src/wait.js', old_string: 'resolve => setTimeout(resolve, ms)', new_string: 'done => setTimeout(done, ms)' })).toEqual({ content: 'edited src/wait.js' })
    writeFileSync(slow, '')
    const lines = String((await h.exec('edit_file', { path: 'src/wait.js', old_string: 'done => setTimeout(done, ms)', new_string: 'resolve => setTimeout(resolve, ms)' })).content).split('\n')
    expect(lines.slice(0, 2)).toEqual([
      'edited src/wait.js',
      'warning: kept, but 1 test passed only when given more time than its limit (slowed by load, or by this write?):',
    ])
    expect(lines[2]).toMatch(new RegExp(`^tests/wait\\.test\\.js > waits: ${TOOK}$`))
    expect(testRuns(h).at(-1)).toEqual([expect.stringMatching(/ --runTestsByPath tests\/wait\.test\.js -t \^\(waits\)\$ --testTimeout=1200 /), 'pass'])
  })

  it('go test -timeout: a test slow only under "load" is kept with the warning; one the write makes hang is rolled back', async () => {
    const root = makeWorkspace('', {
      'go.mod': 'module example.com/wait\n\ngo 1.19\n',
      'wait.go': 'package wait\n\nimport "time"\n\n// Wait sleeps for ms milliseconds.\nfunc Wait(ms int) {\n\ttime.Sleep(time.Duration(ms) * time.Millisecond)\n}\n',
      'wait_test.go': [
        'package wait',
        '',
        'import (',
        '\t"os"',
        '\t"testing"',
        ')',
        '',
        'func TestWaits(t *testing.T) {',
        '\tms := 0',
        '\tif _, err := os.Stat("testdata/slow"); err == nil {',
        '\t\tms = 600',
        '\t}',
        '\tWait(ms)',
        '}',
        '',
      ].join('\n'),
    })
    // Go's test cache re-checks only files inside the module: the marker is in testdata/.
    const marker = join(root, 'testdata', 'slow')
    mkdirSync(join(root, 'testdata'))
    // The binary's limit is the project's own `-timeout` (here through testArgs).
    const h = await boot(root, { profiles: ['go'], testArgs: ['-timeout=300ms'] })
    expect(await h.exec('edit_file', { path: 'wait.go', old_string: 'time.Duration(ms) * time.Millisecond', new_string: 'time.Millisecond * time.Duration(ms)' })).toEqual({ content: 'edited wait.go' })

    writeFileSync(marker, '')
    const kept = await h.exec('edit_file', { path: 'wait.go', old_string: 'time.Millisecond * time.Duration(ms)', new_string: 'time.Duration(ms) * time.Millisecond' })
    const lines = String(kept.content).split('\n')
    expect(lines.slice(0, 2)).toEqual([
      'edited wait.go',
      'warning: kept, but 1 test passed only when given more time than its limit (slowed by load, or by this write?):',
    ])
    expect(lines[2]).toMatch(new RegExp(`^example\\.com/wait::TestWaits: ${TOOK}$`))
    expect(testRuns(h).filter(r => r[0].startsWith('go test')).slice(-1)).toEqual([['go test -json -timeout=300ms -vet=off -run ^(TestWaits)$ -timeout=1200ms .', 'pass']])

    rmSync(marker)
    await expectRolledBack(h, 'edit_file', { path: 'wait.go', old_string: '\ttime.Sleep(time.Duration(ms) * time.Millisecond)', new_string: '\ttime.Sleep(time.Hour)' },
      'rolled back: test failed after edit_file on wait.go',
      'example.com/wait FAIL TestWaits — panic: test timed out after 300ms')
  })
})
