import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { toPosixRelative } from 'dsh-common'
import { seconds } from '../../run.ts'
import type { Change, Check, CheckIO, Confirmation, Measurement, Problem, WarmPiece } from '../../types.ts'
import { WarmVitestClient, type RunCalls, type WarmRunAnswer, type WarmRunPhases, type WarmRunRequest } from './warm-client.ts'
import { confirmAlone } from '../runner.ts'
import { VitestJudge, type DshVitestReport, type VitestCheck, type VitestRun } from './check.ts'
import { preloadParser } from '../js/body-edit.ts'
import { DiskHashes, type TestMap } from './test-map.ts'
import { measureByMap, RERUN_ALL } from './by-map.ts'
import { SCRIPT_GRAPH } from '../js/imports.ts'

/** Files whose change makes the warm runner's configuration or module resolution stale: it is restarted. */
const TEST_CONFIG_FILE = /(?:^|\/)(?:vite(?:st)?\.(?:config|workspace|projects)(?:\.[\w-]+)?\.[cm]?[jt]s|vitest\.workspace\.json|package\.json|tsconfig[^/]*\.json)$/


export interface WarmVitestOptions {
  root: string
  /** Absolute path of the workspace's own `vitest/node` entry. */
  vitestNode: string
  /** `related`: only tests whose import graph reaches the changed files; `all`: the whole suite every time. */
  mode: 'related' | 'all'
  /** Extra vitest CLI arguments (`testArgs`), parsed by the workspace's vitest. */
  extraArgs?: string[]
  /** The CLI check, used for a run the warm runner cannot do (another Node API, a crash). */
  cli: VitestCheck
  /** Resident memory of the runner and its workers, in MB, above which it is recycled after a run (0: never). */
  maxRssMb: number
  /**
   * The map of the functions each test file executed (ADR 0021): recorded
   * from every run, and a body-only edit runs only the related test files
   * that executed a changed function. Absent: nothing recorded, related
   * test files selected by imports alone.
   */
  testMap?: TestMap
  /** dsh's vault: read-only for the runner (ADR 0015). */
  vault?: string
}

/**
 * Tests through a warm vitest: the workspace's own vitest, created once
 * through its Node API in a child process (its own process group), keeping
 * its module graph between runs. Each run invalidates what changed on disk
 * and runs the test files related to the change; results come from vitest's
 * task state, in the JSON reporter's shape, judged exactly as the CLI check
 * judges (same test ids). A run the warm runner cannot do — a vitest whose
 * Node API differs, a crash — is done by the CLI check instead; a crashed
 * runner is started again on the next run, a configuration change restarts
 * it, and a runner past `maxRssMb` is recycled.
 */
const MODULE_FILE = /\.(?:[cm]?[jt]sx?|vue|svelte)$/

export class WarmVitestCheck implements Check {
  readonly name = 'test'
  readonly verb = 'testing'
  private readonly _client: WarmVitestClient
  private readonly _judge: VitestJudge
  private _unsupported?: string
  private _lastRssKb?: number
  private _lastPhases?: WarmRunPhases
  private readonly _hashes = new DiskHashes()

  constructor(private readonly options: WarmVitestOptions) {
    this._client = new WarmVitestClient({ root: options.root, vitestNode: options.vitestNode, extraArgs: options.extraArgs ?? [],
      recordCalls: !!options.testMap, ...(options.vault ? { vault: options.vault } : {}) })
    this._judge = new VitestJudge(options.root, this.name)
  }

  /** Projects left out because they cannot start here, with why. */
  get brokenProjects(): ReadonlyMap<string, string> {
    return this._judge.broken
  }

  /** A deleted or moved module selects the tests of what imported it (see {@link Check.moduleGraph}). */
  readonly moduleGraph = SCRIPT_GRAPH

  /** Related tests: the accepted state is measured per write (see {@link Check.lazyBaseline}). */
  get lazyBaseline(): boolean {
    return this.options.mode === 'related'
  }

