import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { fileStamp, toPosixRelative, type Isolation } from 'dsh-common'
import { FILE_LEVEL } from '../../accepted.ts'
import { confirmAlone, firstLine, ownParseErrors, timeoutOf, type Rerun } from '../runner.ts'
import { diagnostic, failingTest } from '../../problems.ts'
import { checkEnv, runRecorded, whyNotJudged, type RecordedRun } from '../../run.ts'
import { servableByMount, servesAnyByMount, withAcceptedContent } from '../served.ts'
import type { Change, Check, CheckIO, Confirmation, Measurement, Problem } from '../../types.ts'
import type { CoverageReading, CoverageSource } from '../../modes/coverage.ts'
import { scanImports, SCRIPT_GRAPH, testsReaching } from '../js/imports.ts'
import { resolveFromWorkspace } from '../../workspace-modules.ts'
import { listFiles } from '../../message.ts'
import { testsUnchanged } from '../js/comments.ts'
import { DiskHashes, type TestMap } from './test-map.ts'
import { keepCurrentAfterComments, measureByMap, RERUN_ALL, type MapRunner } from './by-map.ts'
import { loadReads, readersOf, type TestReads } from './reads.mjs'
import type { FsReaders } from '../fs-readers.ts'

/** What `reporter.mjs` writes (and the warm runner answers): every test module with its project, every test, the unhandled errors. */
export interface DshVitestReport {
  projects: string[]
  modules: {
    project: string
    /** Absolute path of the test file. */
    file: string
    /** `pass`, `fail`, `skip`, `none` (never ran). */
    state: string
    error: string
    tests: { titles: string[]; name: string; state: string; error: string; line?: number; duration?: number }[]
  }[]
  errors: string[]
}

/** The reporter the workspace's vitest loads (plain JavaScript, any vitest version). */
const REPORTER = fileURLToPath(new URL('./reporter.mjs', import.meta.url))

/** The setup files that record a test file's file-system reads and executed functions (the warm runner's, see server.mjs). */
const RECORDERS = ['./reads-recorder.mjs', './calls-recorder.mjs'].map(f => fileURLToPath(new URL(f, import.meta.url)))
/** The directory of dsh's files that vitest loads (the reporter, the recorders). */
const OWN_DIR = dirname(REPORTER)

/** The config files vitest's CLI looks for in its root, in its order. */
const CONFIG_FILES = ['vitest', 'vite'].flatMap(base => ['ts', 'mts', 'cts', 'js', 'mjs', 'cjs'].map(ext => `${base}.config.${ext}`))

/** A workspace file: vitest 1 to 3 look for it next to the config file, so a config of ours elsewhere would lose it. */
const WORKSPACE_FILE = /^vitest\.(?:workspace|projects)\./

/** Arguments that name another config, workspace or root: the recording config is not put in their place. */
const OWN_CONFIG = /^(?:-c|-r|--config|--workspace|--root|--dir)(?:=|$)/

/** A calls record of the CLI path (see calls-recorder.mjs). */
interface CallsRecord {
  ran: Record<string, string[]>
  worker: string | null
  hooks?: string
  setup?: string[]
}

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
  /** Major version of the workspace's vitest: the CLI options it accepts (undefined: the newest). */
  major?: number
  /** Test files chosen by their source for the file-system reads the CLI does not record (see {@link FsReaders}). */
  fsReaders?: FsReaders
  /**
   * The map of the functions each test file executed (ADR 0021, 0034):
   * recorded from the runs on the disk's content through a config of ours
   * that adds the recorders to the workspace's, and a body-only edit runs
   * only the related test files that executed a changed function.
   */
  testMap?: TestMap
  /** Which workspace-relative files are test files (the `testFilePattern`): with it, a change most of the suite relates to runs the whole suite (see {@link VitestCheck.measure}). */
  testFile?: RegExp
}

