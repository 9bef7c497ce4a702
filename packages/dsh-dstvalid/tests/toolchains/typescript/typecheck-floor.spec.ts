/**
 * The type-check at its floor, with real TypeScript on a small project graph
 * (a solution over `core`, `app` → `core`, and `tools`): a body-only edit
 * re-checks the edited file alone, in the programs that read it; an
 * export-changing edit re-checks its importers in every program; and the
 * build-info cache in the vault lets the first check after a restart
 * re-check only what changed since — never answering with a stale verdict.
 */
import { existsSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join, relative } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import type * as TS from 'typescript'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { TsProgramChecker, TsWorkerClient, type TsCheckResult } from 'dsh-dstvalid'
import DstValidService from 'dsh-dstvalid'
import { VAULT_GITIGNORE } from 'dsh-common'
import { harness, tempDir, waitFor } from 'dsh-testkit'
import { repoNodeModules, writeFile } from '../../helpers.ts'

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 })

const ts = createRequire(import.meta.url)('typescript') as typeof TS
const typescriptPath = createRequire(import.meta.url).resolve('typescript')

const CORE = 'packages/core/tsconfig.json'
const APP = 'packages/app/tsconfig.json'
const TOOLS = 'packages/tools/tsconfig.json'
const ADD = 'export function add(a: number, b: number): number {\n  return a + b\n}\n'

/** A solution tsconfig over three projects; `tools` holds one pre-existing error. */
function graph(): string {
  const root = tempDir('dsh-tsfloor-')
  symlinkSync(repoNodeModules, join(root, 'node_modules'))
  const options = { strict: true, target: 'ES2022', module: 'ESNext', moduleResolution: 'Bundler', skipLibCheck: true, types: [] }
  const files: Record<string, string> = {
    'tsconfig.json': JSON.stringify({ files: [], references: [{ path: CORE }, { path: APP }, { path: TOOLS }] }),
    [CORE]: JSON.stringify({ compilerOptions: { ...options, composite: true }, include: ['src'] }),
    'packages/core/src/math.ts': ADD,
    'packages/core/src/stats.ts': "import { add } from './math'\n\nexport function sum(xs: number[]): number {\n  return xs.reduce((t, x) => add(t, x), 0)\n}\n",
    'packages/core/src/text.ts': 'export function shout(s: string): string {\n  return s.toUpperCase()\n}\n',
    [APP]: JSON.stringify({ compilerOptions: options, include: ['src'], references: [{ path: '../core' }] }),
    'packages/app/src/main.ts': "import { add } from '../../core/src/math'\nimport { shout } from '../../core/src/text'\n\nexport const total: number = add(1, 2)\nexport const loud: string = shout('hi')\n",
    'packages/app/src/other.ts': 'export const other = 1\n',
    [TOOLS]: JSON.stringify({ compilerOptions: options, include: ['src'] }),
    'packages/tools/src/tool.ts': 'export function tool(n: number): number {\n  return n * 2\n}\n',
    'packages/tools/src/bad.ts': "export const bad: number = 'not a number'\n",
  }
  for (const [rel, text] of Object.entries(files)) writeFile(root, rel, text)
  return root
}

const edit = (root: string, rel: string, from: string, to: string) => {
  const file = join(root, rel)
  const text = readFileSync(file, 'utf8')
  if (!text.includes(from)) throw new Error(`${rel} has no ${from}`)
  writeFileSync(file, text.replace(from, to))
  return file
}

/** Diagnostics as file:line TScode, sorted. */
const problems = (r: TsCheckResult) => r.diagnostics.map(d => `${d.file}:${d.line} TS${d.code}`).sort()

const BAD = 'packages/tools/src/bad.ts:1 TS2322'