  /** Why the warm runner is not used (this vitest's Node API differs), once known. */
  get unsupported(): string | undefined {
    return this._unsupported
  }

  /** Resident memory of the runner and its workers after its last run, kB. */
  get lastRssKb(): number | undefined {
    return this._lastRssKb
  }

  /** Where the last warm run's time went (for the bench). */
  get lastPhases(): WarmRunPhases | undefined {
    return this._lastPhases
  }

  /** Runner processes started so far (restarts included). */
  get starts(): number {
    return this._client.starts
  }

  /** The runner's process (group) id while it is alive. */
  get pid(): number | undefined {
    return this._client.pid
  }

  /** Start the runner in the background (session start), so the first judged write does not wait for vitest to boot. */
  startWorkers(): void {
    if (this._unsupported) return
    if (this.options.testMap) preloadParser()
    void this._client.start().then(ready => {
      if (ready.status === 'unsupported') this._unsupported = ready.reason
    })
  }

  async measure(change: Change | undefined, io: CheckIO): Promise<Measurement> {
    if (this._unsupported) return this.options.cli.measure(change, io)
    const config = change?.files.filter(f => TEST_CONFIG_FILE.test(f)) ?? []
    if (config.length) {
      io.notice('info', `${config.join(', ')} changed: restarting the warm test runner`)
      await this._client.dispose()
    }
    this._configJudged = config.length > 0
    const related = !!change && this.options.mode === 'related' && !change.files.some(f => RERUN_ALL.test(f))
    // A judgement's re-recordings can be undone by a byte-identical rollback (see restore).
    if (change) this.options.testMap?.begin()
    if (related && !config.length) {
      // One listing of the related test files for both selections below.
      let listing: Promise<Listed | undefined> | undefined
      const list = () => listing ??= this.listRelated(change, io)
      const byMap = await this.measureByMap(change, io, list)
      if (byMap) return byMap
      const byTypes = change.declarationsKept ? await this.measureWithoutTypeTests(change, io, list) : undefined
      if (byTypes) return byTypes
    }
    const request: WarmRunRequest = { changed: change?.paths ?? null, mode: related ? 'related' : 'all' }
    const argv = related ? ['vitest', 'related', ...change!.files, '--run'] : ['vitest', 'run']
    const m = await this._judge.judge(only => this.runWarm({ ...request, ...(only ? { projects: only } : {}) }, projectArgv(argv, only), io), io, change?.files)
    if (!m) return this.options.cli.measure(change, io)
    // A whole run measured every test there is: one that passed before and is not in it is no longer collected.
    return !related && m.status === 'ok' ? { ...m, complete: true } : m
  }

  /** A body-only edit, judged by the map (see {@link measureByMap}): the selected test files run in the warm runner. */
  private measureByMap(change: Change, io: CheckIO, list: () => Promise<Listed | undefined>): Promise<Measurement | undefined> {
    const map = this.options.testMap
    if (!map) return Promise.resolve(undefined)
    return measureByMap<Listed>({
      root: this.options.root, map, hashes: this._hashes, listsAll: true,
      listRelated: () => list(),
      relatedTestFiles: (c, i) => this.relatedTestFiles(c, i),
      // A write that kept every declaration: the type-only test files (never mapped: no worker runs them) are left out too.
      narrow: listed => {
        const types = new Set(this.typeTestsLeftOut(change, listed))
        return types.size ? { files: types, note: typesNote } : undefined
      },
      runSelected: async selection => {
        const request: WarmRunRequest = { changed: change.paths, mode: 'files', files: selection.run.map(f => join(this.options.root, f)) }
        const argv = ['vitest', 'run', ...selection.run]
        const m = await this._judge.judge(only => this.runWarm({ ...request, ...(only ? { projects: only } : {}) },
          projectArgv(argv, only), io), io, change.files)
        return m && { measurement: m }
      },
    }, change, io)
  }