/**
 * Over this share of the suite related to a change, `vitest run` is cheaper than `vitest related`: the related
 * run walks every test file's imports first, and its recording of the map costs a fifth or more of each file's
 * run (fp-ts: the related run of all 80 files 1.2× the CPU of a plain whole run, up to 2× its wall time).
 */
const WHOLE_SUITE_SHARE = 3 / 4

/**
 * The options each vitest major's CLI accepts beyond those every version
 * has (`related`, `run`, `--reporter`, `--project`, `-t`, `--passWithNoTests`,
 * `--no-cache`, `--coverage.*`): `--includeTaskLocation` from 3 on (vitest 1
 * and 2 reject it as an unknown option; the reporter turns task locations
 * on from inside for them, see vitest-reporter.mjs).
 */
function vitestVersionArgs(major: number | undefined): string[] {
  return major === undefined || major >= 3 ? ['--includeTaskLocation'] : []
}

/**
 * A `-t` pattern (`^(names)$`, names as the other versions spell them) for
 * this vitest: vitest 1 matches it against names that start with a space
 * (the unnamed file suite's, joined with a space).
 */
function namePattern(pattern: string, major: number | undefined): string {
  return major === 1 ? pattern.replace(/^\^/, '^ ?') : pattern
}

/** Source files whose coverage a change asks about. */
const COVERABLE = /\.(?:[cm]?[jt]sx?|vue|svelte)$/

/** One vitest run as the judge sees it, whoever ran it (the CLI, the warm runner). */
export interface VitestRun {
  /** The run's report; undefined when vitest wrote none (it crashed, timed out, never started). */
  report?: DshVitestReport
  exitCode: number | null
  /** What the runner printed (looked into for the write's own parse error when there is no report). */
  output: string
  /** The measurement when there is no report and no own parse error (a timeout, a crash). */
  failed: () => Measurement
}

/**
 * Runs vitest for the judge: `only` names the projects to run (undefined:
 * every project). Undefined: this runner cannot do the run (the warm
 * runner's caller falls back to the CLI).
 */
export type VitestRunner = (only: readonly string[] | undefined) => Promise<VitestRun | undefined>

/**
 * Judging vitest runs, shared by the CLI check and the warm runner: test ids
 * (`file > suite > name`, with ` [project]` when the config has several
 * projects), a test file that fails as a whole (it no longer loads) as one
 * problem keyed by the file, the write's own parse errors, and the projects
 * that cannot start here. Such a project (a missing environment, pool,
 * browser or runtime) is found once, announced, and left out of every later
 * run: it is that project's pre-existing problem, and the other projects are
 * judged as usual.
 */
export class VitestJudge {
  /** Test name for `-t` and project for `--project`, by test id. */
  readonly names = new Map<string, { full: string; project: string }>()
  /** Project names of the config, once a run reported them. */
  private _projects: string[] = []
  /** Projects that cannot start here, with why. */
  private readonly _broken = new Map<string, string>()
  private _probed = false

  constructor(private readonly root: string, private readonly check = 'test') {}

  /** Projects left out because they cannot start here, with why. */
  get broken(): ReadonlyMap<string, string> {
    return this._broken
  }

  /** The projects a run should be limited to: every project that can start, once some cannot (undefined otherwise: vitest runs them all). */
  get runnable(): string[] | undefined {
    return this._broken.size ? this._projects.filter(p => !this._broken.has(p)) : undefined
  }

