/**
 * Type-only test files — those vitest runs in its typecheck mode, whose outcome depends on types
 * alone — after a write that left every written file's declaration signature as it was (ADR
 * 0033): the type-check says so, the test check leaves them out and says it did. When an
 * inferred return type changes (a body-only edit by its syntax), they run and catch it.
 */
import { createRequire } from 'node:module'
import { join } from 'node:path'
import type * as TS from 'typescript'
import { describe, expect, it, vi } from 'vitest'
import { TsProgramChecker } from 'dsh-dstvalid'
import { tempDir } from 'dsh-testkit'
import { boot, makeWorkspace, runs, STOPPED, writeFile, type Harness } from '../../helpers.ts'

vi.setConfig({ testTimeout: 240_000 })

const ts = createRequire(import.meta.url)('typescript') as typeof TS

const OPTIONS = { target: 'ES2022', module: 'ESNext', moduleResolution: 'bundler', allowImportingTsExtensions: true, strict: true, noEmit: true, skipLibCheck: true, types: [] }

/**
 * `double` and `twice` (their return types inferred) and `half` in src/math.ts; a runtime test
 * file for `double` and `half`, and a type test of `double` in vitest's typecheck mode (project
 * `types`) that fails once `double` may return `undefined`.
 */
function workspace(): string {
  return makeWorkspace('', {
    'package.json': '{ "name": "type-tests", "private": true, "type": "module" }\n',
    'tsconfig.json': JSON.stringify({ compilerOptions: OPTIONS, include: ['src', 'tests'] }),
    'vitest.config.ts': [
      "import { defineConfig } from 'vitest/config'",
      'export default defineConfig({ test: { projects: [',
      "  { test: { name: 'runtime', include: ['tests/**/*.test.ts'] } },",
      "  { test: { name: 'types', include: ['tests/**/*.test-d.ts'], typecheck: { enabled: true, only: true } } },",
      '] } })',
      '',
    ].join('\n'),
    'src/math.ts': 'export function double(x: number) {\n  return x * 2\n}\n\nexport function half(x: number): number {\n  return x / 2\n}\n\nexport function twice(s: string) {\n  return s + s\n}\n',
    'tests/double.test.ts': "import { expect, it } from 'vitest'\nimport { double } from '../src/math.ts'\nit('doubles', () => { expect(double(2)).toBe(4) })\n",
    'tests/half.test.ts': "import { expect, it } from 'vitest'\nimport { half } from '../src/math.ts'\nit('halves', () => { expect(half(4)).toBe(2) })\n",
    'tests/math.test-d.ts': "import { expectTypeOf, test } from 'vitest'\nimport { double } from '../src/math.ts'\ntest('double returns a number', () => { expectTypeOf(double(1)).toEqualTypeOf<number>() })\n",
  })
}

/** The test commands of the session so far, as `argv (outcome)`. */
function testRuns(h: Harness): string[] {
  return runs(h.session).filter(r => r.check === 'test').map(r => `${r.argv.join(' ')} (${r.outcome})`)
}

/** Whether the guard's accepted test results cover `file` (some run measured it). */
function measured(h: Harness, file: string): boolean {
  return !!h.ctx.dstvalid.guardFor(h.root).accepted('test')?.covers(file)
}

const NOTE = '1 type-only test file not run: no declaration changed'