  /**
   * A write that kept every written file's declaration signature: the related test
   * files less the type-only ones, said in a note. Undefined when none is left out.
   */
  private async measureWithoutTypeTests(change: Change, io: CheckIO, list: () => Promise<Listed | undefined>): Promise<Measurement | undefined> {
    const listed = await list()
    if (!listed) return undefined
    const types = new Set(this.typeTestsLeftOut(change, listed))
    if (!types.size) return undefined
    const run = listed.files.filter(f => !types.has(f))
    const note = `tests: ${run.length} of ${listed.files.length} related test file${listed.files.length === 1 ? '' : 's'}: ${typesNote(types.size)}`
    io.notice('info', note)
    if (!run.length) return { status: 'ok', problems: [], passed: [], scope: [], notes: [note], selected: true }
    const request: WarmRunRequest = { changed: change.paths, mode: 'files', files: run.map(f => join(this.options.root, f)) }
    const m = await this._judge.judge(only => this.runWarm({ ...request, ...(only ? { projects: only } : {}) },
      projectArgv(['vitest', 'run', ...run], only), io), io, change.files)
    if (!m) return undefined
    return { ...m, notes: [...m.notes ?? [], note], selected: true }
  }

  /**
   * Of the listed related test files, those no write that kept every written file's declaration
   * signature can change the outcome of: files only vitest's typecheck mode runs, on
   * tsconfigs whose programs computed those signatures, and not written themselves.
   */
  private typeTestsLeftOut(change: Change, listed: Listed): string[] {
    const kept = change.declarationsKept
    if (!kept) return []
    const programs = new Set(kept.programs.map(p => resolve(p)))
    const written = new Set(change.files)
    return listed.files.filter(f => !written.has(f) && !!listed.typeOnly.get(f)?.every(config => programs.has(resolve(config))))
  }

  /** The related test files, from the runner's module graph without running them; undefined when the runner cannot say. */
  async relatedTestFiles(change: Change, io: CheckIO): Promise<string[] | undefined> {
    return (await this.listRelated(change, io))?.files
  }

  /** The related test files (workspace-relative), and those of them whose recorded file-system reads see a changed path. */
  private async listRelated(change: Change, io: CheckIO): Promise<Listed | undefined> {
    if (this._unsupported || this.options.mode !== 'related' || change.files.some(f => RERUN_ALL.test(f) || TEST_CONFIG_FILE.test(f))) return undefined
    const only = this._judge.runnable
    const answer = await this._client.run({ changed: change.paths, mode: 'related', list: true, ...(only ? { projects: only } : {}) }, io.timeoutMs, io.signal)
    if (answer.status !== 'ok') return undefined
    const rel = (abs: string) => toPosixRelative(this.options.root, abs)
    const typeOnly = new Map(Object.entries(answer.typeOnly ?? {}).map(([file, configs]) => [rel(file), configs]))
    return { files: [...new Set(answer.report.modules.map(m => rel(m.file)))], readers: (answer.readers ?? []).map(rel), typeOnly }
  }

  /**
   * The accepted result of `files` (test files that fail after a write): run
   * in the warm runner with the write's paths served from `change.before` to
   * its module graph (nothing is written). Undefined when the runner is not
   * in use, or a path the write deleted would have to be served (module
   * resolution looks at the disk).
   */
  get measureAccepted(): Check['measureAccepted'] {
    // Without the warm runner (another vitest Node API), or for a write it cannot serve, the CLI in a mount namespace (ADR 0019).
    return this._unsupported
      ? (files, change, io) => this.options.cli.measureAccepted(files, change, io)
      : async (files, change, io) => this.servedByRunner(change) && !(await this.typechecked(files, io)) ? this.measureWithContentBefore(files,
        change, io) : this.options.cli.measureAccepted(files, change, io)
  }