/** A forced collection, and a `createProgram` that keeps a weak reference to every program it makes. */
function recordingPrograms(): { gc: () => Promise<boolean[]>; made: WeakRef<TS.Program>[]; createProgram: typeof ts.createProgram } {
  setFlagsFromString('--expose-gc')
  const collect = runInNewContext('gc') as () => void
  /**
   * Which programs are still alive after a full collection. A program let go
   * is collected by the next one, but a WeakRef's target is kept to the end
   * of the turn that made or read it, and a worker at load can be mid-turn:
   * up to five collections, each in a turn of its own, until one frees
   * nothing more (a program still held stays held through all of them).
   */
  const gc = async () => {
    let alive = made.map(ref => !!ref.deref())
    for (let i = 0; i < 5; i++) {
      await new Promise(resolve => setImmediate(resolve))
      collect()
      const now = made.map(ref => !!ref.deref())
      if (now.every((x, j) => x === alive[j]) && i > 0) break
      alive = now
    }
    return alive
  }
  const made: WeakRef<TS.Program>[] = []
  const createProgram = ((...args: Parameters<typeof ts.createProgram>) => {
    const program = (ts.createProgram as (...a: unknown[]) => TS.Program)(...args)
    made.push(new WeakRef(program))
    return program
  }) as typeof ts.createProgram
  return { gc, made, createProgram }
}