  /**
   * One judged run. `touched`: files the judged write changed (their own
   * parse errors are looked for). With `probe`, the first run whose projects
   * did not all start finds the ones that cannot, and runs again without
   * them. Undefined when the runner could not run.
   */
  async judge(run: VitestRunner, io: CheckIO, touched: readonly string[] = [], probe = true): Promise<Measurement | undefined> {
    let r = await run(this.runnable)
    if (!r) return undefined
    // The union of every run's projects: a run limited to some reports only those.
    for (const p of r.report?.projects ?? []) if (!this._projects.includes(p)) this._projects.push(p)
    const known = this._broken.size
    // The write's own parse error makes every project fail: not a project that cannot start.
    const own = r.report ? ownParseErrors(this.check, this.root, touched, r.report.errors) : []
    if (probe && r.report && !own.length && this.findBroken(r.report) && !(await this.probeProjects(run, r.report))) return undefined
    if (this._broken.size > known) {
      for (const [project, why] of [...this._broken].slice(known)) {
        io.notice('warn', `vitest project "${project}" cannot start here (${why}); its tests are left out — a pre-existing problem of that project`)
      }
      if (this._broken.size && this._projects.every(p => this._broken.has(p))) {
        return { status: 'error', problems: [], scope: [],
          error: `vitest: no project can start here (${[...this._broken].map(([p, why]) => `${p}: ${why}`).join('; ')})` }
      }
      if (!r.report?.modules.some(m => !this._broken.has(m.project))) {
        r = await run(this.runnable)
        if (!r) return undefined
      }
    }
    if (!r.report) {
      const own = ownParseErrors(this.check, this.root, touched, [r.output])
      if (own.length) return { status: 'ok', problems: own, passed: [], scope: [...touched] }
      return r.failed()
    }
    if (!r.report.modules.length && r.report.errors.length && r.exitCode !== 0) {
      const own = ownParseErrors(this.check, this.root, touched, r.report.errors)
      if (own.length) return { status: 'ok', problems: own, passed: [], scope: [...touched] }
      return { status: 'error', problems: [], scope: [], error: `vitest failed before running tests: ${firstLine(r.report.errors[0])}` }
    }
    // dsh's own setup files could not be loaded: every test file fails the same before a write and after it, so
    // nothing the write broke would show. Not judged.
    const names = (text: string) => RECORDERS.some(f => text.includes(f))
    const ours = r.report.modules.find(m => names(m.error)) ?? r.report.errors.find(names)
    if (ours !== undefined) {
      const [file, why] = typeof ours === 'string' ? [undefined, ours] : [toPosixRelative(this.root, ours.file), ours.error]
      return { status: 'error', problems: [], scope: [],
        error: `vitest could not load dsh's own setup file${file ? ` in ${file}` : ''} (${firstLine(why)}): the tests were not judged` }
    }
    return this.parse(r.report, touched)
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

  /** Try each project alone (once per judge): the ones that start nothing and report errors cannot start here. False when the runner could not run. */
  private async probeProjects(run: VitestRunner, report: DshVitestReport): Promise<boolean> {
    this._probed = true
    for (const project of report.projects) {
      const alone = await run([project])
      if (!alone) return false
      const ran = alone.report?.modules.some(m => m.tests.length > 0 || m.state === 'pass' || m.state === 'fail')
      if (ran || (alone.exitCode === 0 && !alone.report?.errors.length)) continue
      this._broken.set(project, firstLine(alone.report?.errors[0] ?? alone.output.trim().split('\n').at(-1)))
    }
    return true
  }

  /** A measurement from one report: per-test results with their ids, file-level failures, the write's own parse errors. */
  parse(report: DshVitestReport, touched: readonly string[]): Measurement {
    const problems: Problem[] = []
    const passed: { key: string; file: string }[] = []
    const skipped: { key: string; file: string }[] = []
    // A test skipped in a test file the write touched (`it.skip`, `describe.skip`): did it pass before?
    const suspect = new Set<string>()
    const scope = new Set<string>(touched)
    const multi = this._projects.length > 1
    const loadErrors: string[] = [...report.errors]
    // One order for the message, whatever order the workers finished in.
    const order = (m: DshVitestReport['modules'][number]) => `${m.file}\u0000${this._projects.indexOf(m.project)}`
    for (const mod of [...report.modules].sort((a, b) => order(a).localeCompare(order(b)))) {
      if (this._broken.has(mod.project)) continue
      const file = toPosixRelative(this.root, mod.file)
      const tag = multi && mod.project ? ` [${mod.project}]` : ''
      scope.add(file)
      let failedTests = 0
      for (const t of mod.tests) {
        const path = [...t.titles, t.name]
        const key = `${[file, ...path].join(' > ')}${tag}`
        this.names.set(key, { full: path.join(' '), project: multi ? mod.project : '' })
        if (t.state === 'pass') passed.push({ key, file, ...(typeof t.duration === 'number' ? { durationMs: Math.round(t.duration) } : {}) })
        else if (t.state === 'skip') {
          skipped.push({ key, file })
          if (touched.includes(file)) suspect.add(file)
        } else if (t.state === 'fail') {
          failedTests++
          const why = firstLine(t.error)
          const timeout = timeoutOf(why)
          problems.push({ ...failingTest(this.check, key, file, t.line, `${path.join(' > ')}${tag}${why ? ` — ${why}` : ''}`),
            ...(timeout ? { timeout } : {}) })
        }
      }
      if (mod.state === 'fail' && !failedTests) {
        loadErrors.push(mod.error)
        problems.push(failingTest(this.check, `${file}${tag}${FILE_LEVEL}`, file, undefined,
          `test file failed${tag}: ${firstLine(mod.error) || 'no tests ran'}`))
      }
    }
    problems.push(...ownParseErrors(this.check, this.root, touched, loadErrors))
    return { status: 'ok', problems, passed, skipped, scope: [...scope], ...(suspect.size ? { suspect: [...suspect] } : {}) }
  }
}

/**
 * Tests through the workspace's own vitest CLI, read through this package's
 * reporter (test modules with their project), judged by {@link VitestJudge}.
 */
export class VitestCheck implements Check, CoverageSource {
  readonly name = 'test'
  readonly verb = 'testing'
  readonly coverageUnit = 'lines'
  private readonly _judge: VitestJudge
  private _coverage?: CoverageReading

