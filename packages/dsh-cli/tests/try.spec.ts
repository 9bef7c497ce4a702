import { spawn } from 'node:child_process'
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { tempDir } from 'dsh-testkit'
import { naiveSteps, runNaive } from '../src/try/naive.ts'
import { deriveProbes } from '../src/try/probes.ts'
import { listFiles, rankModules } from '../src/try/sources.ts'
import { copyWorkspace } from '../src/try/workspace-copy.ts'
import { dsh, repoRoot } from './helpers.ts'

/** Every file under `dir` (node_modules left out) with its content and mtime. */
function snapshotOf(dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (abs: string) => {
    for (const name of readdirSync(abs)) {
      if (name === 'node_modules') continue
      const p = join(abs, name)
      const s = statSync(p)
      if (s.isDirectory()) walk(p)
      else out[relative(dir, p)] = `${s.mtimeMs} ${readFileSync(p, 'utf8')}`
    }
  }
  walk(dir)
  return out
}

function project(files: Record<string, string>): string {
  const ws = tempDir('dsh-try-')
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(ws, path, '..'), { recursive: true })
    writeFileSync(join(ws, path), text)
  }
  return ws
}

/** A small TypeScript library: `src/math.ts` imported by `src/use.ts` and by its test; the repo's own tsc and vitest. `hang`: the test first runs `sleep <hang>`. */
function library(withTests: boolean, hang?: string): string {
  const ws = project({
    'package.json': '{ "name": "lib", "type": "module", "private": true }\n',
    'tsconfig.json': '{ "compilerOptions": { "strict": true, "module": "ESNext", "moduleResolution": "Bundler", "target": "ES2022", "lib": ["ES2022"], "noEmit": true, "skipLibCheck": true, "types": [] }, "include": ["src"] }\n',
    'src/math.ts': 'export function add(a: number, b: number): number {\n  return a + b\n}\n\nexport const twice = (n: number): number => {\n  return add(n, n)\n}\n',
    'src/use.ts': "import { add, twice } from './math'\n\nexport const four = (): number => add(2, 2) + twice(0)\n",
    ...(withTests ? { 'src/math.test.ts': hang
      ? `import { execFileSync } from 'node:child_process'\nimport { expect, it } from 'vitest'\nimport { add } from './math'\n\nit('adds', () => { execFileSync('sleep', ['${hang}']); expect(add(1, 2)).toBe(3) }, 3_600_000)\n`
      : "import { expect, it } from 'vitest'\nimport { add } from './math'\n\nit('adds', () => { expect(add(1, 2)).toBe(3) })\n" } : {}),
  })
  symlinkSync(join(repoRoot, 'node_modules'), join(ws, 'node_modules'), 'dir')
  return ws
}

const row = (stdout: string, probe: string) => stdout.split('\n').find(l => l.startsWith(`| ${probe}`))

/** Pids of processes whose command line is exactly `sleep <marker>`. */
function sleeping(marker: string): number[] {
  return readdirSync('/proc').filter(n => /^\d+$/.test(n)).filter(pid => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8') === `sleep\0${marker}\0`
    } catch {
      return false // ENOENT: the process ended while we looked.
    }
  }).map(Number)
}

/** A package whose `src/math.ts` exports `add`: the module the probes below are made in. */
const ADD = {
  'package.json': '{ "name": "lib", "type": "module", "private": true }\n',
  'src/math.ts': 'export function add(a: number, b: number): number {\n  return a + b\n}\n',
}

