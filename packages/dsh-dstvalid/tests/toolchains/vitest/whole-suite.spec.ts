/**
 * Through the vitest CLI, a change that most of the suite relates to by
 * imports runs the suite as the naive check does: one plain `vitest run`, no
 * `related` walk, no map recorded; a change few tests relate to runs them
 * by `vitest related`, as before. Verdicts are the same either way.
 */
import { describe, expect, it } from 'vitest'
import { boot, makeWorkspace, runs, type Harness } from '../../helpers.ts'

/**
 * src/core.ts reached by all five test files (four through src/use.ts), src/leaf.ts by one; src/shape.ts named
 * by four, for a type only (the runner's transform erases those imports: they relate no test).
 */
function files(): Record<string, string> {
  const out: Record<string, string> = {
    'package.json': '{ "name": "whole-suite-fixture", "private": true, "type": "module" }\n',
    'tsconfig.json': JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'ESNext', moduleResolution: 'bundler', allowImportingTsExtensions: true, strict: true, noEmit: true, skipLibCheck: true, types: [] }, include: ['src', 'tests'] }),
    'src/core.ts': 'export const base = 2\n\nexport function double(n: number): number {\n  return n * base\n}\n',
    'src/use.ts': "import { double } from './core.ts'\n\nexport const four = (): number => double(2)\n",
    'src/leaf.ts': 'export const leaf = (s: string): string => s.toUpperCase()\n',
    'src/shape.ts': 'export interface Shape {\n  n: number\n}\n',
    'tests/core.test.ts': "import { expect, it } from 'vitest'\nimport { double } from '../src/core.ts'\nimport { Shape } from '../src/shape.ts'\nconst s: Shape = { n: 3 }\nit('doubles', () => { expect(double(s.n)).toBe(6) })\n",
    'tests/leaf.test.ts': "import { expect, it } from 'vitest'\nimport { leaf } from '../src/leaf.ts'\nimport { four } from '../src/use.ts'\nit('shouts', () => { expect(leaf('a')).toBe('A'); expect(four()).toBe(4) })\n",
  }
  for (let i = 0; i < 3; i++) out[`tests/use${i}.test.ts`] = `import { expect, it } from 'vitest'\nimport { Shape } from '../src/shape.ts'\nimport { four } from '../src/use.ts'\nconst s: Shape = { n: ${i} }\nit('four ${i}', () => { expect(four() + s.n).toBe(4 + ${i}) })\n`
  return out
}

/** Each test run as its vitest subcommand and arguments up to the reporter, whether it recorded the map (a config of ours), and its outcome. */
function testRuns(h: Harness): string[] {
  return runs(h.session).filter(r => r.check === 'test').map(r => {
    const args = r.argv.slice(2)
    const recorded = args.includes('--config') ? ' (recording)' : ''
    return `${args.join(' ').replace(/ --config \S+/, '').replace(/ --reporter=.*/, '')}${recorded} (${r.outcome})`
  })
}

describe('the vitest CLI: a change most of the suite relates to runs the whole suite, plain', { timeout: 300_000 }, () => {
  it('a top-level change of src/core.ts (5 of 5 test files) is one `vitest run`; of src/leaf.ts (1 of 5) a related run; a break is rolled back either way', async () => {
    const root = makeWorkspace('', files())
    const h = await boot(root, { warmTests: false, testSelection: 'functions', verdicts: 'strict', background: false })
    // A top-level change (not a body-only edit): the map cannot narrow it.
    expect(await h.exec('edit_file', { path: 'src/core.ts', old_string: 'export const base = 2', new_string: 'export const base = 1 + 1' })).toEqual({ content: 'edited src/core.ts' })
    expect(testRuns(h)).toEqual(['run (pass)'])
    expect(h.notices.map(n => n.text)).toContain('tests: 5 of 5 test files relate to src/core.ts: the whole suite, as `vitest run`')
    // The same kind of change that breaks tests: the whole run finds them (their accepted results are current from the
    // run before: nothing measured on the content before), the failing test re-run alone.
    const r = await h.exec('edit_file', { path: 'src/core.ts', old_string: 'export const base = 1 + 1', new_string: 'export const base = 3' })
    expect(r.isError).toBe(true)
    expect(r.content.split('\n')[0]).toBe('rolled back: test failed after edit_file on src/core.ts')
    expect(testRuns(h).slice(1)).toEqual(['run (fail)', 'run tests/core.test.ts -t ^(doubles)$ (fail)'])
    // A top-level change few test files relate to: vitest related, recording the map as before.
    expect(await h.exec('edit_file', { path: 'src/leaf.ts', old_string: 'export const leaf', new_string: 'export const LEAF = 1\n\nexport const leaf' })).toEqual({ content: 'edited src/leaf.ts' })
    expect(testRuns(h).at(-1)).toBe('related src/leaf.ts --run (recording) (pass)')
    // Four test files name src/shape.ts, for a type only: none runs it, so none relates to it.
    expect(await h.exec('edit_file', { path: 'src/shape.ts', old_string: '  n: number', new_string: '  n: number\n  label?: string' })).toEqual({ content: 'edited src/shape.ts' })
    expect(testRuns(h).at(-1)).toBe('related src/shape.ts --run (recording) (pass)')
  })
})