  constructor(private readonly options: VitestCheckOptions) {
    this._judge = new VitestJudge(options.root, this.name)
  }

  /** A deleted or moved module selects the tests of what imported it (see {@link Check.moduleGraph}). */
  readonly moduleGraph = SCRIPT_GRAPH

  /** Related tests: the accepted state is measured per write (see {@link Check.lazyBaseline}). */
  get lazyBaseline(): boolean {
    return this.options.mode === 'related'
  }

  /**
   * A write that changed only comments and whitespace in scripts: no test can change outcome (with the coverage
   * mode, measured as any write); the map's entries stay current for the next body-only edit.
   */
  async unaffectedBy(change: Change): Promise<string | undefined> {
    if (this.options.coverage) return undefined
    const why = await testsUnchanged(change)
    const map = this.options.testMap
    if (why && map) keepCurrentAfterComments({ map, root: this.options.root, hashes: this._hashes }, change, related => this.readers(related, change))
    return why
  }

  /** Projects left out because they cannot start here, with why (for status and tests). */
  get brokenProjects(): ReadonlyMap<string, string> {
    return this._judge.broken
  }

  async measure(change: Change | undefined, io: CheckIO): Promise<Measurement> {
    const related = !!change && this.options.mode === 'related'
    // Of the test files whose source may read the change, those this session's recorded reads (where there are any) say do.
    const readers = related && this.options.fsReaders ? this.readers(this.options.fsReaders.readersOf(change), change) : []
    const args = related ? ['related', ...change.files, ...readers, '--run'] : ['run']
    this._coverage = undefined
    // Nothing can import a file that does not exist yet (the accepted state of a file a write creates); only a test that reads it as a file sees it.
    if (related && !readers.length && !change.paths.some(p => existsSync(p))) return { status: 'ok', problems: [], passed: [], scope: [] }
    const map = this.options.coverage ? undefined : this.options.testMap
    // A judgement's re-recordings can be undone by a byte-identical rollback (see restore).
    if (change) map?.begin()
    if (map && change && this.options.mode === 'related' && !change.files.some(f => RERUN_ALL.test(f))) {
      const byMap = await measureByMap(this.mapRunner(map, args), change, io)
      if (byMap) return byMap
    }
    const touched = change?.files ?? []
    if (related && !this.options.coverage && this.options.testFile) {
      // Most of the suite relates to the change (a top-level change of a much-imported module): run as the naive
      // check does, one plain whole run, no map recorded (a body-only edit of these files records it again).
      const importsOf = this.runnerImports()
      const { related: n, total } = importsOf ? testsReaching(this.options.root, change.files, f => this.options.testFile!.test(f), importsOf) : { related: 0, total: 0 }
      if (total && n > total * WHOLE_SUITE_SHARE) {
        io.notice('info', `tests: ${n} of ${total} test files relate to ${listFiles(change.files)}: the whole suite, as \`vitest run\``)
        return this.runReport(['run'], io, undefined, touched, true, undefined, true)
      }
    }
    if (!this.options.coverage) return this.runReport(args, io, undefined, touched)
    const include = change?.files.filter(f => COVERABLE.test(f))
    if (include && !include.length) return this.runReport(args, io, undefined, touched)
    return this.runReport(args, io, include ?? 'all', touched)
  }

