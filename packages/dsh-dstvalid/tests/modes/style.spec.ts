import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { StyleCheck } from 'dsh-dstvalid'
import { parseBiomeGithub } from '../../src/toolchains/typescript/biome.ts'
import { parseEslintJson } from '../../src/toolchains/typescript/eslint.ts'
import { parseGofmt } from '../../src/toolchains/go/gofmt.ts'
import { parsePrettier } from '../../src/toolchains/typescript/prettier.ts'
import { parseRuffJson } from '../../src/toolchains/python/ruff.ts'
import { formatProblem } from '../../src/problems.ts'
import { boot, expectRolledBack, makeWorkspace, readText, runs } from '../helpers.ts'

const hasGo = spawnSync('go', ['version']).status === 0

/** The shop fixture with the workspace's own ESLint (typescript-eslint parser) and Prettier configs, and one pre-existing lint error. */
const linted = {
  'eslint.config.js': `import tseslint from 'typescript-eslint'

export default [
  {
    files: ['**/*.ts'],
    languageOptions: { parser: tseslint.parser },
    rules: { 'no-debugger': 'error', 'no-var': 'error', 'prefer-const': 'warn' },
  },
]
`,
  '.prettierrc': '{ "semi": false, "singleQuote": true, "printWidth": 120 }\n',
  '.prettierignore': 'tests\n',
  'src/legacy.ts': `export function legacy(n: number): number {\n  var doubled = n * 2\n  return doubled\n}\n`,
}
const addDebugger = { path: 'src/money.ts', old_string: '  return a + b', new_string: '  debugger\n  return a + b' }
const newDebugger = "src/money.ts:5 eslint/no-debugger Unexpected 'debugger' statement."

describe('style: the workspace\'s own ESLint and Prettier, judged by delta', () => {
  it('warn: a new lint error and an unformatted new file are kept with warnings; a pre-existing lint error is ignored', async () => {
    const root = makeWorkspace('shop', linted, { nodeModules: 'package' })
    const h = await boot(root, { tests: 'off', style: 'warn' })
    const style = h.ctx.dstvalid.guardFor(root).checks.find(c => c.name === 'style') as StyleCheck
    expect(style.tools.map(t => t.name)).toEqual(['eslint', 'prettier'])

    // The pre-existing `var` in src/legacy.ts is in the accepted state: an unrelated edit there is not blamed for it.
    expect(await h.exec('edit_file', { path: 'src/legacy.ts', old_string: 'n * 2', new_string: '2 * n' })).toEqual({ content: 'edited src/legacy.ts' })

    expect(await h.exec('edit_file', addDebugger)).toEqual({
      content: ['edited src/money.ts', 'warning: kept, but style has 1 new problem (not rolled back; fix it):', newDebugger].join('\n'),
    })
    expect(readText(root, 'src/money.ts')).toContain('debugger')

    const created = await h.exec('write_file', { path: 'src/tax.ts', content: 'export const rate = 0.2;\n' })
    expect(created).toEqual({
      content: ['created src/tax.ts (25 bytes)', 'warning: kept, but style has 1 new problem (not rolled back; fix it):', 'src/tax.ts prettier not formatted (prettier --write fixes it)'].join('\n'),
    })
    expect(h.results.filter(r => r.check === 'style').map(r => [r.paths[0], r.outcome, r.newProblems.length])).toEqual([
      ['src/legacy.ts', 'pass', 0], ['src/money.ts', 'pass', 1], ['src/tax.ts', 'pass', 1],
    ])
    // The baseline ran each tool on the workspace once; a write re-runs them on the changed files only.
    const styleRuns = runs(h.session).filter(r => r.check === 'style').map(r => r.argv.at(-1))
    expect(styleRuns).toEqual(['.', '.', 'src/legacy.ts', 'src/legacy.ts', 'src/money.ts', 'src/money.ts', 'src/tax.ts', 'src/tax.ts'])
  })

  it('rollback: a new lint error rolls the write back with the exact message; a pre-existing one is still ignored', async () => {
    const root = makeWorkspace('shop', linted, { nodeModules: 'package' })
    const h = await boot(root, { tests: 'off', style: 'rollback', styleTools: ['eslint'] })
    await expectRolledBack(h, 'edit_file', addDebugger, 'rolled back: style failed after edit_file on src/money.ts', newDebugger)
    expect(h.results.map(r => [r.check, r.outcome])).toEqual([['typecheck', 'pass'], ['style', 'rolled-back']])
    expect(await h.exec('edit_file', { path: 'src/legacy.ts', old_string: 'n * 2', new_string: '2 * n' })).toEqual({ content: 'edited src/legacy.ts' })
    // A second `var` in the same file is a new problem (counted as a multiset).
    const second = await h.exec('edit_file', { path: 'src/legacy.ts', old_string: '  return doubled', new_string: '  var result = doubled\n  return result' })
    expect(second.content).toBe('rolled back: style failed after edit_file on src/legacy.ts\nsrc/legacy.ts:3 eslint/no-var Unexpected var, use let or const instead.')
  })

  it.skipIf(!hasGo)('gofmt in a Go module: an unformatted edit is rolled back under style: rollback', async () => {
    const root = makeWorkspace('gomod')
    const h = await boot(root, { tests: 'off', style: 'rollback', testArgs: [] })
    const r = await h.exec('edit_file', { path: 'calc/calc.go', old_string: '\treturn a + b', new_string: '    return a+b' })
    expect(r).toEqual({ isError: true, content: 'rolled back: style failed after edit_file on calc/calc.go\ncalc/calc.go gofmt not formatted (gofmt -w fixes it)' })
    expect(await h.exec('edit_file', { path: 'calc/calc.go', old_string: '// Add returns a + b.', new_string: '// Add adds.' })).toEqual({ content: 'edited calc/calc.go' })
  })

  it('costs nothing when off: no style check in the pipeline', async () => {
    const root = makeWorkspace('shop', linted, { nodeModules: 'package' })
    const h = await boot(root, { tests: 'off' })
    expect(h.ctx.dstvalid.guardFor(root).checks.map(c => c.name)).toEqual(['typecheck'])
  })
})