  /**
   * Whether some of `files` (workspace-relative test files) run in vitest's typecheck mode, or
   * the runner cannot say: their `tsc` reads the disk, not the module graph, so content served
   * to the runner would be judged as the write's.
   */
  private async typechecked(files: string[], io: CheckIO): Promise<boolean> {
    const answer = await this._client.run({ changed: [], mode: 'files', files: files.map(f => join(this.options.root, f)), list: true },
      io.timeoutMs, io.signal)
    return answer.status !== 'ok' || !!answer.typechecked?.length
  }

  /**
   * Changed modules are served by the runner (to test files in the typecheck mode, whose `tsc` reads the disk,
   * by the CLI); any other write whose paths all existed, by the CLI in a mount namespace.
   */
  servable(change: Change): boolean {
    // A test config is not served (the runner restarts on it): its accepted state, every test, is measured before.
    if (change.files.some(f => TEST_CONFIG_FILE.test(f))) return false
    return (!this._unsupported && this.servedByRunner(change)) || this.options.cli.servable(change)
  }

  servesAnyChange(): boolean {
    return this.options.cli.servesAnyChange()
  }

  /**
   * Served content reaches the module graph only: a test's own file-system reads (a listing that sees
   * a created file, a fixture read at run time) would see the write, so only changed modules are served.
   */
  private servedByRunner(change: Change): boolean {
    return !!change.before && [...change.before].every(([path, bytes]) => bytes !== null && MODULE_FILE.test(path))
      && !change.files.some(f => TEST_CONFIG_FILE.test(f))
  }

  private async measureWithContentBefore(files: string[], change: Change, io: CheckIO): Promise<Measurement | undefined> {
    const before = change.before
    if (this._unsupported || !before || !this.servedByRunner(change)) return undefined
    const accepted: Record<string, string> = {}
    for (const [path, bytes] of before) {
      if (!existsSync(path)) return undefined
      accepted[path] = bytes!.toString('base64')
    }
    const request: WarmRunRequest = { changed: [], mode: 'files', files: files.map(f => join(this.options.root, f)), accepted }
    const argv = ['vitest', 'run', ...files, '(the content before the write)']
    return this._judge.judge(only => this.runWarm({ ...request, ...(only ? { projects: only } : {}) }, projectArgv(argv, only), io), io, [], false)
  }

  /**
   * Re-runs in the warm runner; a group with a timed-out test through the
   * CLI, whose `--testTimeout` gives it the longer limit (a live vitest's
   * limits are its config's).
   */
  async confirm(problems: Problem[], io: CheckIO): Promise<Confirmation | undefined> {
    const names = this._judge.names
    if (this._unsupported) return this.options.cli.confirm(problems, io)
    return confirmAlone(problems, p => names.get(p.key)?.full, rerun => {
      if (rerun.testTimeoutMs || rerun.hookTimeoutMs) return this.options.cli.rerun(rerun, io)
      const { file, pattern, group: project } = rerun
      const argv = ['vitest', 'run', file, ...(pattern ? ['-t', pattern] : [])]
      const request: WarmRunRequest = { changed: [], mode: 'files', files: [join(this.options.root, file)], ...(pattern ? { pattern } : {}) }
      const only = project ? [project] : undefined
      return this._judge.judge(runnable => this.runWarm({ ...request, ...((only ?? runnable) ? { projects: only ?? runnable } : {}) },
        projectArgv(argv, only ?? runnable), io), io, [], false)
    }, p => names.get(p.key)?.project ?? '')
  }

  /** Re-runs alone on the accepted content: through the CLI in a mount namespace (they are timed-out tests, which the CLI re-runs). */
  confirmAccepted(problems: Problem[], change: Change, io: CheckIO): Promise<Confirmation | undefined> {
    return this.options.cli.confirmAccepted(problems, change, io, this._unsupported ? undefined : this._judge.names)
  }