  /**
   * A write whose paths all existed before it: its failing tests' accepted
   * state is measured after it, in a mount namespace (ADR 0019). Not with
   * the coverage mode: it compares each changed file with its accepted
   * coverage, which only a run before the write gives (as for `go test`).
   */
  servable(change: Change): boolean {
    return !this.options.coverage && servableByMount(change)
  }

  servesAnyChange(): boolean {
    return !this.options.coverage && servesAnyByMount()
  }

  /** `files` run on the content from before the write, shown to this run alone. */
  async measureAccepted(files: string[], change: Change, io: CheckIO): Promise<Measurement | undefined> {
    return withAcceptedContent(change, isolate => this.runReport(['run', ...files], io, undefined, [], false, isolate))
  }

  lastCoverage(): CoverageReading | undefined {
    return this._coverage
  }

  /** `names`: the judge that named the tests (the warm runner's, when it asks). */
  confirm(problems: Problem[], io: CheckIO, names = this._judge.names): Promise<Confirmation | undefined> {
    return confirmAlone(problems, p => names.get(p.key)?.full, rerun => this.rerun(rerun, io), p => names.get(p.key)?.project ?? '')
  }

  /** The same re-runs on the accepted content, shown to each run alone in a mount namespace (ADR 0019). */
  confirmAccepted(problems: Problem[], change: Change, io: CheckIO, names = this._judge.names): Promise<Confirmation | undefined> {
    if (!this.servable(change)) return Promise.resolve(undefined)
    return withAcceptedContent(change,
      isolate => confirmAlone(problems, p => names.get(p.key)?.full, rerun => this.rerun(rerun, io, isolate), p => names.get(p.key)?.project ?? ''))
  }

  /** One flaky re-run: a test file alone, its failing tests by name, with a longer time limit when one timed out (`isolate`: on the accepted content). */
  rerun({ file, pattern, group: project, testTimeoutMs, hookTimeoutMs }: Rerun, io: CheckIO, isolate?: Isolation): Promise<Measurement> {
    return this.runReport([
      'run', file, ...(pattern ? ['-t', namePattern(pattern, this.options.major)] : []), ...(project ? ['--project', project] : []),
      ...(testTimeoutMs ? [`--testTimeout=${testTimeoutMs}`] : []), ...(hookTimeoutMs ? [`--hookTimeout=${hookTimeoutMs}`] : []),
    ], io, undefined, [], false, isolate)
  }