describe('a warm checker re-checks what an edit can affect, and nothing more', () => {
  let root: string
  let checker: TsProgramChecker
  beforeAll(() => {
    root = graph()
    checker = new TsProgramChecker(ts, root, join(root, 'tsconfig.json'))
    const cold = checker.check()
    expect(problems(cold)).toEqual([BAD])
    expect(cold.projects).toEqual([CORE, APP, TOOLS])
  })

  it('a body-only edit of a file re-checks that file alone, in its own project; a project that reads it as a referenced source keeps its program (the first edit of the file too)', () => {
    const file = edit(root, 'packages/core/src/math.ts', 'return a + b', 'return b + a')
    const r = checker.check([file])
    expect(r.recheckedFiles).toEqual({ [CORE]: ['packages/core/src/math.ts'] })
    expect(r.rechecked).toBe(1)
    expect(problems(r)).toEqual([BAD])
    // A body that imports a module: app's program would read it too, so app is rebuilt (re-checking none of its files).
    const importing = checker.check([edit(root, 'packages/core/src/math.ts', 'return b + a', "void import('./text')\n  return b + a")])
    expect(importing.recheckedFiles).toEqual({ [CORE]: ['packages/core/src/math.ts'], [APP]: [] })
    expect(problems(checker.check([edit(root, 'packages/core/src/math.ts', "void import('./text')\n  return b + a", 'return b + a')]))).toEqual([BAD])
  })

  it('a body-only edit in an independent project rebuilds that project only', () => {
    const file = edit(root, 'packages/tools/src/tool.ts', 'n * 2', 'n + n')
    const r = checker.check([file])
    expect(r.recheckedFiles).toEqual({ [TOOLS]: ['packages/tools/src/tool.ts'] })
    expect(problems(r)).toEqual([BAD])
  })

  it('an export-changing edit re-checks its importers in every program that reads them, and reports what it broke', () => {
    const file = edit(root, 'packages/core/src/math.ts', 'add(a: number, b: number): number', 'add(a: string, b: number): number')
    const broken = checker.check([file])
    expect(Object.keys(broken.recheckedFiles).sort()).toEqual([APP, CORE])
    expect(broken.recheckedFiles[CORE]!.sort()).toEqual(['packages/core/src/math.ts', 'packages/core/src/stats.ts'])
    expect(broken.recheckedFiles[APP]).toEqual(['packages/app/src/main.ts'])
    expect(problems(broken)).toEqual(['packages/app/src/main.ts:4 TS2345', 'packages/core/src/math.ts:2 TS2322', 'packages/core/src/stats.ts:4 TS2345', BAD])
    const fixed = checker.check([edit(root, 'packages/core/src/math.ts', 'add(a: string, b: number): number', 'add(a: number, b: number): number')])
    expect(problems(fixed)).toEqual([BAD])
  })

  it('a dependent signs a referenced source with its own project\'s signature: it emits no declaration of it, and still sees its export change', () => {
    // Every declaration emit a builder asks for (EmitOnly.BuilderSignature = 2), by project and file, on a checker of its own.
    const emits: string[] = []
    const dir = graph()
    const createProgram = ((...args: Parameters<typeof ts.createProgram>) => {
      const program = (ts.createProgram as (...a: unknown[]) => TS.Program)(...args)
      const emit = program.emit.bind(program) as (...a: unknown[]) => TS.EmitResult
      const project = relative(dir, program.getRootFileNames()[0] ?? '').split('/')[1]
      program.emit = ((...a: unknown[]) => {
        if (a[3] === 2 && a[0]) emits.push(`${project}: ${relative(dir, (a[0] as TS.SourceFile).fileName)}`)
        return emit(...a)
      }) as TS.Program['emit']
      return program
    }) as typeof ts.createProgram
    const own = new TsProgramChecker({ ...ts, createProgram }, dir, join(dir, 'tsconfig.json'))
    expect(problems(own.check())).toEqual([BAD])
    // At the first check every file is signed, by its own project only.
    expect(emits.filter(e => e.startsWith('app: packages/core'))).toEqual([])
    expect(emits).toContain('core: packages/core/src/text.ts')
    expect(emits).toContain('app: packages/app/src/main.ts')
    emits.length = 0
    const changed = own.check([edit(dir, 'packages/core/src/text.ts', 'shout(s: string): string', 'shout(s: string, n = 1): string')])
    expect(changed.recheckedFiles[APP]).toEqual(['packages/app/src/main.ts'])
    expect(emits).toEqual(['core: packages/core/src/text.ts', 'app: packages/app/src/main.ts'])
    emits.length = 0
    const broken = own.check([edit(dir, 'packages/core/src/text.ts', 'shout(s: string, n = 1): string', 'shout(s: number): string')])
    expect(problems(broken)).toEqual(['packages/app/src/main.ts:5 TS2345', 'packages/core/src/text.ts:2 TS2339', BAD])
    expect(emits.filter(e => e.startsWith('app: packages/core'))).toEqual([])
    expect(problems(own.check([edit(dir, 'packages/core/src/text.ts', 'shout(s: number): string', 'shout(s: string): string')]))).toEqual([BAD])
  })

  it('a rebuilt program does not keep the one before it (nor its type-checker) alive', async () => {
    const { gc, made, createProgram } = recordingPrograms()
    const dir = graph()
    const own = new TsProgramChecker({ ...ts, createProgram }, dir, join(dir, 'tsconfig.json'))
    own.check()
    // An export-changing edit of core: core and app (which reads core's sources) are rebuilt, tools is not.
    own.check([edit(dir, 'packages/core/src/math.ts', 'b: number): number', 'b: number, c = 0): number')])
    // Three at the first check, two rebuilt, one parse-only program for the changed file's syntax.
    expect(made).toHaveLength(6)
    // The three programs in use; the two they replaced are gone.
    expect((await gc()).filter(Boolean).length).toBe(3)
  })

  it('a new syntax error is answered from the parse alone (no program rebuilt); put back and reverted, the next check re-checks nothing', () => {
    const path = join(root, 'packages/core/src/math.ts')
    const accepted = readFileSync(path)
    const broken = checker.check([edit(root, 'packages/core/src/math.ts', 'return b + a', 'return b +')])
    expect(problems(broken)).toEqual(['packages/core/src/math.ts:3 TS1109', BAD])
    expect(broken.recheckedFiles).toEqual({})
    writeFileSync(path, accepted)
    expect(checker.revert()).toBe(0)
    const after = checker.check([path])
    expect(after.rechecked).toBe(0)
    expect(problems(after)).toEqual([BAD])
  })

  it('a created file rolled back (gone again) is forgotten by revert: the next check parses the configs again and does not look for it', () => {
    const created = join(root, 'packages/core/src/extra.ts')
    writeFileSync(created, 'export const extra: number = 1\n')
    expect(problems(checker.check([created]))).toEqual([BAD])
    rmSync(created)
    expect(checker.revert()).toBeGreaterThan(0)
    const after = checker.check([join(root, 'packages/tools/src/tool.ts')])
    expect(problems(after)).toEqual([BAD])
  })

  it('a write put back byte for byte is forgotten by revert: the next check re-checks nothing and reports what it did before', () => {
    const path = join(root, 'packages/core/src/math.ts')
    const accepted = readFileSync(path)
    const broken = checker.check([edit(root, 'packages/core/src/math.ts', 'add(a: number, b: number): number', 'add(a: string, b: number): number')])
    expect(broken.rechecked).toBeGreaterThan(0)
    writeFileSync(path, accepted)
    expect(checker.revert()).toBe(2)
    const after = checker.check([path])
    expect(after.rechecked).toBe(0)
    expect(after.recheckedFiles).toEqual({ [CORE]: [], [APP]: [] })
    expect(problems(after)).toEqual([BAD])
    // The state is the accepted one: the same export-changing edit is caught again.
    expect(problems(checker.check([edit(root, 'packages/core/src/math.ts', 'add(a: number, b: number): number', 'add(a: string, b: number): number')]))).toEqual(problems(broken))
    writeFileSync(path, accepted)
    expect(problems(checker.check([path]))).toEqual([BAD])
  })
})

