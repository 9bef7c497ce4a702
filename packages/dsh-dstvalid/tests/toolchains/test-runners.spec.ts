import { ownParseErrors } from '../../src/toolchains/runner.ts'
import { describe, expect, it } from 'vitest'
import { bootForSuite, expectRolledBack, makeWorkspace, readText, runnerScenarios, runs } from '../helpers.ts'

/*
 * The test runners real projects use, on small layouts: a library whose
 * vitest config has three projects (one cannot start here: its environment
 * is not installed), with a pre-existing failing test and a suite longer
 * than the timeout; and a Jest project. No tsconfig: the test check alone judges.
 */

/** Longer than TIMEOUT_MS: the whole suite can never finish inside one judgement. */
const SLEEPY_MS = 60_000
/** Small on purpose: a whole-suite baseline would time out; related runs fit. */
const TIMEOUT_MS = 25_000

const library: Record<string, string> = {
  'package.json': JSON.stringify({ name: 'lib', private: true, type: 'module' }),
  'vitest.config.ts': `import { defineConfig } from 'vitest/config'
export default defineConfig({ test: { projects: [
  { test: { name: 'unit', include: ['tests/unit/**/*.test.ts'] } },
  { test: { name: 'integration', include: ['tests/int/**/*.test.ts'] } },
  { test: { name: 'dom', include: ['tests/dom/**/*.test.ts'], environment: 'happy-dom' } },
] } })
`,
  'src/money.ts': `export function discount(amount: number, percent: number): number {
  return Math.round(amount * (1 - percent / 100))
}
`,
  'src/label.ts': `import { discount } from './money.ts'

export function label(amount: number): string {
  return \`\${discount(amount, 10)} cents\`
}
`,
  'src/legacy.ts': 'export const legacy = () => 1\n',
  'src/slow.ts': 'export const delayMs = 0\n',
  'tests/unit/money.test.ts': `import { expect, it } from 'vitest'
import { discount } from '../../src/money.ts'

it('discounts', () => expect(discount(999, 10)).toBe(899))
`,
  'tests/unit/legacy.test.ts': `import { expect, it } from 'vitest'
import { legacy } from '../../src/legacy.ts'

it('was always broken', () => expect(legacy()).toBe(2))
`,
  'tests/int/label.test.ts': `import { expect, it } from 'vitest'
import { label } from '../../src/label.ts'

it('labels', () => expect(label(1000)).toBe('900 cents'))
`,
  'tests/int/slow.test.ts': `import { expect, it } from 'vitest'
import { delayMs } from '../../src/slow.ts'

it('waits', async () => {
  await new Promise(resolve => setTimeout(resolve, delayMs))
  expect(delayMs).toBeGreaterThanOrEqual(0)
}, 600_000)
`,
  'tests/int/sleepy.test.ts': `import { expect, it } from 'vitest'

it('takes longer than any judgement may', async () => {
  await new Promise(resolve => setTimeout(resolve, ${SLEEPY_MS}))
  expect(true).toBe(true)
}, 600_000)
`,
  'tests/dom/money.test.ts': `import { expect, it } from 'vitest'
import { discount } from '../../src/money.ts'

it('discounts in a page', () => expect(discount(100, 50)).toBe(50))
`,
}

