import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { toPosixRelative } from 'dsh-common'
import { FILE_LEVEL, testName } from '../../accepted.ts'
import { diagnostic, failingTest, longerLimit } from '../../problems.ts'
import { buildPackage, describeBuildErrors, readGoTestRun, type GoBuildError } from './events.ts'
import { runRecorded, whyNotJudged } from '../../run.ts'
import type { Change, Check, CheckIO, Confirmation, Measurement, Problem, SlowTest, TestSource } from '../../types.ts'
import { rerunResult } from '../runner.ts'
import type { CoverageReading, CoverageSource } from '../../modes/coverage.ts'
import { goSourceSeer, goUnchanged } from './comments.ts'

const GO_POSITION = /^(?:vet: )?(?:\.\/)?([^\s:][^:]*\.go):(\d+)(?::\d+)?: (.+)$/

/** Parse `file.go:line:col: message` lines of `go build` / `go vet` output. */
export function parseGoDiagnostics(check: string, output: string): Problem[] {
  const problems: Problem[] = []
  for (const line of output.split('\n')) {
    const m = GO_POSITION.exec(line.trim())
    if (m) problems.push(diagnostic(check, m[1]!, Number(m[2]), check === 'vet' ? 'vet' : 'go', m[3]!))
  }
  return problems
}

/** A whole-module diagnostics check: `go build ./...` or `go vet ./...` (the build cache keeps it incremental). */
abstract class GoDiagnosticsCheck implements Check {
  abstract readonly name: string
  abstract readonly verb: string
  protected abstract readonly argv: string[]
  /** A `# pkg` header means the package does not compile (go build), not that vet found something in it. */
  protected readonly compiles: boolean = false

  constructor(protected readonly root: string) {}

  /** A write that changed only comments in non-test Go files: nothing the compiler or vet reads changed. */
  unaffectedBy(change: Change): Promise<string | undefined> {
    return goUnchanged(change)
  }

  async measure(_change: Change | undefined, io: CheckIO): Promise<Measurement> {
    const r = await runRecorded(this.name, this.argv, this.root, io)
    if (r.outcome === 'timeout' || r.outcome === 'error') {
      return { status: r.outcome === 'timeout' ? 'timeout' : 'error', problems: [], scope: 'all',
        error: whyNotJudged(this.argv.slice(0, 2).join(' '), r, io.timeoutMs) }
    }
    const problems = parseGoDiagnostics(this.name, r.output)
    if (r.exitCode !== 0 && !problems.length) {
      problems.push(diagnostic(this.name, '', undefined, 'exit',
        `${this.argv.join(' ')} exited ${r.exitCode}: ${r.output.trim().split('\n').slice(-1)[0] ?? ''}`))
    }
    if (r.exitCode !== 0 && problems.length && this.compiles) problems.push(...await this.unchecked(r.output, io))
    return { status: 'ok', problems, scope: 'all' }
  }