describe('style output parsers', () => {
  it('read each tool\'s machine output as file:line code message', () => {
    const eslint = JSON.stringify([{ filePath: '/w/src/a.ts', messages: [
      { ruleId: 'no-var', severity: 2, message: 'Unexpected var, use let or const instead.', line: 2 },
      { ruleId: 'prefer-const', severity: 1, message: 'warning only', line: 3 },
      { ruleId: null, severity: 2, message: 'Parsing error: Expression expected.', line: 9, fatal: true },
    ] }])
    expect(parseEslintJson('/w', eslint)!.map(formatProblem)).toEqual(['src/a.ts:2 eslint/no-var Unexpected var, use let or const instead.', 'src/a.ts:9 eslint Parsing error: Expression expected.'])
    expect(parseEslintJson('/w', 'Oops! Something went wrong')).toBeUndefined()
    expect(parsePrettier('src/a.ts\n', '[error] src/b.ts: SyntaxError: Expression expected. (2:19)\n[error]   1 | x\n').map(formatProblem)).toEqual([
      'src/a.ts prettier not formatted (prettier --write fixes it)', 'src/b.ts:2 prettier SyntaxError: Expression expected.',
    ])
    expect(parseGofmt('calc/calc.go\n').map(formatProblem)).toEqual(['calc/calc.go gofmt not formatted (gofmt -w fixes it)'])
    expect(parseRuffJson('/w', JSON.stringify([{ code: 'F401', message: '`os` imported but unused', filename: '/w/pkg/a.py', location: { row: 1, column: 8 } }]))!.map(formatProblem))
      .toEqual(['pkg/a.py:1 ruff/F401 `os` imported but unused'])
    // As Biome 2.6 prints it (captured from a real run).
    const biome = [
      '::error title=lint/suspicious/noDebugger,file=/w/src/a.ts,line=2,endLine=2,col=3,endColumn=11::This is an unexpected use of the debugger statement.',
      '::error title=format,file=/w/src/a.ts,line=1,endLine=1,col=2,endColumn=2::Formatter would have printed the following content:',
      '::warning title=lint/style/x,file=/w/b.ts::w',
    ].join('\n')
    expect(parseBiomeGithub('/w', biome).map(formatProblem)).toEqual([
      'src/a.ts:2 biome/lint/suspicious/noDebugger This is an unexpected use of the debugger statement.',
      'src/a.ts biome/format not formatted (biome format --write fixes it)',
    ])
  })
})