describe('vitest with projects, one of which cannot start; a suite longer than the timeout', () => {
  // The vitest CLI (its projects are found and left out by this check; the warm runner has its own start-up).
  const suite = bootForSuite(() => makeWorkspace('', library), { timeoutMs: TIMEOUT_MS, warmTests: false })

  it('keeps an unrelated good edit without waiting for the whole suite; the project that cannot start is left out', async () => {
    const { h } = suite
    const r = await h.exec('edit_file', { path: 'src/label.ts', old_string: '`${discount(amount, 10)} cents`', new_string: "discount(amount, 10) + ' cents'" })
    expect(r).toEqual({ content: 'edited src/label.ts' })
    // One related run, after the write: it passed, so no accepted state is measured (ADR 0019).
    expect(runs(h.session).map(x => x.argv.slice(2, 5))).toEqual([['related', 'src/label.ts', '--run']])
    expect(h.results.map(x => [x.check, x.outcome])).toEqual([['test', 'pass']])
  })

  it('rolls back a behaviour change that fails a test, byte for byte, naming the test and its project', async () => {
    const { h } = suite
    await expectRolledBack(h, 'edit_file', { path: 'src/money.ts', old_string: 'Math.round', new_string: 'Math.ceil' },
      'rolled back: test failed after edit_file on src/money.ts',
      'tests/unit/money.test.ts:4 FAIL discounts [unit] — AssertionError: expected 900 to be 899 // Object.is equality',
    )
    expect(h.notices.map(n => n.text)).toContainEqual(expect.stringMatching(/^vitest project "dom" cannot start here \(Error: Cannot find package 'happy-dom'.*\); its tests are left out — a pre-existing problem of that project$/))
    // The two projects that start are run for the accepted state (measured after the write, in a mount namespace); the one that cannot is not.
    const accepted = runs(h.session).find(x => x.argv.at(-1) === '(the content before the write, in a mount namespace)')!
    expect(accepted.argv.slice(2, 4)).toEqual(['run', 'tests/unit/money.test.ts'])
    expect(accepted.outcome).toBe('pass')
    expect(accepted.argv.filter((a, i) => accepted.argv[i - 1] === '--project')).toEqual(['unit', 'integration'])
  })

  it('rolls back a parse error in the edited source file, which vitest `related` reports with no test result', async () => {
    const { h } = suite
    const before = readText(h.root, 'src/money.ts')
    const r = await h.exec('edit_file', { path: 'src/money.ts', old_string: 'percent: number): number {', new_string: 'percent: number): number {{' })
    expect(r.isError).toBe(true)
    expect(r.content.split('\n')).toEqual([
      'rolled back: test failed after edit_file on src/money.ts',
      'src/money.ts:4 PARSE_ERROR ERROR: Unexpected end of file',
    ])
    expect(readText(h.root, 'src/money.ts')).toBe(before)
  })

  it('keeps a test-first test file with the warning', async () => {
    const { h } = suite
    const r = await h.exec('write_file', {
      path: 'tests/unit/half.test.ts',
      content: "import { expect, it } from 'vitest'\nimport { discount } from '../../src/money.ts'\n\nit('halves', () => expect(discount(3, 50)).toBe(1))\n",
    })
    expect(r).toEqual({
      content: [
        'created tests/unit/half.test.ts (135 bytes)',
        'warning: kept, but test has new problems in tests (test-first work? make them pass):',
        'tests/unit/half.test.ts:4 FAIL halves [unit] — AssertionError: expected 2 to be 1 // Object.is equality',
      ].join('\n'),
    })
  })

  it('a related run longer than the timeout is reported as not verified', async () => {
    const { h } = suite
    const r = await h.exec('edit_file', { path: 'src/slow.ts', old_string: 'delayMs = 0', new_string: `delayMs = ${SLEEPY_MS}` })
    // The related files were counted by an accepted-state run before the write, which a servable write no longer has.
    expect(r).toEqual({ content: `edited src/slow.ts\nwarning: not verified: test took longer than ${TIMEOUT_MS / 1000} s (related test files not counted)` })
    // Never the whole suite, whose sleepy test alone takes longer than the timeout.
    expect(runs(h.session).filter(x => x.argv[2] === 'run' && !x.argv[3]?.startsWith('tests/'))).toEqual([])
  })
})