  /**
   * Go does not compile a package whose import does not build, and says
   * nothing about it: its own breakage stays hidden until the import is
   * fixed. Name each such package, so one judgement shows every package the
   * write left unchecked.
   */
  private async unchecked(output: string, io: CheckIO): Promise<Problem[]> {
    const broken = new Set([...output.matchAll(/^# (\S+)/gm)].map(m => buildPackage(m[1]!)))
    if (!broken.size) return []
    const r = await runRecorded(this.name, ['go', 'list', '-e', '-f', '{{.ImportPath}}\t{{.Dir}}\t{{join .Deps " "}}', './...'], this.root, io)
    if (r.exitCode !== 0) return []
    const problems: Problem[] = []
    for (const line of r.stdout.split('\n').filter(Boolean)) {
      const [importPath, dir, deps] = line.split('\t')
      if (broken.has(importPath!)) continue
      const cause = (deps ?? '').split(' ').find(d => broken.has(d))
      const rel = toPosixRelative(this.root, dir!) || importPath!
      if (cause) problems.push(diagnostic(this.name, rel, undefined, 'go', `not checked: imports ${cause}, which does not build`))
    }
    return problems
  }
}

export class GoBuildCheck extends GoDiagnosticsCheck {
  readonly name = 'compile'
  readonly verb = 'compiling'
  protected readonly argv = ['go', 'build', './...']
  protected override readonly compiles = true
}

export class GoVetCheck extends GoDiagnosticsCheck {
  readonly name = 'vet'
  readonly verb = 'vetting'
  protected readonly argv = ['go', 'vet', './...']
}

interface GoPackage {
  importPath: string
  /** Workspace-relative directory, `.` for the module root. */
  dir: string
  /** How problems and scope name it: the directory, or the import path for the module root (never `.`). */
  label: string
  /** Module-internal or not, everything its code and tests import (code deps transitively). */
  deps: Set<string>
  /** Workspace-relative `_test.go` files (in-package and external). */
  testFiles: string[]
}

/** `go list` line format: import path, directory, imports (code transitively, tests directly), test files. */
const LIST_FORMAT = '{{.ImportPath}}\t{{.Dir}}\t{{join .Deps " "}} {{join .TestImports " "}} {{join .XTestImports " "}}\t{{join .TestGoFiles " "}} {{join .XTestGoFiles " "}}'

/**
 * `go test -json`: on a change, only the packages of the changed files and
 * the packages that import them (directly, transitively, or from tests).
 * A test id is `<pkg>::<TestName>` (`<pkg>`: the package directory, or its
 * import path for the module root); a package whose tests do not build is
 * one problem keyed by the package.
 *
 * Test-first work: a `_test.go` file that did not compile in the accepted
 * state (new, or already pending) and now keeps its package's tests from
 * building is left out of the build through `go test -overlay` (the
 * workspace is never touched), so the package's other tests are still
 * judged; the pending file is reported as a problem of its own (a warning:
 * no test in it ever passed). A test file that compiled in the accepted
 * state and no longer does is a regression of the package.
 *
 * No `-count=1`: Go's test cache is keyed by the content of the files and
 * the environment, so a cached result is the result of this content.
 *
 * Every run is `-vet=off` (after `testArgs`, so it wins): the accepted
 * content is served through `-overlay`, which vet does not read, so a test
 * binary's vet would judge the after-state's files in both measurements.
 * Vet's findings are the vet check's (`go vet ./...`, a superset of the
 * analyzers go test runs), judged against its own accepted state; and a
 * package whose code vet already faulted still has its tests run.
 */
export class GoTestCheck implements Check, CoverageSource {
  readonly name = 'test'
  readonly verb = 'testing'
  readonly coverageUnit = 'statements'
  private _coverage?: CoverageReading
  private _packages: GoPackage[] = []
  /** Test files that compiled in the accepted state. */
  private readonly _compiled = new Set<string>()
  /** Test files ever reported pending, so a later measurement of their package clears their problem. */
  private readonly _pending = new Set<string>()

  /** `coverage`: also write a cover profile (the coverage mode) on `measure` runs. */
  constructor(private readonly root: string, private readonly mode: 'related' | 'all', private readonly extraArgs: string[] = [],
    private readonly coverage = false) {}

  /**
   * A write that changed only comments in non-test Go files, in a module
   * whose code neither reads Go source as a file nor looks at call-site line
   * numbers (which a comment shifts): no test binary can report otherwise.
   * The coverage mode always runs (a comment moves the covered lines).
   */
  async unaffectedBy(change: Change): Promise<string | undefined> {
    if (this.coverage) return undefined
    const why = await goUnchanged(change)
    return why && !goSourceSeer(this.root) ? why : undefined
  }

  /** Related packages: the accepted state is measured per write (see {@link Check.lazyBaseline}). */
  get lazyBaseline(): boolean {
    return this.mode === 'related'
  }

  lastCoverage(): CoverageReading | undefined {
    return this._coverage
  }

  async measure(change: Change | undefined, io: CheckIO): Promise<Measurement> {
    this._coverage = undefined
    const covered = change?.files.filter(f => f.endsWith('.go') && !f.endsWith('_test.go'))
    const cover: 'all' | string[] | undefined = !this.coverage ? undefined : covered ? (covered.length ? covered : undefined) : 'all'
    const packages = await this.listPackages(io)
    if (!packages) return { status: 'error', problems: [], scope: [], error: 'go list failed; cannot tell which packages a change affects' }
    let targets = ['./...']
    let dirs: string[] | undefined
    if (change && this.mode === 'related') {
      dirs = affectedDirs(packages, change)
      if (!dirs.length) return { status: 'ok', problems: [], passed: [], scope: [] }
      targets = dirs.map(target)
    }
    const m = await this.runTests(targets, [], io, cover)
    if (m.status !== 'ok') return m
    const measured = await this.withPendingFiles(m, io, change)
    if (!change || !dirs || measured.scope === 'all') return measured
    // Every package asked for is measured, even one that now reports no test (a build tag hid them all).
    const labels = packages.filter(p => dirs.includes(p.dir)).map(p => p.label)
    const scope = [...new Set([...measured.scope, ...labels])]
    const suspect = labels.filter(label => this.declaredButNotRun(label, measured, change))
    return { ...measured, scope, ...(suspect.length ? { suspect } : {}) }
  }

  /** Scope entries are packages: a change reaches their tests only through Go files (a fixture selects no package). */
  inImportGraph(): boolean {
    return true
  }

  /**
   * Go serves the accepted content of changed `.go` files through `go test
   * -overlay` (see {@link measureAccepted}). Not with the coverage mode: it
   * compares each changed file's coverage with the accepted one, measured
   * before the write.
   */
  servable(change: Change): boolean {
    return !this.coverage && !!change.before && change.files.every(f => f.endsWith('.go'))
  }

  /**
   * The accepted result of `files` (packages that fail after a write, or
   * whose declared tests no longer run): `go test -overlay` maps each path
   * of the write to the bytes it held before (a created file to none), so
   * the compiler builds the accepted content while the workspace keeps the
   * write; vet is off there as in every run (see {@link GoTestCheck}).
   */
  async measureAccepted(files: string[], change: Change, io: CheckIO): Promise<Measurement | undefined> {
    if (!change.before || !this.servable(change)) return undefined
    const packages = files.map(label => this._packages.find(p => p.label === label)).filter((p): p is GoPackage => !!p)
    if (!packages.length) return { status: 'ok', problems: [], passed: [], scope: files }
    const leaveOut = this.overlayFor(packages)
    const m = await this.runTests(packages.map(p => target(p.dir)), [], io, undefined, leaveOut, change.before)
    if (m.status !== 'ok') return m
    // A test file left out because it never built is pending in the accepted content too (not compiled there).
    const existed = (file: string) => change.before!.get(join(this.root, file)) !== null
    const pending = leaveOut.filter(existed).map(f => failingTest(this.name, `${f}${FILE_LEVEL}`, f, undefined,
      'test file does not build yet (left out of the run)'))
    return { ...m, problems: [...m.problems, ...pending], scope: [...new Set([...(m.scope === 'all' ? [] : m.scope), ...files, ...pending.map(p => p.file)])] }
  }

  /** A Go test is declared `func TestX(t *testing.T)` in one of its package's `_test.go` files (a subtest: its quoted name). */
  testSource(test: { key: string; file: string }, change: Change): TestSource {
    const dir = this._packages.find(p => p.label === test.file)?.dir ?? test.file
    const files = new Set([...this.testFilesIn(dir), ...change.files.filter(f => f.endsWith('_test.go') && (dirname(f) || '.') === dir)])
    const [top, ...sub] = testName(test).split('/')
    const declaration = sub.length
      ? new RegExp(`"${escapeRegExp(sub.at(-1)!).replace(/_/g, '[ _]')}"`)
      : new RegExp(`^func\\s+${escapeRegExp(top!)}\\s*\\(`, 'm')
    return { files: [...files], declaration }
  }

  /** Workspace-relative `_test.go` files on disk in a package directory. */
  private testFilesIn(dir: string): string[] {
    try {
      return readdirSync(join(this.root, dir)).filter(f => f.endsWith('_test.go')).map(f => (dir === '.' ? f : `${dir}/${f}`))
    } catch {
      // The directory is gone (a write deleted the package).
      return []
    }
  }

  /**
   * Whether a package declares a test (`func TestX(t *testing.T)`) that the
   * run reported neither passing nor failing: left out of the build (a build
   * tag, a `TestMain` that does not run them), removed by the write, or — in
   * a test file the write touched — skipped. Declared: in the accepted
   * content of the test files the write touched, and in the other test files
   * without a build constraint (one that was there before hides its tests in
   * both states). A skip in a file the write did not touch is taken as the
   * test's own condition (`testing.Short()`, one CPU), not the write's.
   */
  private declaredButNotRun(label: string, m: Measurement, change: Change): boolean {
    const dir = this._packages.find(p => p.label === label)?.dir
    if (dir === undefined) return false
    const touched = new Map(change.files.map((f, i) => [f, change.paths[i]!]))
    const declared = new Map<string, boolean>()
    const files = new Set([...this.testFilesIn(dir), ...[...touched.keys()].filter(f => f.endsWith('_test.go') && (dirname(f) || '.') === dir)])
    for (const file of files) {
      const path = touched.get(file)
      const before = path === undefined ? undefined : change.before?.get(path)
      let text: string
      try {
        text = before !== undefined ? (before?.toString('utf8') ?? '') : readFileSync(join(this.root, file), 'utf8')
      } catch {
        // Deleted and not known before: nothing to compare.
        continue
      }
      if (BUILD_CONSTRAINT.test(text)) continue
      for (const match of text.matchAll(TEST_FUNC)) declared.set(match[1]!, (declared.get(match[1]!) ?? false) || path !== undefined)
    }
    const top = (t: { key: string; file: string }) => testName(t).split('/')[0]!
    const ran = new Set([...(m.passed ?? []), ...m.problems].filter(t => t.file === label).map(top))
    const skipped = new Set((m.skipped ?? []).filter(t => t.file === label).map(top))
    return [...declared].some(([name, inTouched]) => !ran.has(name) && (inTouched || !skipped.has(name)))
  }

  /** The accepted state advanced: every test file of a package whose tests built (minus pending ones) compiled. */
  advance(m: Measurement): void {
    const failed = new Set(m.problems.filter(p => p.key.endsWith(FILE_LEVEL)).map(p => p.key.slice(0, -FILE_LEVEL.length)))
    const measured = m.scope === 'all' ? undefined : new Set(m.scope)
    for (const p of this._packages) {
      if ((measured && !measured.has(p.label)) || failed.has(p.label)) continue
      for (const f of p.testFiles) if (!failed.has(f)) this._compiled.add(f)
    }
  }

  /** Each package's failing tests re-run alone (`-run`); a test that hit the binary's `-timeout`, with a longer one. */
  async confirm(problems: Problem[], io: CheckIO): Promise<Confirmation | undefined> {
    return this.rerunAlone(problems, io)
  }

  /** The same re-runs on the accepted content (`-overlay`), as {@link measureAccepted} builds it. */
  async confirmAccepted(problems: Problem[], change: Change, io: CheckIO): Promise<Confirmation | undefined> {
    if (!change.before || !this.servable(change)) return undefined
    return this.rerunAlone(problems, io, change.before)
  }

  private async rerunAlone(problems: Problem[], io: CheckIO, accepted?: ReadonlyMap<string, Buffer | null>): Promise<Confirmation | undefined> {
    const byPkg = new Map<string, Problem[]>()
    for (const p of problems) byPkg.set(p.file, [...(byPkg.get(p.file) ?? []), p])
    const still: Problem[] = []
    const slow: SlowTest[] = []
    for (const [label, group] of byPkg) {
      const pkg = this._packages.find(p => p.label === label)
      if (!pkg) {
        // Not a package (a pending test file): nothing to re-run alone.
        still.push(...group)
        continue
      }
      const tops = [...new Set(group.map(p => p.key.slice(p.key.indexOf('::') + 2).split('/')[0]!))]
      const whole = group.some(p => p.key.endsWith(FILE_LEVEL))
      // A test binary that hit `-timeout`: again with a longer one (the last `-timeout` given wins).
      const limit = Math.max(0, ...group.map(p => p.timeout?.limitMs ?? 0))
      const extra = [...(whole ? [] : ['-run', `^(${tops.join('|')})$`]), ...(limit ? [`-timeout=${longerLimit(limit)}ms`] : [])]
      const m = await this.runTests([target(pkg.dir)], extra, io, undefined, this.overlayFor([pkg]), accepted)
      if (m.status !== 'ok') return undefined
      const judged = rerunResult(group, m)
      still.push(...judged.still)
      slow.push(...judged.slow ?? [])
    }
    return { still, ...(slow.length ? { slow } : {}) }
  }

  /**
   * Packages whose tests did not build because of test files that never
   * compiled in the accepted state: run them again without those files, and
   * report each such file as its own problem.
   */
  private async withPendingFiles(m: GoMeasurement, io: CheckIO, change?: Change): Promise<Measurement> {
    const pending = new Map<GoPackage, Map<string, GoBuildError[]>>()
    // Pending: written by this change, or already left out before. A test file the change did not touch
    // that no longer builds was broken by it (or already was: its accepted state says which).
    const touched = new Set(change?.files ?? [])
    const mayBePending = (file: string) => !this._compiled.has(file) && (!change || touched.has(file) || this._pending.has(file))
    for (const [importPath, errors] of m.buildFailed) {
      const pkg = this._packages.find(p => p.importPath === importPath)
      if (!pkg) continue
      for (const e of errors) {
        if (!pkg.testFiles.includes(e.file) || !mayBePending(e.file)) continue
        const files = pending.get(pkg) ?? new Map<string, GoBuildError[]>()
        files.set(e.file, [...(files.get(e.file) ?? []), e])
        pending.set(pkg, files)
      }
    }
    let measurement: Measurement = m
    if (pending.size) {
      for (const files of pending.values()) for (const f of files.keys()) this._pending.add(f)
      const again = await this.runTests([...pending.keys()].map(p => target(p.dir)), [], io, undefined, this.overlayFor([...pending.keys()]))
      if (again.status !== 'ok') return again
      const rerun = new Set(again.scope === 'all' ? [] : again.scope)
      for (const p of pending.keys()) rerun.add(p.label)
      const problems = [...m.problems.filter(p => !rerun.has(p.file)), ...again.problems]
      for (const files of pending.values()) {
        for (const [file, errors] of files) problems.push(failingTest(this.name, `${file}${FILE_LEVEL}`, file, errors[0]!.line,
          `test file does not build yet (left out of the run): ${describeBuildErrors(errors)}`))
      }
      measurement = {
        status: 'ok',
        problems,
        passed: [...(m.passed ?? []).filter(p => !rerun.has(p.file)), ...(again.passed ?? [])],
        skipped: [...(m.skipped ?? []).filter(p => !rerun.has(p.file)), ...(again.skipped ?? [])],
        scope: m.scope === 'all' ? 'all' : [...new Set([...m.scope, ...rerun])],
      }
    }
    // A package measured again also settles its test files that were pending before.
    if (measurement.scope === 'all') return measurement
    const labels = new Set(measurement.scope)
    const files = this._packages.filter(p => labels.has(p.label)).flatMap(p => p.testFiles).filter(f => this._pending.has(f))
    return { ...measurement, scope: [...new Set([...measurement.scope, ...files])] }
  }

  /** An overlay that leaves out the given packages' test files that never compiled in the accepted state. */
  private overlayFor(packages: readonly GoPackage[]): string[] {
    return packages.flatMap(p => p.testFiles).filter(f => this._pending.has(f) && !this._compiled.has(f))
  }

  /** `accepted`: absolute path → the bytes go test builds instead of the file on disk (`null`: no such file). */
  private async runTests(targets: string[], extra: string[], io: CheckIO, cover?: 'all' | string[], leaveOut: string[] = [],
    accepted?: ReadonlyMap<string, Buffer | null>): Promise<GoMeasurement> {
    const tmp = cover || leaveOut.length || accepted?.size ? mkdtempSync(join(tmpdir(), 'dsh-gotest-')) : undefined
    try {
      const profile = tmp && cover ? join(tmp, 'cover.out') : undefined
      let overlay: string | undefined
      if (tmp && (leaveOut.length || accepted?.size)) {
        // An empty replacement path: the file does not exist for this build.
        const replace: Record<string, string> = Object.fromEntries(leaveOut.map(f => [join(this.root, f), '']))
        let n = 0
        for (const [path, bytes] of accepted ?? []) {
          if (bytes === null) replace[path] = ''
          else {
            const copy = join(tmp, `accepted-${n++}-${basename(path)}`)
            writeFileSync(copy, bytes)
            replace[path] = copy
          }
        }
        overlay = join(tmp, 'overlay.json')
        writeFileSync(overlay, JSON.stringify({ Replace: replace }))
      }
      const argv = ['go', 'test', '-json', ...(overlay ? [`-overlay=${overlay}`] : []), ...(profile ? [`-coverprofile=${profile}`] : []),
        ...this.extraArgs, '-vet=off', ...extra, ...targets]
      const r = await runRecorded(this.name, argv, this.root, io)
      if (r.outcome === 'timeout' || r.outcome === 'error') {
        if (cover) this._coverage = { status: 'error', error: 'coverage: go test did not finish' }
        return { status: r.outcome === 'timeout' ? 'timeout' : 'error', problems: [], scope: [], error: whyNotJudged('go test', r, io.timeoutMs),
          buildFailed: new Map() }
      }
      const labelOf = new Map(this._packages.map(p => [p.importPath, p.label]))
      if (cover && profile) this._coverage = readCoverProfile(profile, new Map(this._packages.map(p => [p.importPath, p.dir])), cover)
      const run = readGoTestRun(this.name, r.stdout, r.stderr, pkg => labelOf.get(pkg) ?? pkg)
      return { ...run.measurement, buildFailed: run.buildFailed }
    } finally {
      if (tmp) rmSync(tmp, { recursive: true, force: true })
    }
  }

  private async listPackages(io: CheckIO): Promise<GoPackage[] | undefined> {
    const r = await runRecorded(this.name, ['go', 'list', '-e', '-f', LIST_FORMAT, './...'], this.root, io)
    if (r.exitCode !== 0) return undefined
    this._packages = r.stdout.split('\n').filter(Boolean).map(line => {
      const [importPath, abs, deps, tests] = line.split('\t')
      const dir = toPosixRelative(this.root, abs!) || '.'
      return {
        importPath: importPath!,
        dir,
        label: dir === '.' ? importPath! : dir,
        deps: new Set((deps ?? '').split(' ').filter(Boolean)),
        testFiles: (tests ?? '').split(' ').filter(Boolean).map(f => (dir === '.' ? f : `${dir}/${f}`)),
      }
    })
    return this._packages
  }
}

/** A `//go:build` (or older `// +build`) line: the file is built only under some condition. */
const BUILD_CONSTRAINT = /^\/\/(?:go:build|\s*\+build)\s/m
/** `func TestX(t *testing.T)` at the start of a line (not `TestMain(m *testing.M)`). */
const TEST_FUNC = /^func\s+(Test\w*)\s*\(\s*\w*\s+\*testing\.T\s*\)/gm

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

interface GoMeasurement extends Measurement {
  buildFailed: Map<string, GoBuildError[]>
}

/** `./calc`, or `.` for the module root. */
function target(dir: string): string {
  return dir === '.' ? '.' : `./${dir}`
}

/**
 * Directories of the packages a change can affect: the changed files'
 * packages and every package whose code or tests reach them (test imports
 * followed transitively too).
 */
function affectedDirs(packages: readonly GoPackage[], change: Change): string[] {
  const changedDirs = new Set(change.files.filter(f => f.endsWith('.go')).map(f => dirname(f) || '.'))
  const hit = new Set(packages.filter(p => changedDirs.has(p.dir)).map(p => p.importPath))
  for (let grew = true; grew;) {
    grew = false
    for (const p of packages) {
      if (hit.has(p.importPath)) continue
      for (const d of p.deps) {
        if (hit.has(d)) {
          hit.add(p.importPath)
          grew = true
          break
        }
      }
    }
  }
  return packages.filter(p => hit.has(p.importPath)).map(p => p.dir)
}

/** Per-file coverage of a cover profile, workspace-relative (`dirOf`: import path → package directory). */
function readCoverProfile(profile: string, dirOf: ReadonlyMap<string, string>, scope: 'all' | string[]): CoverageReading {
  let text: string
  try {
    text = readFileSync(profile, 'utf8')
  } catch {
    // No profile: every package failed to build, or go test crashed.
    return { status: 'error', error: 'coverage: go test wrote no cover profile' }
  }
  const files = parseCoverProfile(text, goFile => {
    const dir = dirOf.get(dirname(goFile))
    return dir === undefined ? undefined : dir === '.' ? basename(goFile) : `${dir}/${basename(goFile)}`
  })
  return { status: 'ok', files: scope === 'all' ? files : Object.fromEntries(Object.entries(files).filter(([f]) => scope.includes(f))), scope }
}

/**
 * Per-file statement coverage from a Go cover profile
 * (`mode: set` then `<importpath>/file.go:l.c,l.c <statements> <count>`).
 */
export function parseCoverProfile(text: string, relativeOf: (goFile: string) => string | undefined): Record<string, number> {
  const totals = new Map<string, { all: number; hit: number }>()
  // The same block can be listed more than once (several test binaries): count it once, covered if any run covered it.
  const blocks = new Map<string, { file: string; statements: number; hit: boolean }>()
  for (const line of text.split('\n')) {
    const m = /^(.+\.go):(\d+\.\d+,\d+\.\d+) (\d+) (\d+)$/.exec(line.trim())
    if (!m) continue
    const file = relativeOf(m[1]!)
    if (!file) continue
    const id = `${file}:${m[2]}`
    const had = blocks.get(id)
    blocks.set(id, { file, statements: Number(m[3]), hit: (had?.hit ?? false) || Number(m[4]) > 0 })
  }
  for (const b of blocks.values()) {
    const t = totals.get(b.file) ?? { all: 0, hit: 0 }
    t.all += b.statements
    if (b.hit) t.hit += b.statements
    totals.set(b.file, t)
  }
  const files: Record<string, number> = {}
  for (const [file, t] of totals) files[file] = t.all ? Math.round((t.hit / t.all) * 10_000) / 100 : 100
  return files
}