  /**
   * A byte-identical rollback: the map entries the write's runs re-recorded
   * are put back; a runner started on the write's test config starts again
   * on the restored one.
   */
  async restore(): Promise<void> {
    this.options.testMap?.undo()
    this.options.testMap?.save()
    if (this._configJudged) await this._client.dispose()
    this._configJudged = false
  }

  /** The last judged change touched a test config (the runner now runs on it). */
  private _configJudged = false

  dispose(): Promise<void> {
    this.options.testMap?.save()
    return this._client.dispose()
  }

  /** A run's calls into the map (modules hashed as they are on disk: what the run loaded). */
  private recordCalls(calls: RunCalls, ran: readonly string[]): void {
    const map = this.options.testMap
    if (!map) return
    // A whole run names the same modules for every test file: each path is made relative once.
    const paths = new Map<string, string>()
    const rel = (abs: string) => {
      let out = paths.get(abs)
      if (out === undefined) paths.set(abs, out = toPosixRelative(this.options.root, abs))
      return out
    }
    const relative = Object.fromEntries(Object.entries(calls).map(([test, modules]) => [rel(test),
      Object.fromEntries(Object.entries(modules).map(([m, names]) => [rel(m), names]))]))
    map.record(relative, ran.map(rel), f => this._hashes.of(join(this.options.root, f)))
    map.save()
  }

  /** Absolute test files the warm-up's pieces have still to run; undefined: the whole suite (not begun, or done). */
  private _warmLeft?: string[]

  /**
   * One piece of the warm-up (see {@link Check.warmPiece}): the whole suite,
   * then the test files a yielded piece left. A piece that yields is
   * cancelled as at a timeout (vitest lets the running files finish; the
   * runner lives on): the files that finished whole give their results and
   * map entries, the others wait for the next piece.
   */
  async warmPiece(io: CheckIO, yieldTo: AbortSignal, restart: boolean): Promise<WarmPiece | undefined> {
    if (this._unsupported || this.options.mode !== 'related') return undefined
    if (restart) this._warmLeft = undefined
    const left = this._warmLeft
    const only = this._judge.runnable
    const request: WarmRunRequest = left ? { changed: null, mode: 'files', files: left } : { changed: null, mode: 'all' }
    const argv = projectArgv(left ? ['vitest', 'run', `(the ${left.length} test files the warm-up has left)`] : ['vitest', 'run'], only)
    const first = await this.runWarm({ ...request, ...(only ? { projects: only } : {}) }, argv, io, yieldTo)
    if (!first) return undefined
    if (!first.cancelled || !first.report) {
      // Ran to its end: judged as any run (projects that cannot start are found here; their re-runs do not yield).
      let given = false
      const m = await this._judge.judge(o => {
        if (!given) return Promise.resolve((given = true, first))
        return this.runWarm({ ...request, ...(o ? { projects: o } : {}) }, projectArgv(argv, o), io)
      }, io, [])
      if (!m) return undefined
      this._warmLeft = undefined
      return { measurement: !left && m.status === 'ok' ? { ...m, complete: true } : m, done: true }
    }
    // A file whose tests the cancel skipped did not finish: it runs again in the next piece.
    const whole = (m: DshVitestReport['modules'][number]) => (m.state === 'pass' || m.state === 'fail') && m.tests.every(t => t.state !== 'skip')
    const finished = first.report.modules.filter(whole)
    // Cancelled before a file finished (or before the run began): nothing measured, the same files wait for the next piece.
    if (!finished.length) return { measurement: { status: 'ok', problems: [], scope: [] }, done: false }
    const done = new Set(finished.map(m => m.file))
    this._warmLeft = [...new Set(first.report.modules.filter(m => !whole(m)).map(m => m.file))]
    for (const f of this._warmLeft) done.delete(f)
    const report: DshVitestReport = { projects: first.report.projects, modules: finished.filter(m => done.has(m.file)), errors: [] }
    const m = await this._judge.judge(() => Promise.resolve({ ...first, report, exitCode: 0 }), io, [], false)
    if (!m) return undefined
    const over = !this._warmLeft.length
    if (over) this._warmLeft = undefined
    return { measurement: m, done: over }
  }