const jestProject: Record<string, string> = {
  'package.json': JSON.stringify({ name: 'jp', private: true, jest: { testEnvironment: 'node' } }),
  'src/sum.js': 'function sum(a, b) {\n  return a + b\n}\nmodule.exports = { sum }\n',
  'src/total.js': "const { sum } = require('./sum')\n\nexports.total = list => list.reduce(sum, 0)\n",
  'src/legacy.js': 'exports.legacy = () => 1\n',
  'tests/sum.test.js': "const { sum } = require('../src/sum')\n\ntest('adds', () => expect(sum(1, 2)).toBe(3))\n",
  'tests/total.test.js': "const { total } = require('../src/total')\n\ndescribe('total', () => {\n  test('sums a list', () => expect(total([1, 2, 3])).toBe(6))\n})\n",
  'tests/legacy.test.js': "const { legacy } = require('../src/legacy')\n\ntest('was always broken', () => expect(legacy()).toBe(2))\n",
}

describe('Jest (a jest key in package.json): --findRelatedTests with its JSON report', () => {
  const suite = bootForSuite(() => makeWorkspace('', jestProject, { nodeModules: 'package' }), { testArgs: [] })

  runnerScenarios(suite, {
    testDir: 'tests',
    // The workspace's own jest.
    goodEditRuns: runs => expect(runs.map(x => x.argv.slice(1, 4))).toEqual([
      [expect.stringMatching(/node_modules\/jest\/bin\/jest\.js$/), '--findRelatedTests', 'src/total.js'],
    ]),
    behaviourBreak: [
      'tests/sum.test.js:3 FAIL adds — Error: expect(received).toBe(expected) // Object.is equality',
      'tests/total.test.js:4 FAIL total > sums a list — Error: expect(received).toBe(expected) // Object.is equality',
    ],
    rerunAlone: '--runTestsByPath',
    syntaxError: [
      'tests/sum.test.js FAIL test file failed: Jest encountered an unexpected token',
      'tests/total.test.js FAIL test file failed: Jest encountered an unexpected token',
      'src/sum.js:3 PARSE_ERROR SyntaxError: Unexpected token',
    ],
    testFirst: {
      name: 'twice.test.js',
      content: "const { sum } = require('../src/sum')\n\ntest('doubles', () => expect(sum(2)).toBe(4))\n",
      failure: 'tests/twice.test.js:3 FAIL doubles — Error: expect(received).toBe(expected) // Object.is equality',
    },
  })
})

describe('the write\'s own parse errors, as each runner words them', () => {
  const root = '/ws'
  const touched = ['src/a.ts']
  const found = (text: string) => ownParseErrors('test', root, touched, [text]).map(p => [p.file, p.line, p.code, p.message, p.own])

  it('esbuild (vitest ≤ 3), oxc (vitest 4, with colours), Babel (Jest)', () => {
    expect(found('Error: Transform failed with 1 error:\n/ws/src/a.ts:3:0: ERROR: Expected identifier but found end of file\n')).toEqual([
      ['src/a.ts', 3, 'PARSE_ERROR', 'ERROR: Expected identifier but found end of file', true],
    ])
    expect(found('\x1b[31m⎯⎯ Unhandled Error ⎯⎯\x1b[39m\nError: Transform failed with 1 error:\n\n[PARSE_ERROR] Expected `,` or `)` but found `}`\n   ╭─[ src/a.ts:3:1 ]\n   │\n')).toEqual([
      ['src/a.ts', 3, 'PARSE_ERROR', '[PARSE_ERROR] Expected `,` or `)` but found `}`', true],
    ])
    expect(found('Jest encountered an unexpected token\n\n    SyntaxError: /ws/src/a.ts: Unexpected token (3:0)\n')).toEqual([
      ['src/a.ts', 3, 'PARSE_ERROR', 'SyntaxError: Unexpected token', true],
    ])
  })

  it('nothing for an error that is not a parse failure, or that names no touched file', () => {
    expect(found("Error: Cannot find package 'happy-dom' imported from /ws/src/a.ts")).toEqual([])
    expect(found('/ws/src/b.ts:3:0: ERROR: Expected identifier but found end of file')).toEqual([])
    // Mentioned only as the importer in a stack frame: the parse error is another file's.
    expect(found('SyntaxError: /ws/src/b.ts: Unexpected token (4:4)\n    at Object.<anonymous> (/ws/src/a.ts:2:1)')).toEqual([])
  })
})