describe('a check that may pause at the first new errors', () => {
  let root: string
  let checker: TsProgramChecker
  const fresh = () => problems(new TsProgramChecker(ts, root, join(root, 'tsconfig.json')).check())
  beforeAll(() => {
    root = graph()
    checker = new TsProgramChecker(ts, root, join(root, 'tsconfig.json'))
    expect(problems(checker.check())).toEqual([BAD])
  })

  it('pauses at the changed file\'s importer with the errors found so far; resumed, it ends as a whole check does', () => {
    const file = edit(root, 'packages/core/src/math.ts', 'add(a: number, b: number): number', 'add(a: number, b: string): number')
    const first = checker.check([file], { pause: true })
    expect(first.paused).toBe(true)
    expect(problems(first)).toEqual(['packages/core/src/math.ts:2 TS2322'])
    expect(first.recheckedFiles).toEqual({ [CORE]: ['packages/core/src/math.ts'] })
    const second = checker.resume()
    expect(second.paused).toBe(true)
    expect(problems(second)).toEqual(['packages/core/src/math.ts:2 TS2322', 'packages/core/src/stats.ts:4 TS2345'])
    expect(second.recheckedFiles).toEqual({ [CORE]: ['packages/core/src/math.ts', 'packages/core/src/stats.ts'] })
    const third = checker.resume()
    expect(third.paused).toBe(true)
    expect(third.recheckedFiles[APP]).toEqual(['packages/app/src/main.ts'])
    const done = checker.resume()
    expect(done.paused).toBeUndefined()
    expect(problems(done)).toEqual(fresh())
    expect(() => checker.resume()).toThrow('no paused type-check to resume')
    expect(problems(checker.check([edit(root, 'packages/core/src/math.ts', 'add(a: number, b: string): number', 'add(a: number, b: number): number')], { pause: true }))).toEqual([BAD])
  })

  it('a body-only edit re-checks the written file alone, not its importers (its declaration is unchanged); a body that changes an inferred return type re-checks them', () => {
    const path = join(root, 'packages/core/src/math.ts')
    const body = checker.check([edit(root, 'packages/core/src/math.ts', 'return a + b', 'return b + a')], { pause: true })
    expect(body.paused).toBeUndefined()
    expect(body.recheckedFiles).toEqual({ [CORE]: ['packages/core/src/math.ts'] })
    expect(problems(body)).toEqual([BAD])
    // The return type left to inference: the same declaration, still the file alone.
    const inferred = checker.check([edit(root, 'packages/core/src/math.ts', 'b: number): number {', 'b: number) {')], { pause: true })
    expect(inferred.recheckedFiles).toEqual({ [CORE]: ['packages/core/src/math.ts'] })
    // A body that changes the inferred return type changes the declaration: its importers are checked next, and break.
    const typed = checker.check([edit(root, 'packages/core/src/math.ts', 'return b + a', 'return String(b + a)')], { pause: true })
    expect(typed.paused).toBe(true)
    expect(typed.recheckedFiles).toEqual({ [CORE]: ['packages/core/src/math.ts', 'packages/core/src/stats.ts'] })
    let done = typed
    while (done.paused) done = checker.resume()
    expect(problems(done)).toEqual(fresh())
    expect(problems(done)).toEqual(['packages/app/src/main.ts:4 TS2322', 'packages/core/src/stats.ts:4 TS2769', BAD])
    writeFileSync(path, ADD)
    expect(problems(checker.check([path]))).toEqual([BAD])
  })

  it('a write with no new error is checked whole without pausing', () => {
    const file = edit(root, 'packages/core/src/text.ts', 'shout(s: string): string', 'shout(s: string, n = 1): string')
    const r = checker.check([file], { pause: true })
    expect(r.paused).toBeUndefined()
    expect(r.recheckedFiles).toEqual({ [CORE]: ['packages/core/src/text.ts'], [APP]: ['packages/app/src/main.ts'] })
    expect(problems(r)).toEqual([BAD])
  })

  it('stopped and rolled back byte for byte, it is forgotten: the next check re-checks nothing', () => {
    const path = join(root, 'packages/core/src/math.ts')
    const accepted = readFileSync(path)
    expect(checker.check([edit(root, 'packages/core/src/math.ts', 'export function add(', 'export function plus(')], { pause: true }).recheckedFiles)
      .toEqual({ [CORE]: ['packages/core/src/math.ts', 'packages/core/src/stats.ts'] })
    writeFileSync(path, accepted)
    expect(checker.revert()).toBe(1)
    expect(checker.paused).toBe(false)
    const after = checker.check([path])
    expect(after.rechecked).toBe(0)
    expect(problems(after)).toEqual([BAD])
  })

  it('stopped and kept (nobody rolled it back), the next check judges the write whole: no state of the half-finished check is left', () => {
    const broken = edit(root, 'packages/core/src/math.ts', 'export function add(', 'export function plus(')
    expect(checker.check([broken], { pause: true }).paused).toBe(true)
    // Another write while the first stays: a whole check sees both.
    const other = edit(root, 'packages/core/src/text.ts', 'return s.toUpperCase()', 'return s.toLowerCase()')
    const next = checker.check([other])
    expect(problems(next)).toEqual(fresh())
    expect(problems(next)).toEqual(['packages/app/src/main.ts:1 TS2305', 'packages/core/src/stats.ts:1 TS2305', BAD])
    // Its importers are known to the import graph again, and the accepted state comes back.
    expect(checker.importers(['packages/core/src/text.ts'], 10).importers.map(i => i.file)).toEqual(['packages/app/src/main.ts'])
    expect(problems(checker.check([edit(root, 'packages/core/src/math.ts', 'export function plus(', 'export function add(')]))).toEqual([BAD])
  })
})

