import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { toPosixRelative } from 'dsh-common'
import { FILE_LEVEL } from '../accepted.ts'
import { diagnostic, failingTest } from '../problems.ts'
import { runRecorded, whyNotJudged } from '../run.ts'
import type { Change, Check, CheckIO, Measurement, Problem } from '../types.ts'
import { parseCoverProfile, type CoverageReading, type CoverageSource } from './coverage.ts'

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

  constructor(protected readonly root: string) {}

  async measure(_change: Change | undefined, io: CheckIO): Promise<Measurement> {
    const r = await runRecorded(this.name, this.argv, this.root, io)
    if (r.outcome === 'timeout' || r.outcome === 'error') {
      return { status: r.outcome === 'timeout' ? 'timeout' : 'error', problems: [], scope: 'all', error: whyNotJudged(this.argv.slice(0, 2).join(' '), r, io.timeoutMs) }
    }
    const problems = parseGoDiagnostics(this.name, r.output)
    if (r.exitCode !== 0 && !problems.length) {
      problems.push(diagnostic(this.name, '', undefined, 'exit', `${this.argv.join(' ')} exited ${r.exitCode}: ${r.output.trim().split('\n').slice(-1)[0] ?? ''}`))
    }
    return { status: 'ok', problems, scope: 'all' }
  }
}

export class GoBuildCheck extends GoDiagnosticsCheck {
  readonly name = 'compile'
  readonly verb = 'compiling'
  protected readonly argv = ['go', 'build', './...']
}

export class GoVetCheck extends GoDiagnosticsCheck {
  readonly name = 'vet'
  readonly verb = 'vetting'
  protected readonly argv = ['go', 'vet', './...']
}

interface GoTestEvent {
  Action: string
  Package?: string
  Test?: string
  Output?: string
}

interface GoPackage {
  importPath: string
  /** Workspace-relative directory, `.` for the module root. */
  dir: string
  deps: Set<string>
}

/**
 * `go test -json`: on a change, only the packages of the changed files and
 * the packages that import them (directly, transitively, or from tests).
 * A test id is `<pkg dir>::<TestName>`; a package that fails without a
 * failing test (it no longer builds) is one problem keyed by the package.
 */
export class GoTestCheck implements Check, CoverageSource {
  readonly name = 'test'
  readonly verb = 'testing'
  readonly coverageUnit = 'statements'
  private _coverage?: CoverageReading

  /** `coverage`: also write a cover profile (the coverage mode) on `measure` runs. */
  constructor(private readonly root: string, private readonly mode: 'related' | 'all', private readonly extraArgs: string[] = [], private readonly coverage = false) {}

  lastCoverage(): CoverageReading | undefined {
    return this._coverage
  }

  async measure(change: Change | undefined, io: CheckIO): Promise<Measurement> {
    this._coverage = undefined
    const covered = change?.files.filter(f => f.endsWith('.go') && !f.endsWith('_test.go'))
    const cover: 'all' | string[] | undefined = !this.coverage ? undefined : covered ? (covered.length ? covered : undefined) : 'all'
    if (change && this.mode === 'related') {
      const affected = await this.affectedPackages(change, io)
      if (!affected) return { status: 'error', problems: [], scope: [], error: 'go list failed; cannot tell which packages a change affects' }
      if (!affected.dirs.length) return { status: 'ok', problems: [], passed: [], scope: [] }
      return this.runTests(affected.dirs.map(d => (d === '.' ? '.' : `./${d}`)), [], io, affected.packages, cover)
    }
    return this.runTests(['./...'], [], io, undefined, cover)
  }

  async confirm(problems: Problem[], io: CheckIO): Promise<Problem[] | undefined> {
    const byPkg = new Map<string, Problem[]>()
    for (const p of problems) byPkg.set(p.file, [...(byPkg.get(p.file) ?? []), p])
    const still: Problem[] = []
    for (const [dir, group] of byPkg) {
      const tops = [...new Set(group.map(p => p.key.slice(p.key.indexOf('::') + 2).split('/')[0]!))]
      const whole = group.some(p => p.key.endsWith(FILE_LEVEL))
      const m = await this.runTests([dir === '.' ? '.' : `./${dir}`], whole ? [] : ['-run', `^(${tops.join('|')})$`], io)
      if (m.status !== 'ok') return undefined
      const failing = new Set(m.problems.map(p => p.key))
      still.push(...group.filter(p => failing.has(p.key)))
    }
    return still
  }