  /** One warm run, recorded; undefined when the CLI must do it instead (said in a notice). `yieldTo`: see {@link WarmVitestClient.run}. */
  private async runWarm(request: WarmRunRequest, argv: string[], io: CheckIO,
    yieldTo?: AbortSignal): Promise<(VitestRun & { cancelled?: boolean }) | undefined> {
    const started = performance.now()
    const answer: WarmRunAnswer = await this._client.run(request, io.timeoutMs, io.signal, yieldTo)
    const durationMs = Math.round(performance.now() - started)
    const cwd = this.options.root
    argv = [...argv, '(warm)']
    switch (answer.status) {
      case 'ok': {
        const { report } = answer
        const exitCode = report.errors.length || report.modules.some(m => m.state === 'fail') ? 1 : 0
        io.record({ check: this.name, argv, cwd, exitCode, durationMs, outcome: exitCode ? 'fail' : 'pass' })
        this._lastRssKb = answer.rssKb
        this._lastPhases = answer.phases
        // A cancelled run (a warm-up piece that yielded): only the files that finished have records.
        if (answer.calls) this.recordCalls(answer.calls, answer.cancelled ? Object.keys(answer.calls) : report.modules.map(m => m.file))
        if (this.options.maxRssMb && answer.rssKb !== undefined && answer.rssKb > this.options.maxRssMb * 1024) {
          io.notice('info', `warm test runner uses ${Math.round(answer.rssKb / 1024)} MB (bound ${this.options.maxRssMb} MB): recycling it`)
          void this._client.dispose().then(() => this._client.start())
        }
        return { report, exitCode, output: '', failed: () => ({ status: 'error', problems: [], scope: [], error: 'vitest wrote no report' }),
          ...(answer.cancelled ? { cancelled: true } : {}) }
      }
      case 'timeout': {
        io.record({ check: this.name, argv, cwd, exitCode: null, durationMs, outcome: 'timeout' })
        // Cancelled in time: the test files that finished keep what they executed (the next write need not run them again).
        if (answer.calls) this.recordCalls(answer.calls, Object.keys(answer.calls))
        const how = answer.calls ? 'run cancelled' : 'process group killed'
        return { exitCode: null, output: '',
          failed: () => ({ status: 'timeout', problems: [], scope: [], error: `vitest timed out after ${seconds(io.timeoutMs)} (${how})` }) }
      }
      case 'unsupported':
        this._unsupported = answer.reason
        io.notice('info', `warm test runner not available (${answer.reason}); using the vitest CLI`)
        return undefined
      case 'error':
        io.record({ check: this.name, argv, cwd, exitCode: null, durationMs, outcome: 'error' })
        if (io.signal?.aborted) return { exitCode: null, output: '',
          failed: () => ({ status: 'error', problems: [], scope: [], error: 'vitest aborted (process group killed)' }) }
        io.notice('warn', `warm test runner failed (${answer.error}); this run uses the vitest CLI, the next one restarts it`)
        return undefined
    }
  }
}

/** The related test files of a change as the warm runner lists them (workspace-relative). */
interface Listed {
  files: string[]
  /** Those whose recorded file-system reads see a changed path. */
  readers: string[]
  /** Those only vitest's typecheck mode runs, with the tsconfigs (absolute) its `tsc` reads for them. */
  typeOnly: ReadonlyMap<string, readonly string[]>
}

/** What the verdict says of the type-only test files a write that kept every declaration left out. */
function typesNote(count: number): string {
  return `${count} type-only test file${count === 1 ? '' : 's'} not run: no declaration changed`
}

/** The run as the equivalent CLI arguments, for the record. */
function projectArgv(argv: readonly string[], only: readonly string[] | undefined): string[] {
  return [...argv, ...(only ?? []).flatMap(p => ['--project', p])]
}