describe('a check that re-checked many files lets its type-checker go', () => {
  it('the checked program is collected, a program of the same files that checked nothing is kept; the next checks, a rollback and the build-info cache answer as before', async () => {
    const { gc, made, createProgram } = recordingPrograms()
    const dir = tempDir('dsh-tsfloor-many-')
    symlinkSync(repoNodeModules, join(dir, 'node_modules'))
    writeFile(dir, 'tsconfig.json', JSON.stringify({ compilerOptions: { strict: true, target: 'ES2022', module: 'ESNext', moduleResolution: 'Bundler', skipLibCheck: true, types: [] }, include: ['src'] }))
    writeFile(dir, 'src/base.ts', 'export const base: number = 1\n')
    const FILES = 60
    for (let i = 0; i < FILES; i++) writeFile(dir, `src/f${i}.ts`, `import { base } from './base'\n\nexport function f${i}(): number {\n  return base + ${i}\n}\n`)
    const cacheDir = join(tempDir('dsh-tsfloor-vault-'), 'tsbuildinfo')
    const own = new TsProgramChecker({ ...ts, createProgram }, dir, join(dir, 'tsconfig.json'), { cacheDir })
    const sources = (r: TsCheckResult) => (r.recheckedFiles['tsconfig.json'] ?? []).filter(f => f.startsWith('src/')).length
    expect(sources(own.check())).toBe(FILES + 1)
    // The checked program, then one over the same files that has checked nothing.
    expect(made).toHaveLength(2)
    expect(await gc()).toEqual([false, true])
    // The state survived: a body-only edit re-checks its file alone, an export change its importers.
    expect(own.check([edit(dir, 'src/f1.ts', 'return base + 1', 'return 1 + base')]).recheckedFiles).toEqual({ 'tsconfig.json': ['src/f1.ts'] })
    const path = join(dir, 'src/base.ts')
    const broken = own.check([edit(dir, 'src/base.ts', 'base: number = 1', "base: string = '1'")])
    expect(sources(broken)).toBe(FILES + 1)
    expect(problems(broken)).toHaveLength(FILES)
    expect(new Set(problems(broken).map(p => p.split(' ')[1]))).toEqual(new Set(['TS2322']))
    // Put back byte for byte and reverted (that check had let its type-checker go too): nothing re-checked.
    writeFileSync(path, 'export const base: number = 1\n')
    expect(own.revert()).toBe(1)
    const back = own.check([path])
    expect(back.rechecked).toBe(0)
    expect(problems(back)).toEqual([])
    // Written from the kept program's builder, the cache starts the next checker with nothing to re-check.
    expect(own.persist()).toBe(1)
    const next = new TsProgramChecker(ts, dir, join(dir, 'tsconfig.json'), { cacheDir }).check()
    expect(next.restored).toEqual(['tsconfig.json'])
    expect(next.rechecked).toBe(0)
    expect(problems(next)).toEqual([])
  })
})

