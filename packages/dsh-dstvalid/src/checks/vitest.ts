import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { toPosixRelative } from 'dsh-common'
import { FILE_LEVEL } from '../accepted.ts'
import { confirmAlone } from './rerun.ts'
import { diagnostic, failingTest } from '../problems.ts'
import { checkEnv, runRecorded, whyNotJudged, type RecordedRun } from '../run.ts'
import type { Change, Check, CheckIO, Measurement, Problem } from '../types.ts'
import { parseCoverageSummary, type CoverageReading, type CoverageSource } from './coverage.ts'

/** The parts of vitest's JSON report this check reads (the warm runner produces the same shape, and Jest's `--json` report has it too). */
export interface VitestReport {
  testResults: {
    name: string
    /** The vitest project that ran the file (warm runner only). */
    project?: string
    status: string
    message?: string
    assertionResults: {
      ancestorTitles: string[]
      title: string
      fullName: string
      status: string
      failureMessages?: string[]
      location?: { line: number; column: number } | null
    }[]
  }[]
}

/** What `vitest-reporter.mjs` writes: every test module with its project, every test, the unhandled errors. */
interface DshVitestReport {
  projects: string[]
  modules: {
    project: string
    /** Absolute path of the test file. */
    file: string
    /** `pass`, `fail`, `skip`, `none` (never ran). */
    state: string
    error: string
    tests: { titles: string[]; name: string; state: string; error: string; line?: number }[]
  }[]
  errors: string[]
}

/** The reporter the workspace's vitest loads (plain JavaScript, any vitest version). */
const REPORTER = fileURLToPath(new URL('./vitest-reporter.mjs', import.meta.url))

export interface VitestCheckOptions {
  root: string
  /** How to start the workspace's own vitest, e.g. `[node, <ws>/node_modules/vitest/vitest.mjs]`. */
  command: string[]
  /** `related`: only tests whose import graph reaches the changed files; `all`: the whole suite every time. */
  mode: 'related' | 'all'
  /** Appended to every vitest invocation. */
  extraArgs?: string[]
  /**
   * Measure v8 line coverage while testing (the coverage mode; needs
   * `@vitest/coverage-v8` in the workspace): the whole workspace at the
   * baseline, the changed source files after a write. Flaky re-runs never do.
   */
  coverage?: boolean
}

/** Source files whose coverage a change asks about. */
const COVERABLE = /\.(?:[cm]?[jt]sx?|vue|svelte)$/

function firstLine(text: string | undefined): string {
  return (text ?? '').split('\n').map(l => l.trim()).find(Boolean) ?? ''
}

/** Markers of a parse/transform failure in vitest's output (esbuild, oxc/rolldown, Vite, Node). */
const PARSE_FAILURE = /Transform failed|PARSE_ERROR|Parse failure|Failed to parse|SyntaxError|Unexpected token|Expected .{1,80} but found|Unterminated|Unexpected end of/i

/**
 * Parse failures of files the write touched, named in vitest's errors: the
 * write's own breakage, reported even when no test result could be (vitest
 * `related` cannot even build its graph). One diagnostic per touched file.
 */