  /**
   * The map's view of the CLI: the related test files it knows (those whose
   * entry loaded a changed module), and a run of the selection as vitest's
   * own `related` run less the files the selection leaves out — a related
   * test file the map does not know runs as before.
   */
  private mapRunner(map: TestMap, related: string[]): MapRunner {
    const root = this.options.root
    return {
      root, map, hashes: this._hashes, listsAll: false,
      listRelated: change => {
        const files = map.loaders(change.files)
        return Promise.resolve({ files, readers: this.readers(files, change) })
      },
      // A changed test file only itself relates to: a mapped test file no other mapped one loaded (one the map does not know runs anyway).
      relatedTestFiles: change => Promise.resolve(map.loaders(change.files)),
      runSelected: async (_selection, leftOut, change, io) => {
        const m = await this.runReport([...related, '--exclude', oneGlob(leftOut)], io, undefined, change.files)
        return { measurement: m, ran: this._lastRan }
      },
    }
  }

  /** Of `tests` (workspace-relative), those that may read a changed file as a file (this session's recorded reads, else their source). */
  private readers(tests: readonly string[], change: Change): string[] {
    const root = this.options.root
    return readersOf(this._reads, tests.map(f => join(root, f)), change.paths).map(abs => toPosixRelative(root, abs))
  }

  /**
   * A byte-identical rollback: the map entries the write's runs re-recorded
   * are put back (they were recorded on the content that is back).
   */
  restore(): void {
    this.options.testMap?.undo()
    this.options.testMap?.save()
  }

  dispose(): void {
    this.options.testMap?.save()
  }

  private readonly _hashes = new DiskHashes()
  /** Per script (absolute): its size and mtime, and the specifiers left after the transform. */
  private readonly _imports = new Map<string, { stamp: string; specifiers: string[] }>()
  /** The esbuild vitest's vite transforms with, once looked for (null: none). */
  private _esbuild?: { transformSync(text: string, options: { loader: string; format: 'esm' }): { code: string } } | null

  /**
   * A script's imports as vitest's transform leaves them: esbuild (the one vite uses) transforms the file alone,
   * which erases imports used only as types (`import { Monoid } from './Monoid'` for an annotation relates no
   * test). Undefined when the workspace's vite has no esbuild.
   */
  private runnerImports(): ((abs: string) => string[] | undefined) | undefined {
    if (this._esbuild === undefined) {
      this._esbuild = null
      const vite = resolveFromWorkspace(this.options.root, 'vite/package.json')
      try {
        if (vite) this._esbuild = createRequire(vite)('esbuild') as NonNullable<typeof this._esbuild>
      } catch {
        // No esbuild beside vite (a vite on another bundler): the count is not made.
      }
    }
    const esbuild = this._esbuild
    if (!esbuild) return undefined
    return abs => {
      // A declaration file is never run.
      if (/\.d\.[cm]?ts$/.test(abs)) return []
      const stamp = fileStamp(abs)
      if (stamp === undefined) return undefined
      const hit = this._imports.get(abs)
      if (hit?.stamp === stamp) return hit.specifiers
      let specifiers: string[]
      try {
        const loader = /\.[cm]?ts$/.test(abs) ? 'ts' : /\.tsx$/.test(abs) ? 'tsx' : /\.jsx$/.test(abs) ? 'jsx' : 'js'
        specifiers = scanImports(esbuild.transformSync(readFileSync(abs, 'utf8'), { loader, format: 'esm' }).code).map(i => i.specifier)
      } catch {
        // Does not parse: it imports nothing a run could reach.
        return undefined
      }
      this._imports.set(abs, { stamp, specifiers })
      return specifiers
    }
  }

  /** The test files of the last run's report (workspace-relative). */
  private _lastRan: string[] = []
  /** What each test file read as a file in this session's recorded runs (absolute test file → its reads). */
  private readonly _reads = new Map<string, TestReads>()