describe('the build-info cache in the vault', () => {
  let root: string
  let cacheDir: string
  let first: TsCheckResult
  const boot1 = (options: { ts?: typeof TS } = {}) => new TsProgramChecker(options.ts ?? ts, root, join(root, 'tsconfig.json'), { cacheDir })
  beforeAll(() => {
    root = graph()
    cacheDir = join(tempDir('dsh-tsfloor-vault-'), 'tsbuildinfo')
    const checker = boot1()
    first = checker.check()
    expect(first.restored).toEqual([])
    expect(checker.persist()).toBe(3)
    // Nothing moved since: nothing to write.
    expect(checker.persist()).toBe(0)
  })

  it('is written into the cache directory, one file per project, and nothing into the workspace', () => {
    expect(readdirSync(cacheDir).filter(f => f.endsWith('.tsbuildinfo'))).toHaveLength(3)
    const inTree = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap(e => e.name === 'node_modules' ? [] : e.isDirectory() ? inTree(join(dir, e.name)) : [relative(root, join(dir, e.name))])
    expect(inTree(root).filter(f => /buildinfo/.test(f))).toEqual([])
  })

  it('a second boot re-checks no file and reports the same diagnostics', () => {
    const r = boot1().check()
    expect(r.restored).toEqual([CORE, APP, TOOLS])
    expect(r.rechecked).toBe(0)
    expect(r.diagnostics).toEqual(first.diagnostics)
  })

  it('a file changed while the checker was down is re-checked, with what it broke', () => {
    const file = edit(root, 'packages/core/src/math.ts', 'add(a: number, b: number): number', 'add(a: string, b: number): number')
    try {
      const r = boot1().check()
      expect(r.restored).toEqual([CORE, APP, TOOLS])
      expect(r.recheckedFiles[CORE]!.sort()).toEqual(['packages/core/src/math.ts', 'packages/core/src/stats.ts'])
      expect(r.recheckedFiles[APP]).toEqual(['packages/app/src/main.ts'])
      expect(r.recheckedFiles[TOOLS]).toEqual([])
      expect(problems(r)).toEqual(['packages/app/src/main.ts:4 TS2345', 'packages/core/src/math.ts:2 TS2322', 'packages/core/src/stats.ts:4 TS2345', BAD])
    } finally {
      writeFileSync(file, ADD)
    }
  })

  it('a file deleted while the checker was down fails its importers', () => {
    const file = join(root, 'packages/core/src/text.ts')
    const text = readFileSync(file, 'utf8')
    rmSync(file)
    try {
      const r = boot1().check()
      expect(r.restored).toEqual([CORE, APP, TOOLS])
      expect(problems(r)).toEqual(['packages/app/src/main.ts:2 TS2307', BAD])
    } finally {
      writeFileSync(file, text)
    }
  })

  it('changed compiler options start that project cold, and judge with the new options', () => {
    const config = join(root, TOOLS)
    const text = readFileSync(config, 'utf8')
    writeFile(root, 'packages/tools/src/loose.ts', 'export function loose(x) {\n  return x\n}\n')
    writeFileSync(config, text.replace('"strict":true', '"strict":false'))
    try {
      const checker = boot1()
      const loose = checker.check()
      expect(loose.restored).toEqual([CORE, APP])
      expect(problems(loose)).toEqual([BAD])
      checker.persist()
      // Back to strict: the loose build info (which says loose.ts is clean) must not answer.
      writeFileSync(config, text)
      const strict = boot1().check()
      expect(strict.restored).toEqual([CORE, APP])
      expect(problems(strict)).toEqual([BAD, 'packages/tools/src/loose.ts:1 TS7006'])
    } finally {
      rmSync(join(root, 'packages/tools/src/loose.ts'))
      writeFileSync(config, text)
    }
  })

  it('another TypeScript version, or an unreadable file, starts cold', () => {
    const other = { ...ts, version: `${ts.version}-other` } as typeof TS
    const r = boot1({ ts: other }).check()
    expect(r.restored).toEqual([])
    expect(problems(r)).toEqual([BAD])
    const persisted = boot1()
    persisted.check()
    persisted.persist()
    for (const f of readdirSync(cacheDir)) writeFileSync(join(cacheDir, f), '{"version":')
    const torn = boot1().check()
    expect(torn.restored).toEqual([])
    expect(problems(torn)).toEqual([BAD])
  })
})