describe('type-only test files after a write that kept every declaration', () => {
  it('the type-check tells which writes kept every written file\'s declaration signature, and in which programs', () => {
    const root = tempDir('dsh-typeonly-')
    const core = join(root, 'packages/core/tsconfig.json')
    const files: Record<string, string> = {
      'tsconfig.json': JSON.stringify({ files: [], references: [{ path: 'packages/core' }, { path: 'packages/app' }] }),
      'packages/core/tsconfig.json': JSON.stringify({ compilerOptions: { ...OPTIONS, composite: true, noEmit: undefined, emitDeclarationOnly: true }, include: ['src'] }),
      'packages/core/src/math.ts': 'export function double(x: number) {\n  return x * 2\n}\n',
      'packages/app/tsconfig.json': JSON.stringify({ compilerOptions: { ...OPTIONS, composite: true, noEmit: undefined, emitDeclarationOnly: true }, include: ['src'], references: [{ path: '../core' }] }),
      'packages/app/src/main.ts': "import { double } from '../../core/src/math.ts'\nexport function quad(x: number) {\n  return double(double(x))\n}\n",
      'scratch.ts': 'export const loose = 1\n',
    }
    for (const [rel, text] of Object.entries(files)) writeFile(root, rel, text)
    const checker = new TsProgramChecker(ts, root, join(root, 'tsconfig.json'))
    expect(checker.check().diagnostics).toEqual([])
    const math = join(root, 'packages/core/src/math.ts')
    const main = join(root, 'packages/app/src/main.ts')
    const write = (path: string, from: string, to: string) => {
      const rel = path.slice(root.length + 1)
      writeFile(root, rel, files[rel] = files[rel]!.replace(from, to))
      return path
    }
    // Judging a write: a check that may pause at each new error (the engine's), gone on with to the end.
    const kept = (...paths: string[]) => {
      let result = checker.check(paths, { pause: true })
      while (result.paused) result = checker.resume()
      return result.declarationsKept
    }

    // A body edit that keeps the inferred type: kept, in the one program that owns the file (app reads it as core's source).
    expect(kept(write(math, 'x * 2', 'x + x'))).toEqual([core])
    // Body-only by its syntax, but the inferred return type changes (app's call no longer type-checks): not kept.
    expect(kept(write(math, 'return x + x', 'return (x + x) as number | undefined'))).toBeUndefined()
    // Back (a change again); then files of two programs: every one kept, but no program owns both.
    expect(kept(write(math, 'return (x + x) as number | undefined', 'return x + x'))).toBeUndefined()
    expect(kept(write(math, 'x + x', 'x * 2'), write(main, 'double(double(x))', 'double(x) * 2'))).toEqual([])
    // A file in no program: it cannot tell.
    expect(kept(write(join(root, 'scratch.ts'), '= 1', '= 2'))).toBeUndefined()
    // A check that did not compare (not judging a write): nothing said.
    expect(checker.check([write(math, 'x * 2', 'x + x')]).declarationsKept).toBeUndefined()
  })

  it('a body-only edit that keeps the declaration does not run the type-only test file; one that breaks the type test is rolled back by the type-check, no test run', async () => {
    const h = await boot(workspace())
    const kept = await h.exec('edit_file', { path: 'src/math.ts', old_string: 'return x * 2', new_string: 'return x + x' })
    expect(kept).toEqual({ content: `edited src/math.ts\ntests: 2 of 3 related test files: ${NOTE}` })
    expect(testRuns(h)).toEqual(['vitest run tests/double.test.ts tests/half.test.ts (warm) (pass)'])
    expect(measured(h, 'tests/math.test-d.ts')).toBe(false)

    // The same kind of edit by its syntax, but `double` may now return undefined. The type test is in the guard's tsconfig,
    // and the write did not touch it: its new error is the write's (ADR 0037), so the type-check rolls it back and no test
    // runs.
    const broken = await h.exec('edit_file', { path: 'src/math.ts', old_string: 'return x + x', new_string: 'return (x + x) as number | undefined' })
    expect(broken).toEqual({
      isError: true,
      content: [
        'rolled back: typecheck failed after edit_file on src/math.ts',
        'tests/math.test-d.ts:3 TS2344 Type \'number\' does not satisfy the constraint \'"Expected: number, Actual: undefined"\'.',
        STOPPED,
      ].join('\n'),
    })
    expect(testRuns(h)).toHaveLength(1)

    // A write to the type test itself: its new error is tolerated by the type-check (the file was touched: test-first work),
    // and vitest's typecheck run judges it. The test passed before, so its failure rolls the write back.
    const test = await h.exec('edit_file', { path: 'tests/math.test-d.ts', old_string: 'toEqualTypeOf<number>()', new_string: 'toEqualTypeOf<string>()' })
    expect(test.isError).toBe(true)
    expect(test.content.split('\n')).toEqual([
      'rolled back: test failed after edit_file on tests/math.test-d.ts',
      expect.stringMatching(/^tests\/math\.test-d\.ts(:3)? FAIL double returns a number \[types\] — TypeCheckError: /),
    ])
    // Its accepted result is measured with the content before the write shown to `tsc` (which reads the disk, not the runner's modules).
    expect(testRuns(h).slice(1).map(r => r.replace(/^\S+ \S+vitest\.mjs (run \S+) .* (\(the content before the write)/, 'vitest $1 $2'))).toEqual([
      'vitest related tests/math.test-d.ts --run (warm) (fail)',
      'vitest run tests/math.test-d.ts (the content before the write, in a mount namespace) (pass)',
      'vitest run tests/math.test-d.ts -t ^(double returns a number)$ --project types (warm) (fail)',
    ])
  })

  it('an inferred return type that changes runs the type-only test file, though no type-check error shows it', async () => {
    const h = await boot(workspace())
    const kept = await h.exec('edit_file', { path: 'src/math.ts', old_string: 'return s + s', new_string: 'return s.length ? s + s : undefined' })
    expect(kept).toEqual({ content: 'edited src/math.ts' })
    expect(testRuns(h)).toEqual(['vitest related src/math.ts --run (warm) (pass)'])
    expect(measured(h, 'tests/math.test-d.ts')).toBe(true)
  })

  it('with the map of executed functions: the test files that ran the function, without the type-only one', async () => {
    const root = workspace()
    const h = await boot(root, { testSelection: 'functions' })
    h.ctx.dstvalid.guardFor(root, h.session.vault)
    await h.ready()
    expect(testRuns(h)).toEqual(['vitest run (warm) (pass)'])
    const kept = await h.exec('edit_file', { path: 'src/math.ts', old_string: 'return x * 2', new_string: 'return x + x' })
    expect(kept).toEqual({ content: `edited src/math.ts\ntests: 1 of 3 related test files: those that ran \`double\`; ${NOTE}` })
    expect(testRuns(h).at(-1)).toBe('vitest run tests/double.test.ts (warm) (pass)')
  })
})