describe('dsh try', () => {
  it('makes the behaviour probe on a function a test reaches through a re-exporting index, not only through a direct import', () => {
    const ws = project({
      ...ADD,
      'src/use.ts': "import { add } from './math'\n\nexport const four = (): number => add(2, 2)\n",
      'src/index.ts': "export * from './math'\nexport * from './use'\n",
      'test/math.test.ts': "import { expect, it } from 'vitest'\nimport { add } from '../src/index'\n\nit('adds', () => { expect(add(1, 2)).toBe(3) })\n",
    })
    const [math] = rankModules(ws, 'typescript', listFiles(ws))
    expect(math).toEqual({ file: 'src/math.ts', importers: ['src/index.ts', 'src/use.ts'], tests: [], reachedBy: ['test/math.test.ts'] })
    const behaviour = deriveProbes('typescript', math, f => readFileSync(join(ws, f), 'utf8')).find(p => p.id === 'behaviour')
    expect(behaviour?.title).toBe('a behaviour change its tests catch (`add` throws)')
    expect(behaviour?.call?.arguments.path).toBe('src/math.ts')
  })

  it('takes the files under a test directory for test files even without .test in their names (fp-ts: test/Array.ts)', () => {
    const ws = project({
      ...ADD,
      'test/util.ts': "import { add } from '../src/math'\n\nexport const same = (a: number): boolean => add(a, 0) === a\n",
      'test/math.ts': "import { expect, it } from 'vitest'\nimport { add } from '../src/math'\nimport { same } from './util'\n\nit('adds', () => { expect(add(1, 2)).toBe(3); expect(same(1)).toBe(true) })\n",
    })
    const ranked = rankModules(ws, 'typescript', listFiles(ws))
    // test/util.ts is imported too, but it is no module to probe; src/math.ts is reached by the tests.
    expect(ranked).toEqual([{ file: 'src/math.ts', importers: ['test/math.ts', 'test/util.ts'], tests: ['test/math.ts', 'test/util.ts'], reachedBy: ['test/math.ts', 'test/util.ts'] }])
    const behaviour = deriveProbes('typescript', ranked[0]!, f => readFileSync(join(ws, f), 'utf8')).find(p => p.id === 'behaviour')
    expect(behaviour?.title).toBe('a behaviour change its tests catch (`add` throws)')
  })

  it('--function: the comment, body-only and behaviour probes are made on the function asked for', () => {
    const ws = library(true)
    const [math] = rankModules(ws, 'typescript', listFiles(ws))
    const read = (f: string) => readFileSync(join(ws, f), 'utf8')
    const probes = deriveProbes('typescript', math, read, { fn: 'twice', asked: true })
    const edited = (id: string, from = probes) => {
      const call = from.find(p => p.id === id)?.call
      return call && read(call.arguments.path!).replace(call.arguments.old_string!, call.arguments.new_string!)
    }
    expect(probes.find(p => p.id === 'comment')?.title).toBe('a comment in the module asked for (src/math.ts)')
    expect(edited('comment')).toContain('// dsh try: a comment\nexport const twice')
    expect(edited('body')).toContain('export const twice = (n: number): number => {\n  void 0\n')
    expect(probes.find(p => p.id === 'behaviour')?.title).toBe('a behaviour change its tests catch (`twice` throws)')
    expect(edited('behaviour')).toMatch(/export const twice = \(n: number\): number => \{\n  if \(Date\.now\(\) > 0\) throw/)
    // Without a choice: the first function, and for the behaviour probe the one the test names.
    const ranked = deriveProbes('typescript', math, read)
    expect(edited('body', ranked)).toContain('add(a: number, b: number): number {\n  void 0\n')
    expect(ranked.find(p => p.id === 'behaviour')?.title).toBe('a behaviour change its tests catch (`add` throws)')
  })

  it('the naive check runs the tools of a pnpm workspace package from its copy, whose .bin scripts find them relative to where they lie', async () => {
    // pnpm's shape: the package's node_modules/.bin/vitest starts `$basedir/../../../node_modules/…`, the workspace root's store.
    const mono = project({
      'node_modules/fake-vitest/bin.js': "require('node:fs').writeFileSync('ran.txt', process.cwd())\n",
      'pkg/package.json': '{ "name": "pkg", "private": true }\n',
      'pkg/node_modules/.bin/vitest': '#!/bin/sh\nbasedir=$(dirname "$0")\nexec node "$basedir/../../../node_modules/fake-vitest/bin.js" "$@"\n',
    })
    chmodSync(join(mono, 'pkg/node_modules/.bin/vitest'), 0o755)
    const copy = join(tempDir('dsh-try-naive-'), 'copy')
    copyWorkspace(join(mono, 'pkg'), copy)
    const steps = naiveSteps(copy, 'typescript')
    expect(steps.map(s => s.label)).toEqual(['vitest run'])
    const result = await runNaive(copy, steps, 60_000, () => {})
    expect(result.steps.map(s => s.exitCode)).toEqual([0])
    // It ran in the copy, not in the original.
    expect(readFileSync(join(copy, 'ran.txt'), 'utf8')).toBe(copy)
  })

  it('makes each probe through the guard on a copy, with its verdict next to the naive check, and leaves the workspace untouched', async () => {
    const ws = library(true)
    const before = snapshotOf(ws)
    const r = await dsh(['try', '--workspace', ws], { timeoutMs: 600_000 })
    expect(r.stderr).toContain('probe 1/6: a comment in the most-imported module (src/math.ts)…')
    expect(r.exitCode, r.output).toBe(0)
    const out = r.stdout
    expect(out).toContain('most-imported module: src/math.ts (2 importers, 1 of them test files)')
    expect(out).toMatch(/^naive check: [\d.]+ s \(CPU [\d.]+ s\) — tsc --noEmit [\d.]+ s \(CPU [\d.]+ s\), vitest run [\d.]+ s \(CPU [\d.]+ s\); peak RSS \d+ MB$/m)
    expect(row(out, 'a comment in the most-imported module (src/math.ts)')).toMatch(/\| kept \| kept \| [\d.]+ s \(CPU [\d.]+ s\) \| [\d.]+ s \(CPU [\d.]+ s\) \| [\d.]+× \(CPU [\d.]+×\) \| [\d.]+ \|/)
    expect(row(out, 'a body-only edit (src/math.ts)')).toMatch(/\| kept \| kept \|/)
    expect(row(out, 'an export renamed, breaking its importers (`add` in src/math.ts)')).toMatch(/\| rolled back \| rolled back: src\/(math|use)\.ts:\d+ TS\d+ /)
    expect(row(out, 'a behaviour change its tests catch (`add` throws)')).toMatch(/\| rolled back \| rolled back: src\/math\.test\.ts:\d+ FAIL adds/)
    expect(row(out, 'a syntax error (src/math.ts)')).toContain('| rolled back | rolled back: src/math.ts:')
    expect(row(out, 'a new file with a type error (src/dsh-try-probe.ts)')).toContain("| rolled back | rolled back: src/dsh-try-probe.ts:1 TS2322 Type 'string' is not assignable to type 'number'.")
    expect(out).toMatch(/^peak RSS of the guard \(with its workers and runners\): \d+ MB$/m)
    expect(out).toContain(`${ws}: untouched (every file's size and mtime as before)`)
    expect(snapshotOf(ws)).toEqual(before)
  }, 600_000)

  it('says which probe could not be made and why (no test file imports the module); --restart makes the probes again on a restarted guard, which starts from the build info of the first', async () => {
    const ws = library(false)
    const r = await dsh(['try', '--workspace', ws, '--no-naive', '--restart'], { timeoutMs: 600_000 })
    expect(r.exitCode, r.output).toBe(0)
    expect(r.stdout).toContain('naive check: skipped (--no-naive)')
    expect(row(r.stdout, 'a behaviour change its tests catch')).toBe('| a behaviour change its tests catch | rolled back | not made: no test file imports src/math.ts, directly or through other modules | — | — | — | — | — |')
    expect(row(r.stdout, 'a comment in the most-imported module (src/math.ts)')).toMatch(/\| typecheck \(cold\) [\d.]+ s · tests: none run: only comments and whitespace changed in src\/math\.ts \|$/)
    expect(r.stderr).toContain('restarting the guard on the same copy (its vault kept)…')
    expect(r.stderr).toContain('probe 1/6 (restarted guard): a comment in the most-imported module (src/math.ts)…')
    // The first session's type-check left its build info in the copy's vault: the restarted guard's baseline starts from it.
    expect(row(r.stdout, 'after a restart: a comment in the most-imported module (src/math.ts)')).toMatch(/\| kept \| kept \| .* \| typecheck \(from build info\) [\d.]+ s · tests: none run: only comments and whitespace changed in src\/math\.ts \|$/)
    expect(row(r.stdout, 'after a restart: an export renamed, breaking its importers (`add` in src/math.ts)')).toMatch(/\| rolled back \| rolled back: src\/(math|use)\.ts:\d+ TS\d+ /)
    expect(row(r.stdout, 'after a restart: a behaviour change its tests catch')).toContain('| not made: no test file imports src/math.ts, directly or through other modules |')
  }, 600_000)

  it('--timeout: a probe past it is reported timed out (its test run killed) and the run goes on to the next probe', async () => {
    const marker = `3600.${process.pid}7`
    const ws = library(true, marker)
    const before = snapshotOf(ws)
    const r = await dsh(['try', '--workspace', ws, '--no-naive', '--timeout', '3'], { timeoutMs: 600_000 })
    expect(r.exitCode, r.output).toBe(1)
    // The body-only edit runs the test that sleeps (a comment runs none; on a loaded machine its cold type-check may time out too).
    expect(r.stderr).toContain('probe 2/6: timed out after 3 s — its call is aborted; waiting for the guard to settle before the next probe…')
    const body = row(r.stdout, 'a body-only edit (src/math.ts)')
    expect(body).toMatch(/^\| [^|]+ \| kept \| timed out after 3 s \(the guard then said: [^)]+\) ✗(?:: vitest aborted \(process group killed\))? \| 3\.0 s \(CPU [\d.]+ s\) \|/)
    // Probes the type-check decides never reach the test: judged as without the limit.
    expect(row(r.stdout, 'a syntax error (src/math.ts)')).toContain('| rolled back | rolled back: src/math.ts:')
    expect(sleeping(marker)).toEqual([])
    expect(snapshotOf(ws)).toEqual(before)
  }, 600_000)

  it('SIGINT while a probe\'s test runs: exit 130, nothing it started survives, the copies are removed, the workspace untouched', async () => {
    const marker = `3600.${process.pid}8`
    const ws = library(true, marker)
    const before = snapshotOf(ws)
    const tmp = tempDir('dsh-try-tmp-')
    const cli = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'packages/dsh-cli/src/bin.ts'), 'try', '--workspace', ws, '--no-naive'], {
      cwd: repoRoot, detached: true, env: { ...process.env, NODE_ENV: 'test', TMPDIR: tmp }, stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    cli.stderr!.on('data', (d: Buffer) => { stderr += d })
    const exited = new Promise<number | null>(resolve => cli.on('exit', code => resolve(code)))
    try {
      while (!sleeping(marker).length) {
        if (cli.exitCode !== null) throw new Error(`dsh try exited (${cli.exitCode}) before the probe's test ran:\n${stderr}`)
        await delay(50)
      }
      expect(readdirSync(tmp).filter(n => n.startsWith('dsh-try-'))).toHaveLength(1)
      process.kill(cli.pid!, 'SIGINT')
      expect(await exited).toBe(130)
    } finally {
      if (cli.exitCode === null) process.kill(-cli.pid!, 'SIGKILL')
    }
    expect(stderr).toMatch(/^dsh try: SIGINT: stopped; removing \S+dsh-try-\w+$/m)
    expect(sleeping(marker)).toEqual([])
    expect(readdirSync(tmp).filter(n => n.startsWith('dsh-try-'))).toEqual([])
    expect(snapshotOf(ws)).toEqual(before)
  }, 600_000)

  it('refuses a workspace it cannot probe and bad flags, with exit 2', async () => {
    const empty = project({ 'README.md': 'nothing to probe\n' })
    const r = await dsh(['try', '--workspace', empty, '--no-naive'])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain(`dsh try: ${empty} is not a TypeScript, Go or Python project`)
    const bad = await dsh(['try', '--workspace', empty, '--naive-timeout', 'soon'])
    expect(bad.exitCode).toBe(2)
    expect(bad.stderr).toBe('dsh try: --naive-timeout needs a whole number of seconds, got "soon"\n')
    const badProbe = await dsh(['try', '--workspace', empty, '--timeout', '0'])
    expect(badProbe.exitCode).toBe(2)
    expect(badProbe.stderr).toBe('dsh try: --timeout needs a whole number of seconds, got "0"\n')
    // --module and --function that name nothing the probes can be made on: refused before anything is copied or run.
    const lib = library(true)
    const cases: [string[], string][] = [
      [['--module', 'src/nope.ts'], `dsh try: --module src/nope.ts: not a source file of ${lib} (give its path relative to the workspace)\n`],
      [['--module', 'src/use.ts'], `dsh try: --module src/use.ts: no other file of ${lib} imports it, so its importers and tests cannot be probed\n`],
      [['--module', './src/math.ts', '--function', 'sub'], 'dsh try: --function sub: no function of that name with a body in src/math.ts (it has: add, twice)\n'],
      [['--function', 'sub'], `dsh try: --function sub: no source module of ${lib} that another file imports has a function of that name with a body\n`],
    ]
    for (const [flags, message] of cases) {
      const refused = await dsh(['try', '--workspace', lib, ...flags])
      expect(refused.exitCode).toBe(2)
      expect(refused.stderr).toBe(message)
    }
    const help = await dsh(['try', '--help'])
    expect(help.exitCode).toBe(0)
    expect(help.stdout).toContain('Usage: dsh try --workspace DIR')
  })
})