export function ownParseErrors(check: string, root: string, touched: readonly string[], texts: readonly string[]): Problem[] {
  const problems: Problem[] = []
  for (const file of touched) {
    const abs = join(root, file)
    for (const raw of texts) {
      const text = raw.replace(/\x1b\[[0-9;]*m/g, '')
      if (!PARSE_FAILURE.test(text)) continue
      const lines = text.split('\n')
      // The touched file as the failure's location (`path:3:0: ERROR …`, `╭─[ path:3:1 ]`,
      // `SyntaxError: path: …`), not merely mentioned (a stack frame, the test file that imports it).
      const at = lines.findIndex(l => {
        const named = l.includes(abs) ? abs : l.includes(file) ? file : undefined
        if (!named) return false
        return PARSE_FAILURE.test(l) || /^\s*(?:╭─\[\s*)?$/.test(l.slice(0, l.indexOf(named)))
      })
      if (at < 0) continue
      const where = lines[at]!
      const named = where.includes(abs) ? abs : file
      const [pre = '', post = ''] = where.split(named, 2)
      // `path:3:0`, or Babel's `path: message (3:0)`.
      const line = /^:(\d+)/.exec(post)?.[1] ?? /\((\d+):\d+\)\s*$/.exec(post)?.[1]
      // The message without the path and position, so the same error keys the same wherever it moves.
      const kind = /(\w*Error):?\s*$/.exec(pre.trim())?.[1]
      const detail = `${kind ? `${kind}: ` : ''}${post.replace(/^[\s:\d]*/, '').replace(/\s*\(\d+:\d+\)\s*$/, '')}`.trim()
      // Else the nearest line above that says what failed (oxc: `[PARSE_ERROR] Expected … but found …` above `╭─[ path:3:1 ]`).
      const above = lines.slice(0, at).reverse().map(l => l.trim()).find(l => PARSE_FAILURE.test(l) && !/^(Error: )?Transform failed/.test(l))
      const message = detail && PARSE_FAILURE.test(detail) ? detail : above ?? (firstLine(text) || 'parse error')
      problems.push({ ...diagnostic(check, file, line === undefined ? undefined : Number(line), 'PARSE_ERROR', message), own: true })
      break
    }
  }
  return problems
}

/**
 * Tests through the workspace's own vitest, read through this package's
 * reporter (test modules with their project). A test id is
 * `file > suite > name` (with ` [project]` when the config has several
 * projects); a test file that fails as a whole (it no longer loads) is one
 * problem keyed by the file. A project that cannot start here (a missing
 * environment, pool, browser or runtime) is found once, reported, and left
 * out of every later run: it is that project's pre-existing problem, and the
 * other projects are judged as usual.
 */
export class VitestCheck implements Check, CoverageSource {
  readonly name = 'test'
  readonly verb = 'testing'
  readonly coverageUnit = 'lines'
  /** Test name for `-t` and project for `--project`, by test id. */
  private readonly _names = new Map<string, { full: string; project: string }>()
  private _coverage?: CoverageReading
  /** Project names of the config, once a run reported them. */
  private _projects: string[] = []
  /** Projects that cannot start here, with why. */
  private readonly _broken = new Map<string, string>()
  private _probed = false

  constructor(private readonly options: VitestCheckOptions) {}

  /** Related tests: the accepted state is measured per write (see {@link Check.lazyBaseline}). */
  get lazyBaseline(): boolean {
    return this.options.mode === 'related'
  }

  /** Projects left out because they cannot start here, with why (for status and tests). */
  get brokenProjects(): ReadonlyMap<string, string> {
    return this._broken
  }

  async measure(change: Change | undefined, io: CheckIO): Promise<Measurement> {
    const args = change && this.options.mode === 'related' ? ['related', ...change.files, '--run'] : ['run']
    this._coverage = undefined
    // Nothing can import a file that does not exist yet (the accepted state of a file a write creates).
    if (change && this.options.mode === 'related' && !change.paths.some(p => existsSync(p))) return { status: 'ok', problems: [], passed: [], scope: [] }
    const touched = change?.files ?? []
    if (!this.options.coverage) return this.runReport(args, io, undefined, touched)
    const include = change?.files.filter(f => COVERABLE.test(f))
    if (include && !include.length) return this.runReport(args, io, undefined, touched)
    return this.runReport(args, io, include ?? 'all', touched)
  }

  lastCoverage(): CoverageReading | undefined {
    return this._coverage
  }

  confirm(problems: Problem[], io: CheckIO): Promise<Problem[] | undefined> {
    return confirmAlone(problems, p => this._names.get(p.key)?.full, ({ file, pattern, group: project }) =>
      this.runReport(['run', file, ...(pattern ? ['-t', pattern] : []), ...(project ? ['--project', project] : [])], io, undefined, [], false),
    p => this._names.get(p.key)?.project ?? '')
  }

  /** `--project` for every project that can start, once some cannot (none otherwise: vitest runs them all). */
  private projectArgs(args: readonly string[]): string[] {
    if (!this._broken.size || args.includes('--project')) return []
    return this._projects.filter(p => !this._broken.has(p)).flatMap(p => ['--project', p])
  }

  /** One run of the workspace's vitest with this package's reporter; the report is undefined when vitest wrote none. */
  private async runOnce(args: string[], io: CheckIO, coverage?: 'all' | string[]): Promise<{ run: RecordedRun; report?: DshVitestReport }> {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-vitest-'))
    const out = join(dir, 'report.json')
    const coverageDir = join(dir, 'coverage')
    const coverageArgs = coverage ? [
      '--coverage.enabled=true', '--coverage.provider=v8', '--coverage.reporter=json-summary', `--coverage.reportsDirectory=${coverageDir}`,
      ...(coverage === 'all' ? [] : coverage.map(f => `--coverage.include=${f}`)),
    ] : []
    try {
      const run = await runRecorded(this.name, [
        ...this.options.command, ...args, ...this.projectArgs(args),
        `--reporter=${REPORTER}`, '--passWithNoTests', '--includeTaskLocation', '--no-cache', ...coverageArgs, ...(this.options.extraArgs ?? []),
      ], this.options.root, io, { env: checkEnv({ DSH_VITEST_REPORT: out }) })
      if (coverage) this._coverage = this.readCoverage(join(coverageDir, 'coverage-summary.json'), coverage)
      try {
        return { run, report: JSON.parse(readFileSync(out, 'utf8')) as DshVitestReport }
      } catch {
        // No report: vitest crashed, timed out or never started.
        return { run }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }

  /**
   * One vitest run read through the reporter; `coverage`: also read v8
   * coverage of these files (or of everything). `touched`: files the judged
   * write changed (their own parse errors are looked for). The first run
   * whose projects did not all start finds the ones that cannot, and runs
   * again without them.
   */
  private async runReport(args: string[], io: CheckIO, coverage?: 'all' | string[], touched: readonly string[] = [], probe = true): Promise<Measurement> {
    let { run, report } = await this.runOnce(args, io, coverage)
    // The union of every run's projects: a run with --project filters reports only those.
    for (const p of report?.projects ?? []) if (!this._projects.includes(p)) this._projects.push(p)
    const known = this._broken.size
    // The write's own parse error makes every project fail: not a project that cannot start.
    const own = report ? ownParseErrors(this.name, this.options.root, touched, report.errors) : []
    if (probe && report && !own.length && this.findBroken(report)) await this.probeProjects(args, io, report)
    if (this._broken.size > known) {
      for (const [project, why] of [...this._broken].slice(known)) {
        io.notice('warn', `vitest project "${project}" cannot start here (${why}); its tests are left out — a pre-existing problem of that project`)
      }
      if (this._broken.size && this._projects.every(p => this._broken.has(p))) {
        return { status: 'error', problems: [], scope: [], error: `vitest: no project can start here (${[...this._broken].map(([p, why]) => `${p}: ${why}`).join('; ')})` }
      }
      if (!report?.modules.some(m => !this._broken.has(m.project))) ({ run, report } = await this.runOnce(args, io, coverage))
    }
    if (!report) {
      const own = ownParseErrors(this.name, this.options.root, touched, [run.output])
      if (own.length) return { status: 'ok', problems: own, passed: [], scope: [...touched] }
      return { status: run.timedOut ? 'timeout' : 'error', problems: [], scope: [], error: whyNotJudged('vitest', run, io.timeoutMs) }
    }
    if (!report.modules.length && report.errors.length && run.exitCode !== 0) {
      const own = ownParseErrors(this.name, this.options.root, touched, report.errors)
      if (own.length) return { status: 'ok', problems: own, passed: [], scope: [...touched] }
      return { status: 'error', problems: [], scope: [], error: `vitest failed before running tests: ${firstLine(report.errors[0])}` }
    }
    return this.parse(report, touched)
  }

  /**
   * Whether a multi-project run shows a project that did not start. Projects
   * whose every module never ran while others did are marked here; a run
   * where nothing ran needs each project tried alone (true).
   */
  private findBroken(report: DshVitestReport): boolean {
    if (this._probed || report.projects.length < 2) return false
    const ran = (project: string) => report.modules.some(m => m.project === project && (m.tests.length > 0 || m.state === 'pass' || m.state === 'fail'))
    const present = new Set(report.modules.map(m => m.project))
    if (!report.errors.length) return false
    if (!report.modules.length) return true
    this._probed = true
    for (const project of present) {
      if (!ran(project)) this._broken.set(project, firstLine(report.errors.find(e => e.includes(project)) ?? report.errors[0]))
    }
    return false
  }

  /** Try each project alone (once per check): the ones that start nothing and report errors cannot start here. */
  private async probeProjects(args: string[], io: CheckIO, report: DshVitestReport) {
    this._probed = true
    for (const project of report.projects) {
      const alone = await this.runOnce([...args, '--project', project], io)
      const ran = alone.report?.modules.some(m => m.tests.length > 0 || m.state === 'pass' || m.state === 'fail')
      if (ran || (alone.run.exitCode === 0 && !alone.report?.errors.length)) continue
      this._broken.set(project, firstLine(alone.report?.errors[0] ?? alone.run.output.trim().split('\n').at(-1)))
    }
  }

  private readCoverage(file: string, scope: 'all' | string[]): CoverageReading {
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch {
      // vitest wrote no coverage report (it failed to start coverage, or crashed).
      return { status: 'error', error: 'coverage: vitest wrote no coverage report' }
    }
    try {
      const files = parseCoverageSummary(text, abs => toPosixRelative(this.options.root, abs))
      return { status: 'ok', files: scope === 'all' ? files : Object.fromEntries(Object.entries(files).filter(([f]) => scope.includes(f))), scope }
    } catch (error) {
      return { status: 'error', error: `coverage: unreadable coverage report (${(error as Error).message})` }
    }
  }

  private parse(report: DshVitestReport, touched: readonly string[]): Measurement {
    const problems: Problem[] = []
    const passed: { key: string; file: string }[] = []
    const scope = new Set<string>(touched)
    const multi = this._projects.length > 1
    const loadErrors: string[] = [...report.errors]
    // One order for the message, whatever order the workers finished in.
    const order = (m: DshVitestReport['modules'][number]) => `${m.file}\u0000${this._projects.indexOf(m.project)}`
    for (const mod of [...report.modules].sort((a, b) => order(a).localeCompare(order(b)))) {
      if (this._broken.has(mod.project)) continue
      const file = toPosixRelative(this.options.root, mod.file)
      const tag = multi && mod.project ? ` [${mod.project}]` : ''
      scope.add(file)
      let failedTests = 0
      for (const t of mod.tests) {
        const path = [...t.titles, t.name]
        const key = `${[file, ...path].join(' > ')}${tag}`
        this._names.set(key, { full: path.join(' '), project: multi ? mod.project : '' })
        if (t.state === 'pass') passed.push({ key, file })
        else if (t.state === 'fail') {
          failedTests++
          const why = firstLine(t.error)
          problems.push(failingTest(this.name, key, file, t.line, `${path.join(' > ')}${tag}${why ? ` — ${why}` : ''}`))
        }
      }
      if (mod.state === 'fail' && !failedTests) {
        loadErrors.push(mod.error)
        problems.push(failingTest(this.name, `${file}${tag}${FILE_LEVEL}`, file, undefined, `test file failed${tag}: ${firstLine(mod.error) || 'no tests ran'}`))
      }
    }
    problems.push(...ownParseErrors(this.name, this.options.root, touched, loadErrors))
    return { status: 'ok', problems, passed, scope: [...scope] }
  }
}

/**
 * A measurement from a vitest JSON report (or the warm runner's report of
 * the same shape). A test id is `file > suite > name`; a test file that fails
 * as a whole (it no longer loads) is one problem keyed by the file. `names`
 * learns the full names (for `-t`) by test id.
 */
export function readVitestReport(root: string, report: VitestReport, names: Map<string, string>, check = 'test', touched: readonly string[] = []): Measurement {
  const problems: Problem[] = []
  const passed: { key: string; file: string }[] = []
  const scope: string[] = [...touched]
  const loadErrors: string[] = []
  for (const suite of report.testResults) {
    const file = toPosixRelative(root, suite.name)
    scope.push(file)
    let failedTests = 0
    for (const t of suite.assertionResults) {
      const key = [file, ...t.ancestorTitles, t.title].join(' > ')
      names.set(key, t.fullName)
      if (t.status === 'passed') passed.push({ key, file })
      else if (t.status === 'failed') {
        failedTests++
        const why = firstLine(t.failureMessages?.[0])
        problems.push(failingTest(check, key, file, t.location?.line, `${[...t.ancestorTitles, t.title].join(' > ')}${why ? ` — ${why}` : ''}`))
      }
    }
    if (suite.status === 'failed' && !failedTests) {
      problems.push(failingTest(check, `${file}${FILE_LEVEL}`, file, undefined, `test file failed: ${firstLine(suite.message) || 'no tests ran'}`))
      loadErrors.push(suite.message ?? '')
    }
  }
  // The write's own parse error, named in the load failure of a test that imports the file.
  problems.push(...ownParseErrors(check, root, touched, loadErrors))
  return { status: 'ok', problems, passed, scope }
}