  private async runTests(targets: string[], extra: string[], io: CheckIO, known?: GoPackage[], cover?: 'all' | string[]): Promise<Measurement> {
    const tmp = cover ? mkdtempSync(join(tmpdir(), 'dsh-gocover-')) : undefined
    try {
      const profile = tmp && join(tmp, 'cover.out')
      const argv = ['go', 'test', '-json', '-count=1', ...(profile ? [`-coverprofile=${profile}`] : []), ...this.extraArgs, ...extra, ...targets]
      const r = await runRecorded(this.name, argv, this.root, io)
      if (r.outcome === 'timeout' || r.outcome === 'error') {
        if (cover) this._coverage = { status: 'error', error: 'coverage: go test did not finish' }
        return { status: r.outcome === 'timeout' ? 'timeout' : 'error', problems: [], scope: [], error: whyNotJudged('go test', r, io.timeoutMs) }
      }
      const packages = known ?? await this.listPackages(io)
      const dirOf = new Map(packages?.map(p => [p.importPath, p.dir]) ?? [])
      if (cover && profile) this._coverage = readCoverProfile(profile, dirOf, cover)
      return parseGoTestJson(this.name, r.stdout, pkg => dirOf.get(pkg) ?? pkg, r.stderr)
    } finally {
      if (tmp) rmSync(tmp, { recursive: true, force: true })
    }
  }

  private async listPackages(io: CheckIO): Promise<GoPackage[] | undefined> {
    const r = await runRecorded(this.name, ['go', 'list', '-e', '-f', '{{.ImportPath}}\t{{.Dir}}\t{{join .Deps " "}} {{join .TestImports " "}} {{join .XTestImports " "}}', './...'], this.root, io)
    if (r.exitCode !== 0) return undefined
    return r.stdout.split('\n').filter(Boolean).map(line => {
      const [importPath, dir, deps] = line.split('\t')
      return { importPath: importPath!, dir: toPosixRelative(this.root, dir!) || '.', deps: new Set((deps ?? '').split(' ').filter(Boolean)) }
    })
  }

  private async affectedPackages(change: Change, io: CheckIO): Promise<{ dirs: string[]; packages: GoPackage[] } | undefined> {
    const packages = await this.listPackages(io)
    if (!packages) return undefined
    const changedDirs = new Set(change.files.filter(f => f.endsWith('.go')).map(f => dirname(f) || '.'))
    const changed = packages.filter(p => changedDirs.has(p.dir)).map(p => p.importPath)
    const hit = new Set(changed)
    for (const p of packages) if (changed.some(c => p.deps.has(c))) hit.add(p.importPath)
    return { dirs: packages.filter(p => hit.has(p.importPath)).map(p => p.dir), packages }
  }
}

/** Parse `go test -json` output; `dirOf` maps an import path to its workspace-relative directory. */
export function parseGoTestJson(check: string, stdout: string, dirOf: (pkg: string) => string, stderr = ''): Measurement {
  const buildError = stderr.split('\n').map(l => l.trim()).find(l => GO_POSITION.test(l))
  const problems: Problem[] = []
  const passed: { key: string; file: string }[] = []
  const scope = new Set<string>()
  const output = new Map<string, string[]>()
  const failedTests = new Set<string>()
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{')) continue
    let e: GoTestEvent
    try {
      e = JSON.parse(line) as GoTestEvent
    } catch {
      // A partial line at the output cap: the rest of the report still counts.
      continue
    }
    if (!e.Package) continue
    const dir = dirOf(e.Package)
    scope.add(dir)
    const id = e.Test ? `${dir}::${e.Test}` : `${dir}${FILE_LEVEL}`
    if (e.Action === 'output' && e.Output) output.set(id, [...(output.get(id) ?? []), e.Output])
    if (e.Action === 'pass' && e.Test) passed.push({ key: id, file: dir })
    if (e.Action === 'fail') {
      if (e.Test) {
        failedTests.add(dir)
        const why = (output.get(id) ?? []).map(l => l.trim()).find(l => /\.go:\d+:/.test(l)) ?? ''
        problems.push(failingTest(check, id, dir, undefined, `${e.Test}${why ? ` — ${why}` : ''}`))
      } else if (!failedTests.has(dir)) {
        const why = (output.get(id) ?? []).map(l => l.trim()).find(l => GO_POSITION.test(l)) ?? buildError ?? 'it does not build or a test binary crashed'
        problems.push(failingTest(check, id, dir, undefined, `package failed: ${why}`))
      }
    }
  }
  return { status: 'ok', problems, passed, scope: [...scope] }
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