describe('the type-check worker keeps the cache across restarts', () => {
  it('writes it once idle after a check and when disposed, and the next worker starts from it', async () => {
    const root = graph()
    const cacheDir = join(tempDir('dsh-tsfloor-vault-'), 'tsbuildinfo')
    const init = { root, configPath: join(root, 'tsconfig.json'), typescriptPath, cacheDir }
    const cached = () => existsSync(cacheDir) ? readdirSync(cacheDir).filter(f => f.endsWith('.tsbuildinfo')) : []
    const a = new TsWorkerClient(init, { maxHeapMb: 0 })
    const cold = await a.check([], 120_000)
    expect(cold.status === 'ok' && cold.result.restored).toEqual([])
    // Idle after the check: written without being asked (a harness killed later still leaves it).
    await vi.waitFor(() => expect(cached()).toHaveLength(3), { timeout: 60_000, interval: 250 })
    // A later check moves the state; disposing writes it.
    const edited = edit(root, 'packages/tools/src/tool.ts', 'n * 2', 'n + n')
    const before = cached().map(f => readFileSync(join(cacheDir, f), 'utf8')).join()
    expect((await a.check([edited], 120_000)).status).toBe('ok')
    await a.dispose()
    expect(cached().map(f => readFileSync(join(cacheDir, f), 'utf8')).join()).not.toBe(before)
    const b = new TsWorkerClient(init, { maxHeapMb: 0 })
    try {
      const warm = await b.check([], 120_000)
      expect(warm.status === 'ok' && { restored: warm.result.restored, rechecked: warm.result.rechecked, problems: problems(warm.result) })
        .toEqual({ restored: [CORE, APP, TOOLS], rechecked: 0, problems: [BAD] })
    } finally {
      await b.dispose()
    }
  })

  it('a session whose last write was rolled back (its state reverted, no program) still writes the cache when disposed', async () => {
    const root = graph()
    const cacheDir = join(tempDir('dsh-tsfloor-vault-'), 'tsbuildinfo')
    const init = { root, configPath: join(root, 'tsconfig.json'), typescriptPath, cacheDir }
    const cached = () => existsSync(cacheDir) ? readdirSync(cacheDir).filter(f => f.endsWith('.tsbuildinfo')) : []
    const a = new TsWorkerClient(init, { maxHeapMb: 0 })
    // Checked, then at once a write checked and rolled back byte for byte: no idle moment to write the cache in between.
    expect((await a.check([], 120_000)).status).toBe('ok')
    const file = join(root, 'packages/core/src/math.ts')
    const was = readFileSync(file, 'utf8')
    const broken = edit(root, 'packages/core/src/math.ts', 'add(a: number, b: number): number', 'add(a: string, b: number): number')
    expect((await a.check([broken], 120_000)).status).toBe('ok')
    writeFileSync(file, was)
    expect(await a.revert(120_000)).toBeGreaterThan(0)
    expect(cached()).toEqual([])
    await a.dispose()
    expect(cached()).toHaveLength(3)
    const b = new TsWorkerClient(init, { maxHeapMb: 0 })
    try {
      const warm = await b.check([], 120_000)
      expect(warm.status === 'ok' && { restored: warm.result.restored, rechecked: warm.result.rechecked, problems: problems(warm.result) })
        .toEqual({ restored: [CORE, APP, TOOLS], rechecked: 0, problems: [BAD] })
    } finally {
      await b.dispose()
    }
  })

  it('a session warms the checker at start from the vault, and says so in its run record', async () => {
    const root = graph()
    const vault = tempDir('dsh-tsfloor-vault-')
    /** A session on `root` with the vault; the argv mode and outcome of its first type-check (the warm-up at session start). */
    const start = async () => {
      const h = await harness({ workspace: root, plugins: [[DstValidService, { tests: 'off', warmOnStart: true }]] })
      try {
        const session = h.ctx.sessions.create(undefined, { cwd: root, vault })
        const run = await waitFor(h.ctx, session, 'verify/run', { timeoutMs: 120_000 })
        return [run.data.argv.at(-1), run.data.outcome]
      } finally {
        await h.dispose()
      }
    }
    expect(await start()).toEqual(['(in-process, cold)', 'fail'])
    expect(readdirSync(join(vault, 'tsbuildinfo'))).toHaveLength(3)
    // Created as a vault: never shows in the workspace's git status.
    expect(readFileSync(join(vault, '.gitignore'), 'utf8')).toBe(VAULT_GITIGNORE)
    expect(await start()).toEqual(['(in-process, from build info)', 'fail'])
  })
})