  /**
   * A config of ours in `dir` for a run that records the map: the
   * workspace's config (the file vitest would find in its root) with the
   * recorders first among its setup files. Undefined where that would not
   * be the workspace's config (a workspace file, a config named in
   * `testArgs`): nothing is recorded, the map is not used.
   */
  private recordingConfig(dir: string): string | undefined {
    if (this.options.extraArgs?.some(a => OWN_CONFIG.test(a))) return undefined
    let names: string[]
    try {
      names = readdirSync(this.options.root)
    } catch {
      return undefined
    }
    if (names.some(n => WORKSPACE_FILE.test(n))) return undefined
    const user = CONFIG_FILES.find(f => names.includes(f))
    const file = join(dir, 'vitest.config.mjs')
    writeFileSync(file, [
      user ? `import user from ${JSON.stringify(join(this.options.root, user))}` : 'const user = {}',
      `const recorders = ${JSON.stringify(RECORDERS)}`,
      'const add = config => ({ ...config, test: { ...config?.test, setupFiles: [...recorders, ...[config?.test?.setupFiles ?? []].flat()] } })',
      'export default async env => add(await (typeof user === \'function\' ? user(env) : user))',
      '',
    ].join('\n'))
    return file
  }

  /**
   * The map from a recorded run's records (in `dir`): a test file's entry is
   * what each of its runs (one per project) executed, when every one left
   * a record made alone in a fresh worker (carried module initialisers need
   * vite's import graph, which the CLI has not) and with the file's own
   * `afterAll` hooks run before the recorder's (`stack` order, or none in
   * the code that ran). Anything else: no entry, the file always runs.
   */
  private takeRecords(dir: string, report: DshVitestReport): void {
    const map = this.options.testMap
    if (!map) return
    const root = this.options.root
    loadReads(dir, report.modules.map(m => m.file), this._reads)
    const calls = new Map<string, Record<string, Set<string>> | null>()
    for (const m of report.modules) {
      const test = toPosixRelative(root, m.file)
      if (calls.get(test) === null) continue
      let record: CallsRecord | undefined
      try {
        record = JSON.parse(readFileSync(join(dir, `${createHash('sha1').update(`${m.project}\0${m.file}`).digest('hex')}.calls.json`), 'utf8')) as CallsRecord
      } catch {
        // No record of this run: the file gets no entry.
      }
      if (!record || record.worker !== null || !this.recorderLast(record, m.file)) {
        calls.set(test, null)
        continue
      }
      const modules = calls.get(test) ?? {}
      for (const [module, names] of Object.entries(record.ran)) for (const name of names) (modules[toPosixRelative(root, module)] ??= new Set()).add(name)
      calls.set(test, modules)
    }
    const recorded: Record<string, Record<string, string[]>> = {}
    for (const [test, modules] of calls) if (modules) recorded[test] = Object.fromEntries(Object.entries(modules).map(([m, names]) => [m, [...names]]))
    map.record(recorded, report.modules.map(m => toPosixRelative(root, m.file)), f => this._hashes.of(join(root, f)))
    map.save()
  }

  /** Whether the record was taken after everything the file's `afterAll` hooks ran: hooks in `stack` order, or no `afterAll` in the code that ran. */
  private recorderLast(record: CallsRecord, test: string): boolean {
    if ((record.hooks ?? 'stack') === 'stack') return true
    const code = new Set([test, ...Object.keys(record.ran), ...(record.setup ?? []).filter(f => !RECORDERS.includes(f))])
    for (const file of code) {
      const hash = this._hashes.of(file)
      let hooks = hash === undefined ? true : this._afterAll.get(hash)
      if (hooks === undefined) {
        try {
          hooks = /\bafterAll\b/.test(readFileSync(file, 'utf8'))
        } catch {
          hooks = true
        }
        this._afterAll.set(hash!, hooks)
      }
      if (hooks) return false
    }
    return true
  }

  /** Whether a file's text mentions `afterAll`, by content hash. */
  private readonly _afterAll = new Map<string, boolean>()

