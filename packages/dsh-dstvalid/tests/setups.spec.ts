import { existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { runCommand } from 'dsh-common'
import { explainFailure } from 'dsh-dstvalid'
import { boot, expectRolledBack, makeWorkspace, runs, STOPPED } from './helpers.ts'
import { tsJestInstall } from './registry-installs.ts'

const json = (value: unknown) => JSON.stringify(value, null, 2)

describe('a check that cannot run says why (the line that explains it, not the last line)', () => {
  it('a vitest config that throws: the model and the verify/run event name the error', async () => {
    const root = makeWorkspace('shop', { 'vitest.config.ts': "throw new Error('DATABASE_URL is not set')\n" })
    const h = await boot(root, { warmTests: false })
    const r = await h.exec('edit_file', { path: 'src/money.ts', old_string: 'return a + b', new_string: 'return b + a' })
    expect(r).toEqual({ content: [
      'edited src/money.ts',
      `warning: not verified: vitest exit 1: failed to load config from ${root}/vitest.config.ts: Error: DATABASE_URL is not set`,
    ].join('\n') })
    const cause = `failed to load config from ${root}/vitest.config.ts: Error: DATABASE_URL is not set`
    // The write's own run only: a run that cannot judge measures no accepted state (ADR 0019).
    expect(runs(h.session).filter(x => x.check === 'test').map(x => [x.outcome, x.cause])).toEqual([['fail', cause]])
  }, 300_000)

  it('an option this vitest rejects: the CACError line', async () => {
    const h = await boot(makeWorkspace('shop'), { warmTests: false, testArgs: ['--definitely-unknown'] })
    const r = await h.exec('edit_file', { path: 'src/money.ts', old_string: 'return a + b', new_string: 'return b + a' })
    expect(r.content.split('\n')[1]).toBe('warning: not verified: vitest exit 1: CACError: Unknown option `--definitelyUnknown`')
    expect(runs(h.session).filter(x => x.check === 'test').map(x => x.cause)).toEqual(['CACError: Unknown option `--definitelyUnknown`'])
  }, 300_000)

  it('reads the cause out of real failures: out of memory, a missing command, a stack trace', async () => {
    const oom = await runCommand([process.execPath, '--max-old-space-size=16', '-e', 'const a = []; for (;;) a.push(new Array(1e5).fill(1))'], { cwd: tmpdir(), timeoutMs: 60_000 })
    expect(explainFailure(oom.output)).toMatch(/^FATAL ERROR: .*JavaScript heap out of memory$/)
    const missing = await runCommand(['no-such-tool-here --check'], { cwd: tmpdir(), shell: true, timeoutMs: 10_000 })
    expect(explainFailure(missing.output)).toMatch(/no-such-tool-here: (command )?not found$/)
    const thrown = await runCommand([process.execPath, '-e', 'function f() { throw new TypeError("cannot read the config") }\nf()'], { cwd: tmpdir(), timeoutMs: 10_000 })
    expect(explainFailure(thrown.output)).toBe('TypeError: cannot read the config')
    expect(explainFailure('all good\n')).toBeUndefined()
  }, 120_000)
})

const internalProject: Record<string, string> = {
  'package.json': json({ name: 'internal', private: true, type: 'module' }),
  'tsconfig.json': json({
    compilerOptions: { target: 'ES2022', module: 'ESNext', moduleResolution: 'bundler', strict: true, declaration: true, stripInternal: true, outDir: 'dist', skipLibCheck: true, types: [] },
    include: ['src'],
  }),
  'src/internal.ts': '/** @internal */\nexport function scale(amount: number): number {\n  return amount * 2\n}\n',
  ...Object.fromEntries(['a', 'b', 'c', 'd', 'e'].map(n => [`src/${n}.ts`, `import { scale } from './internal'\n\nexport const ${n} = scale(1)\n`])),
}

describe('stripInternal: an @internal export\'s change re-checks its importers', () => {
  it('a new required parameter is rolled back at its first importer\'s error', async () => {
    const h = await boot(makeWorkspace('', internalProject), { tests: 'off' })
    await h.ready()
    await expectRolledBack(h, 'edit_file', { path: 'src/internal.ts', old_string: 'scale(amount: number)', new_string: 'scale(amount: number, factor: number)' },
      'rolled back: typecheck failed after edit_file on src/internal.ts',
      'src/a.ts:3 TS2554 Expected 2 arguments, but got 1.',
      STOPPED)
    expect(h.results.map(r => [r.check, r.outcome, r.newProblems.length])).toEqual([['typecheck', 'rolled-back', 1]])
  }, 300_000)
})

const listingProject: Record<string, string> = {
  'src/index.ts': ['cart', 'format', 'greeting', 'money'].map(m => `export * from './${m}.ts'\n`).join(''),
  'tests/exports.test.ts': [
    "import { readdirSync, readFileSync } from 'node:fs'",
    "import { expect, it } from 'vitest'",
    '',
    "const src = new URL('../src/', import.meta.url)",
    "it('exports every module from src/index.ts', () => {",
    "  const index = readFileSync(new URL('index.ts', src), 'utf8')",
    "  const missing = readdirSync(src).filter(f => f !== 'index.ts' && !index.includes(`./${f}'`))",
    '  expect(missing).toEqual([])',
    '})',
    '',
  ].join('\n'),
  'tests/fixtures/prices.json': json({ apple: 120 }),
  'tests/prices.test.ts': [
    "import { readFileSync } from 'node:fs'",
    "import { expect, it } from 'vitest'",
    '',
    "it('prices an apple', () => {",
    "  const prices = JSON.parse(readFileSync(new URL('./fixtures/prices.json', import.meta.url), 'utf8'))",
    '  expect(prices.apple).toBe(120)',
    '})',
    '',
  ].join('\n'),
}

describe('tests that read the file system: a write to what a test reads runs that test (warm runner)', () => {
  it('a new module a listing test sees, a changed fixture: rolled back; an unrelated fixture change: kept', async () => {
    const h = await boot(makeWorkspace('shop', listingProject), { tsconfig: 'tsconfig.full.json' })
    // No baseline run first: the first write's accepted state runs the test files that use the
    // file system and never ran (their reads are unknown), which records what they read.
    await expectRolledBack(h, 'write_file', { path: 'src/tax.ts', content: 'export const rate = 0.2\n' },
      'rolled back: test failed after write_file on src/tax.ts',
      'tests/exports.test.ts:5 FAIL exports every module from src/index.ts — AssertionError: expected [ \'tax.ts\' ] to deeply equal []')
    expect(existsSync(join(h.root, 'src/tax.ts'))).toBe(false)
    await expectRolledBack(h, 'write_file', { path: 'tests/fixtures/prices.json', content: json({ apple: 125 }) },
      'rolled back: test failed after write_file on tests/fixtures/prices.json',
      'tests/prices.test.ts:4 FAIL prices an apple — AssertionError: expected 125 to be 120 // Object.is equality')
    expect(await h.exec('write_file', { path: 'tests/fixtures/prices.json', content: json({ apple: 120, pear: 80 }) }))
      .toEqual({ content: 'wrote tests/fixtures/prices.json (32 bytes)' })
    expect(h.results.filter(r => r.check === 'test').map(r => r.outcome)).toEqual(['rolled-back', 'rolled-back', 'pass'])
    // Only the tests that read what changed ran, never the shop's other tests.
    // Only the tests that read what changed ran, never the shop's other tests. Each write's after
    // state first; a failing file then on the content before (served, ADR 0019), then alone again.
    const tests = runs(h.session).filter(r => r.check === 'test').map(r => {
      const at = r.argv.findIndex(a => a === 'related' || a === 'run')
      return [r.argv[at], r.argv[at + 1], r.outcome]
    })
    expect(tests).toEqual([
      ['related', 'src/tax.ts', 'fail'], ['run', 'tests/exports.test.ts', 'pass'], ['run', 'tests/exports.test.ts', 'fail'],
      ['related', 'tests/fixtures/prices.json', 'fail'], ['run', 'tests/prices.test.ts', 'pass'], ['run', 'tests/prices.test.ts', 'fail'],
      ['related', 'tests/fixtures/prices.json', 'pass'],
    ])
  }, 600_000)
})

/** A project whose first (cold) type-check takes far longer than an edit of one leaf file: 300 files of mapped and conditional types. */
function slowProject(): Record<string, string> {
  const files: Record<string, string> = {
    'package.json': json({ name: 'slow', private: true, type: 'module' }),
    'tsconfig.json': json({ compilerOptions: { target: 'ES2022', module: 'ESNext', moduleResolution: 'bundler', strict: true, noEmit: true, types: [] }, include: ['src'] }),
    'src/leaf.ts': 'export const leaf: number = 1\n',
  }
  for (let i = 0; i < 300; i++) {
    files[`src/m${i}.ts`] = [
      `type Keys${i} = ${Array.from({ length: 40 }, (_, k) => `'k${k}'`).join(' | ')}`,
      `type Deep${i}<T, N extends unknown[] = []> = N['length'] extends 12 ? T : { [K in Keys${i}]: Deep${i}<T, [...N, 0]> }`,
      `export type Picked${i} = { [K in Keys${i} as \`\${K}_\${K}\`]: K extends \`k\${infer D extends number}\` ? [D, Deep${i}<D>] : never }`,
      `export const value${i}: Picked${i}['k3_k3'][0] = 3`,
      '',
    ].join('\n')
  }
  return files
}

describe('a baseline slower than timeoutMs keeps going in the background and is then used', () => {
  it('writes meanwhile are told they are not verified yet; once done, writes are judged; the type-check worker is never restarted', async () => {
    const h = await boot(makeWorkspace('', slowProject()), { tests: 'off', timeoutMs: 2000 })
    const first = await h.exec('edit_file', { path: 'src/leaf.ts', old_string: '= 1', new_string: '= 2' })
    expect(first.content.split('\n')[0]).toBe('edited src/leaf.ts')
    expect(first.content.split('\n')[1]).toMatch(/^warning: not verified: type-check still running in the background after 2 s \(\d+(\.\d+)? s so far; its work is kept, and a later write is judged once it is done\)$/)
    const guard = h.ctx.dstvalid.guardFor(h.root)
    await vi.waitFor(async () => {
      await h.ready()
      expect(guard.accepted('typecheck')?.measured).toBe(true)
    }, { timeout: 600_000, interval: 200 })
    await expectRolledBack(h, 'edit_file', { path: 'src/leaf.ts', old_string: 'leaf: number = 2', new_string: "leaf: number = 'two'" },
      'rolled back: typecheck failed after edit_file on src/leaf.ts',
      "src/leaf.ts:1 TS2322 Type 'string' is not assignable to type 'number'.", STOPPED)
    expect(await h.exec('edit_file', { path: 'src/leaf.ts', old_string: '= 2', new_string: '= 3' })).toEqual({ content: 'edited src/leaf.ts' })
    // One cold start: every later check (the background baseline's successors) ran on the same warm program.
    expect(runs(h.session).filter(r => r.check === 'typecheck' && r.argv.at(-1) === '(in-process, cold)').length).toBeLessThanOrEqual(1)
  }, 900_000)
})

describe('runners start with colours off: ts-jest\'s diagnostics reach the model without escape codes', () => {
  it('a test file ts-jest can no longer compile is rolled back with a plain message', async () => {
    const modules = await tsJestInstall()
    const root = makeWorkspace('', {
      'package.json': json({ name: 'tsj', private: true, jest: { preset: 'ts-jest', testEnvironment: 'node' } }),
      'tsconfig.json': json({ compilerOptions: { strict: true, esModuleInterop: true, skipLibCheck: true, types: ['jest'] }, include: ['src'] }),
      'src/add.ts': 'export function add(a: number, b: number): number {\n  return a + b\n}\n',
      'tests/add.test.ts': "import { add } from '../src/add'\n\ntest('adds', () => {\n  expect(add(1, 2)).toBe(3)\n})\n",
    }, { nodeModules: modules })
    const h = await boot(root)
    await h.ready()
    await expectRolledBack(h, 'edit_file', { path: 'src/add.ts', old_string: 'b: number)', new_string: 'b: number, c: number)' },
      'rolled back: test failed after edit_file on src/add.ts',
      "tests/add.test.ts FAIL test file failed: tests/add.test.ts:4:10 - error TS2554: Expected 3 arguments, but got 2.")
  }, 600_000)
})