  /** One run of the workspace's vitest with this package's reporter; the report is undefined when vitest wrote none. */
  private async runOnce(args: string[], io: CheckIO, coverage?: 'all' | string[], isolate?: Isolation, plain = false): Promise<VitestRun> {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-vitest-'))
    const out = join(dir, 'report.json')
    // Runs of whole test files on the disk's content record the map (not a -t re-run, not the accepted content, not coverage).
    const records = join(dir, 'records')
    const config = this.options.testMap && !plain && !coverage && !isolate && !args.includes('-t') ? this.recordingConfig(dir) : undefined
    if (config) mkdirSync(records)
    const coverageDir = join(dir, 'coverage')
    const coverageArgs = coverage ? [
      '--coverage.enabled=true', '--coverage.provider=v8', '--coverage.reporter=json-summary', `--coverage.reportsDirectory=${coverageDir}`,
      ...(coverage === 'all' ? [] : coverage.map(f => `--coverage.include=${f}`)),
    ] : []
    try {
      const run = await runRecorded(this.name, [
        ...this.options.command, ...args, ...(config ? ['--config', config] : []),
        `--reporter=${REPORTER}`, '--passWithNoTests', ...vitestVersionArgs(this.options.major), '--no-cache', ...coverageArgs, ...(this.options.extraArgs ?? []),
      ], this.options.root, io, { env: checkEnv({ DSH_VITEST_REPORT: out, ...(config ? { DSH_VITEST_READS: records, DSH_VITEST_READS_ROOT: this.options.root } : {}) }), judgeable: r => r.exitCode === 0 || existsSync(out), isolate })
      if (coverage) this._coverage = this.readCoverage(join(coverageDir, 'coverage-summary.json'), coverage)
      const failed = (): Measurement => ({ status: run.timedOut ? 'timeout' : 'error', problems: [], scope: [],
        error: whyNotJudged('vitest', run, io.timeoutMs) })
      let report: DshVitestReport
      try {
        report = JSON.parse(readFileSync(out, 'utf8')) as DshVitestReport
      } catch {
        // vitest 1 and 2 call no reporter when no test file matches (`related` on a new module): exit 0, nothing ran.
        if (run.exitCode === 0 && !run.timedOut) return { report: { projects: [], modules: [], errors: [] }, exitCode: 0, output: run.output, failed }
        // No report: vitest crashed, timed out or never started.
        return { exitCode: run.exitCode, output: run.output, failed }
      }
      this._lastRan = report.modules.map(m => toPosixRelative(this.options.root, m.file))
      if (config) this.takeRecords(records, report)
      return { report, exitCode: run.exitCode, output: run.output, failed }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }

  /**
   * One vitest run judged; `coverage`: also read v8 coverage of these files
   * (or of everything). A run naming its project (`--project`) is not
   * limited further. `plain`: the map is not recorded.
   */
  private async runReport(args: string[], io: CheckIO, coverage?: 'all' | string[], touched: readonly string[] = [], probe = true,
    isolate?: Isolation, plain = false): Promise<Measurement> {
    const own = args.includes('--project')
    const m = await this._judge.judge(only => this.runOnce([...args, ...(only && !own ? only.flatMap(p => ['--project', p]) : [])], io, coverage,
      isolate, plain), io, touched, probe)
    // The CLI always runs (a run without a report is judged from its output).
    return m!
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
}

/** Per-file line coverage from vitest's `json-summary` report (absolute paths as keys, plus `total`). */
export function parseCoverageSummary(json: string, relativeOf: (abs: string) => string): Record<string, number> {
  const summary = JSON.parse(json) as Record<string, { lines?: { pct?: unknown; total?: unknown } }>
  const files: Record<string, number> = {}
  for (const [abs, entry] of Object.entries(summary)) {
    if (abs === 'total') continue
    const value = entry.lines?.pct
    if (typeof value === 'number') files[relativeOf(abs)] = value
  }
  return files
}

/** One glob that matches these paths and nothing else (vitest 1 takes one `--exclude`). */
function oneGlob(paths: readonly string[]): string {
  const literal = paths.map(p => p.replace(/[\\*?[\]{}()!+@,]/g, c => `\\${c}`))
  return literal.length === 1 ? literal[0]! : `{${literal.join(',')}}`
}
