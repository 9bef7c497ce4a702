import { join } from 'node:path'
import { AcceptedState, GONE, goneProblems, testName, type JudgeRules } from './accepted.ts'
import { readIfPresent } from './call-change.ts'
import { withImportersOfDeleted } from './deleted.ts'
import { listFiles } from './message.ts'
import { SerialQueue } from './queue.ts'
import { seconds } from './run.ts'
import type { ImpactList } from './impact.ts'
import type { Change, Check, CheckIO, CheckVerdict, ImpactSource, Measurement, Problem, RunRecord, SlowTest, Verdict } from './types.ts'
import { longerLimit, TIMEOUT_FACTOR } from './problems.ts'

/** What the measuring reports while it works; the Cordis adapter turns these into events. */
export interface GuardIO {
  record(run: RunRecord): void
  notice(level: 'info' | 'warn' | 'error', text: string, phase?: 'start' | 'end'): void
  signal?: AbortSignal
}

export interface GuardOptions {
  root: string
  /** The checks pipeline, in order. A mode is one more check. */
  checks: Check[]
  rules: JudgeRules
  timeoutMs: number
  maxOutputBytes: number
  /** dsh's vault: read-only for the commands the checks start (`CheckIO.vault`). */
  vault?: string
  /** Re-run newly failing tests once, alone, before blaming the write. */
  confirmFlaky: boolean
  /** Change-impact sources (empty or absent: the impact mode is off). */
  impact?: ImpactSource[]
}

/** A measured change: each check's verdict against the accepted state, and what to advance it with. */
export interface Measured extends Verdict {
  /** Measurements to advance the accepted state with, if the write is kept. */
  readonly measurements: ReadonlyMap<Check, Measurement>
  /** What the lazy checks ran, when more than the change (the importers of deleted files). */
  readonly selection?: Change
}

/** Files an import graph sees (related tests are found through it). */
const MODULE_FILE = /\.(?:[cm]?[jt]sx?|json|vue|svelte)$/

/**
 * The measure phase for one workspace: holds the accepted state, measures
 * it before a write, measures a change against it (each check's verdict),
 * measures again after a rollback, and advances the accepted state when
 * told to ({@link advance}, {@link resetTo}). What the write's fate is,
 * `judge.ts` decides; carrying it out is `act.ts`'s. Callers serialise
 * work through `queue` (checks of one workspace never overlap). No Cordis imports.
 */
export class Guard {
  readonly queue = new SerialQueue()
  private readonly _accepted = new Map<Check, AcceptedState>()
  private _dirty = false
  /** Workspace-relative files whose related results (the lazy checks') are measured in the accepted state. */
  private readonly _known = new Set<string>()
  /** The lazy checks measured the whole workspace (a judged shell call needs it). */
  private _knownAll = false
  /** Per lazy check: the test files whose accepted result is current (measured since the last unjudged change). */
  private readonly _current = new Map<Check, Set<string>>()
  /** Per changed file: the test files (or packages) its related measurements covered. */
  private readonly _related = new Map<string, ReadonlySet<string>[]>()
  /** Why a check's accepted state could not be measured the last time it was tried. */
  private readonly _unmeasured = new Map<Check, string>()
  /** Aborts running commands when the guard is disposed. */
  private readonly _abort = new AbortController()

  constructor(readonly options: GuardOptions) {
    for (const check of options.checks) this._accepted.set(check, new AcceptedState())
  }

  get checks(): readonly Check[] {
    return this.options.checks
  }

  /** The accepted state of one check (for tests and status). */
  accepted(check: string): AcceptedState | undefined {
    const found = this.options.checks.find(c => c.name === check)
    return found && this._accepted.get(found)
  }

  /** Whether every check has a measured accepted state. */
  get measured(): boolean {
    return [...this._accepted.values()].every(s => s.measured)
  }

  /** The workspace changed in a way nobody judged (a shell command, a failed write): re-measure before the next judgement. */
  markDirty(): void {
    this._dirty = true
    this._unjudged++
    this._warmed.clear()
  }

  /** Unjudged changes so far (see markDirty): a warm-up that saw one begin since it started does not claim the whole workspace measured. */
  get unjudged(): number {
    return this._unjudged
  }

  /**
   * Grows whenever the accepted state may stop describing the workspace's
   * content: an unjudged change, or a rollback after which the workspace is
   * not back (its re-check found leftovers or could not run).
   */
  get epoch(): number {
    return this._unjudged + this._unreflected
  }

  private _unjudged = 0
  private _unreflected = 0
  /** Lazy checks whose warm-up pieces are all done (since the last unjudged change). */
  private readonly _warmed = new Set<Check>()
  /** Per lazy check: the unjudged-change count when its warm-up pieces began (pieces from before one begin again). */
  private readonly _warmBegun = new Map<Check, number>()

  /**
   * One piece of the lazy checks' warm-up (see {@link Check.warmPiece}):
   * ends early once `yieldTo` aborts; each check's commands may take
   * `timeoutMs` (the warm-up's own limit, not a judgement's). True when every
   * lazy check is measured whole (then, unless `since` unjudged changes
   * differ, the whole workspace is known). Call inside `queue`.
   */
  async warmStep(io: GuardIO, yieldTo: AbortSignal, timeoutMs: number, since: number): Promise<boolean> {
    if (this._knownAll) return true
    let all = true
    for (const check of this.options.checks.filter(c => c.lazyBaseline)) {
      if (this._warmed.has(check)) continue
      const restart = this._warmBegun.get(check) !== this._unjudged
      this._warmBegun.set(check, this._unjudged)
      const piece = check.warmPiece ? await check.warmPiece(this.checkIO(io, timeoutMs), yieldTo, restart) : undefined
      if (!piece) {
        all = (await this.measureAccepted(check, undefined, io, timeoutMs)) && all
        this._warmed.add(check)
        continue
      }
      if (piece.measurement.status === 'ok') {
        this._accepted.get(check)!.advance(piece.measurement)
        check.advance?.(piece.measurement)
        this.markCurrent(check, piece.measurement)
      } else all = false
      if (!piece.done) return false
      this._warmed.add(check)
    }
    this._warmed.clear()
    if (since === this._unjudged) this._knownAll = all
    return true
  }

  /**
   * Make sure the accepted state is measured before a write runs. Whole-
   * workspace checks (type-check, compile): once, or — after an unjudged
   * change — what the coming write can affect. Lazy checks (targeted tests):
   * only what `upcoming` can affect and nothing measured yet covers, so no
   * write waits for a whole suite; `upcoming` undefined (a judged shell
   * call, whose paths are unknown before it runs): nothing for a check that
   * serves any change's content before (`Check.servesAnyChange`) when
   * `afterFirst` (the call's content before will be known after it: the
   * snapshot holds it), else the whole workspace, once. Call inside `queue`.
   */
  async prepare(io: GuardIO, upcoming?: Change, afterFirst = false): Promise<void> {
    const dirty = this._dirty
    this._dirty = false
    if (dirty) {
      this._known.clear()
      this._knownAll = false
      this._current.clear()
    }
    for (const check of this.options.checks) {
      if (check.lazyBaseline) continue
      if (!this._accepted.get(check)!.measured) await this.measureAccepted(check, undefined, io)
      else if (dirty) await this.measureAccepted(check, upcoming, io)
    }
    // A lazy check that can measure the accepted content after the write
    // (for the tests that fail then) is not measured before it: a write the
    // type-check rolls back, or whose tests pass, never runs them twice.
    const lazy = this.options.checks.filter(c => c.lazyBaseline && !(c.measureAccepted && (upcoming ? c.servable?.(upcoming) : afterFirst && c.servesAnyChange?.())))
    if (!lazy.length || this._knownAll) return
    if (!upcoming) {
      let all = true
      for (const check of lazy) all = (await this.measureAccepted(check, undefined, io)) && all
      this._knownAll = all
      return
    }
    const unknown = upcoming.files.map((file, i) => ({ file, path: upcoming.paths[i]! })).filter(x => !this._known.has(x.file))
    if (!unknown.length) return
    const change: Change = { paths: unknown.map(x => x.path), files: unknown.map(x => x.file) }
    let all = true
    for (const check of lazy) all = ((await this.alreadyMeasured(check, change, io)) || (await this.measureAccepted(check, change, io))) && all
    if (all) for (const { file } of unknown) this._known.add(file)
  }

  /**
   * Whether every test file `change` can affect already has a current
   * accepted result, so measuring them again on the same content would
   * change no verdict. Current: measured since the last unjudged change —
   * a judged write re-runs the tests related to it, and a kept write's
   * results become the accepted ones.
   */
  private async alreadyMeasured(check: Check, change: Change, io: GuardIO): Promise<boolean> {
    const current = this._current.get(check)
    if (!current || !check.relatedTestFiles || !this._accepted.get(check)!.measured) return false
    const tests = await check.relatedTestFiles(change, this.checkIO(io))
    if (!tests?.every(t => current.has(t))) return false
    this.relate(change, tests)
    io.notice('info', `${check.name}: the accepted state of what ${listFiles(change.files)} can affect is already measured (${plural(tests.length, 'related test file')})`)
    return true
  }

  /**
   * A lazy check's related measurement is (part of) the accepted state: its
   * test files' results are current. A change to a file no import graph
   * sees (a fixture a test reads, a snapshot) may affect tests nobody
   * related to it: then no result is taken as current any more.
   */
  private markCurrent(check: Check, m: Measurement): void {
    if (!check.lazyBaseline || m.scope === 'all') return
    const seen = (f: string) => check.inImportGraph?.(f) ?? MODULE_FILE.test(f)
    if (m.scope.some(f => !seen(f))) {
      this._current.delete(check)
      return
    }
    const current = this._current.get(check) ?? new Set<string>()
    for (const file of m.scope) current.add(file)
    this._current.set(check, current)
  }

  /**
   * Before the first write (session start): measure the whole-workspace
   * checks; lazy checks wait for a write's paths unless `tests` (then one
   * whole run of each: the accepted results, and the map of what each test
   * executed, so the first write is judged at the steady cost). Call inside `queue`.
   */
  async warm(io: GuardIO, tests = false, timeoutMs?: number): Promise<void> {
    for (const check of this.options.checks) {
      if (!check.lazyBaseline && !this._accepted.get(check)!.measured) await this.measureAccepted(check, undefined, io, timeoutMs)
    }
    if (!tests || this._knownAll) return
    // As `prepare` does for a shell call: the whole workspace, once.
    let all = true
    for (const check of this.options.checks.filter(c => c.lazyBaseline)) all = (await this.measureAccepted(check, undefined, io)) && all
    this._knownAll = all
  }

  /** Measure the accepted content for one check (before a write runs) and advance its accepted state; false when it could not. */
  private async measureAccepted(check: Check, change: Change | undefined, io: GuardIO, timeoutMs?: number): Promise<boolean> {
    const state = this._accepted.get(check)!
    const what = !change ? (state.measured ? 'current' : 'baseline') : check.lazyBaseline ? 'accepted' : 'current'
    const of = change && check.lazyBaseline ? ` of what ${listFiles(change.files)} can affect` : ''
    io.notice('info', `measuring the ${what} state${of}: ${check.verb}…`, 'start')
    const m = await check.measure(change, this.checkIO(io, timeoutMs))
    if (m.status !== 'ok') {
      const why = m.error ?? m.status
      this._unmeasured.set(check, m.status === 'timeout' && change && check.lazyBaseline ? `it took longer than ${seconds(this.options.timeoutMs)}` : why)
      io.notice('warn', `${check.name}: could not measure the accepted state (${why})`, 'end')
      return false
    }
    this._unmeasured.delete(check)
    state.advance(m)
    check.advance?.(m)
    this.markCurrent(check, m)
    if (change && m.scope !== 'all' && !m.selected) this.relate(change, m.scope)
    const covered = change && check.lazyBaseline && m.scope !== 'all' ? ` of ${plural(this.relatedCount(change) ?? 0, 'related test file')}` : ''
    io.notice('info', `${check.name}: ${plural(m.problems.length, 'existing problem')} in the accepted state${covered}`, 'end')
    return true
  }

  /** Remember which test files (packages) a change's files are related to, for the timeout message. */
  private relate(change: Change, scope: readonly string[]) {
    // A touched source file in a test check's scope (its own parse error) is not a related test file.
    const touched = new Set(change.files)
    const related = new Set(scope.filter(s => !touched.has(s) || this.options.rules.isTestFile(s)))
    // One set shared by every file of the change: linear in the files, whatever the scope.
    for (const file of change.files) {
      const sets = this._related.get(file) ?? []
      sets.push(related)
      this._related.set(file, sets)
    }
  }

  /** How many test files (packages) measurements so far related to a change; undefined when none was measured. */
  private relatedCount(change: Change): number | undefined {
    const all = new Set<string>()
    const seen = new Set<ReadonlySet<string>>()
    let any = false
    for (const file of change.files) {
      const sets = this._related.get(file)
      if (!sets) continue
      any = true
      for (const set of sets) {
        if (seen.has(set)) continue
        seen.add(set)
        for (const s of set) all.add(s)
      }
    }
    return any ? all.size : undefined
  }

  /**
   * Measure a change: run the pipeline in order, each check compared with
   * its accepted state, and stop at the first check that finds a
   * regression. Newly failing tests are re-run alone first (flaky tests
   * must not roll back good work). `decided`: called once, before the first
   * lazy check runs, when every check before it passed. Call inside
   * `queue`, after the write.
   */
  async measure(change: Change, io: GuardIO, describe: string, decided?: () => void): Promise<Measured> {
    const checks: CheckVerdict[] = []
    const measurements = new Map<Check, Measurement>()
    const selection = this.selection(change)
    // What the later checks are handed: the change, and what an earlier check found of its declarations.
    let seen = { change, selection }
    for (const check of this.options.checks) {
      // Background verdicts: every check that decides at once passed; the lazy ones (tests) may run after the write returned.
      if (check.lazyBaseline && decided) {
        decided()
        decided = undefined
      }
      const started = performance.now()
      io.notice('info', `${check.verb} after ${describe}…`, 'start')
      const verdict = await this.measureOne(check, seen.change, io, measurements, seen.selection)
      verdict.durationMs = Math.round(performance.now() - started)
      checks.push(verdict)
      io.notice(verdict.outcome === 'pass' ? 'info' : verdict.outcome === 'fail' ? 'warn' : 'error', summarise(verdict), 'end')
      if (verdict.outcome === 'fail') break
      // Only from a check that found nothing new: a tolerated new error (in a test file) is one a type test may see.
      const kept = measurements.get(check)?.declarationsKept
      if (kept && verdict.outcome === 'pass' && !verdict.warnings.length && !verdict.partial) {
        seen = { change: { ...change, declarationsKept: kept }, selection: { ...selection, declarationsKept: kept } }
      }
    }
    return { checks, regression: checks.some(c => c.outcome === 'fail'), measurements, ...(selection !== change ? { selection } : {}) }
  }

  /**
   * What the lazy checks (related tests) run for a change: the change, plus
   * the existing files that imported what it deleted or moved away (a
   * runner relates tests to files that exist; a deleted file relates to none).
   */
  private selection(change: Change): Change {
    const graphs = [...new Set(this.options.checks.flatMap(c => (c.lazyBaseline && c.moduleGraph ? [c.moduleGraph] : [])))]
    if (!graphs.length) return change
    try {
      return withImportersOfDeleted(this.options.root, change, graphs)
    } catch {
      // The workspace could not be scanned (vanished meanwhile): the runner's own selection.
      return change
    }
  }

  private async measureOne(check: Check, change: Change, io: GuardIO, measurements: Map<Check, Measurement>, selection: Change): Promise<CheckVerdict> {
    const state = this._accepted.get(check)!
    const base: CheckVerdict = { check: check.name, outcome: 'pass', regressions: [], warnings: [], flaky: [], durationMs: 0, ...(check.advisory ? { advisory: true } : {}) }
    const unaffected = await check.unaffectedBy?.(change).catch(() => undefined)
    if (unaffected) {
      // Its answer cannot change: nothing measured, the accepted state stays.
      io.notice('info', `${check.name}: not run: ${unaffected}`)
      return base
    }
    const touched = new Set(change.files)
    // A whole-workspace check may stop at the first problems that already make the write worse.
    const regresses = !check.lazyBaseline && !check.advisory && state.measured
      ? (problems: readonly Problem[]) => state.compare({ status: 'ok', problems: [...problems], scope: 'all' }, this.options.rules, touched).regressions.length > 0
      : undefined
    const m = await check.measure(check.lazyBaseline ? selection : change, { ...this.checkIO(io), ...(regresses ? { regresses } : {}) })
    if (m.notes?.length) base.notes = m.notes
    if (m.partial) base.partial = true
    if (m.status !== 'ok') {
      if (m.status === 'timeout' && check.lazyBaseline) {
        const n = this.relatedCount(change)
        const files = n === undefined ? 'related test files not counted' : plural(n, 'related test file')
        return { ...base, outcome: 'error', error: `${check.name} took longer than ${seconds(this.options.timeoutMs)} (${files})` }
      }
      return { ...base, outcome: 'error', error: m.error ?? `${check.name} ${m.status}` }
    }
    if (m.scope !== 'all' && !m.selected) this.relate(change, m.scope)
    const deferred = !!(check.lazyBaseline && check.measureAccepted && check.servable?.(change))
    if (deferred) await this.measureFailing(check, m, change, io)
    if (!state.measured && !deferred) {
      // Nothing measured to compare with, and a post-write state is never a
      // baseline: not judged. The next write measures the accepted state again first.
      const why = this._unmeasured.get(check)
      // A baseline still running in the background says so itself (the same words whether the write came before or after it began).
      if (why?.startsWith('type-check still running in the background')) return { ...base, outcome: 'error', error: why }
      return { ...base, outcome: 'error', error: `${check.name} has no measured accepted state to compare with${why ? ` (${why})` : ''}` }
    }
    const compared = state.compare(m, this.options.rules, touched)
    let { regressions, warnings } = compared
    const { unknown, vanished } = compared
    // A test that passed and no longer runs: hidden (a regression), unless the write removed its declaration.
    const onPurpose = vanished.filter(t => this.removedOnPurpose(check, t, change))
    const hidden = vanished.filter(t => !onPurpose.includes(t))
    regressions.push(...goneProblems(check.name, hidden, one => `that passed no longer ${one ? 'runs' : 'run'} (not collected, or skipped)`))
    const removed = goneProblems(check.name, onPurpose, one => `that passed ${one ? 'was' : 'were'} removed or renamed by this write`)
    if (check.advisory) {
      // An advisory check warns, never rolls back.
      warnings = [...regressions, ...warnings]
      regressions = []
    }
    let flaky: Problem[] = []
    let slow: SlowTest[] = []
    let hangAlone: SlowTest[] = []
    // A test that no longer runs cannot be re-run alone.
    const tests = regressions.filter(p => p.kind === 'test' && p.code !== GONE)
    if (tests.length && this.options.confirmFlaky && check.confirm) {
      const confirmed = await this.confirmFailures(check, tests, regressions, change, io)
      if (confirmed) {
        ;({ flaky, slow, hangAlone } = confirmed)
        // The failures that repeated alone first, the rest as found: the model's first lines are failures
        // the write surely caused, not a timeout no one re-ran because the verdict was already decided.
        const blamed = regressions.filter(p => p.kind !== 'test' || confirmed.blamed.has(p))
        regressions = [...blamed.filter(p => confirmed.repeated.has(p)), ...blamed.filter(p => !confirmed.repeated.has(p))]
      }
    }
    // A flaky or slow test passed alone, one that hangs alone hung before the write too: the accepted state keeps it as passing.
    const passedAlone = [...flaky, ...slow.map(s => s.problem), ...hangAlone.map(s => s.problem)]
    const flakyKeys = new Set(passedAlone.map(p => p.key))
    let kept = passedAlone.length
      ? { ...m, problems: m.problems.filter(p => !flakyKeys.has(p.key)), passed: [...(m.passed ?? []), ...passedAlone.map(p => ({ key: p.key, file: p.file }))] }
      : m
    // Removed tests leave the accepted state with the write (a deleted test file is in no later scope).
    if (removed.length && kept.scope !== 'all') kept = { ...kept, scope: [...new Set([...kept.scope, ...removed.map(p => p.file)])] }
    measurements.set(check, kept)
    const extra = { ...(removed.length ? { removed } : {}), ...(slow.length ? { slow } : {}), ...(hangAlone.length ? { hangAlone } : {}) }
    if (!regressions.length && unknown.length) {
      const files = [...new Set(unknown.map(p => p.file))]
      const why = this._unmeasured.get(check)
      return {
        ...base, outcome: 'error', warnings, flaky, unknown, ...extra,
        error: `${check.name}: ${plural(unknown.length, 'failing test')} in ${listFiles(files)} with no accepted result to compare with${why ? ` (measuring them before the write failed: ${why})` : ''}`,
      }
    }
    return { ...base, outcome: regressions.length ? 'fail' : 'pass', regressions, warnings, flaky, ...extra }
  }

  /**
   * Flaky confirmation: newly failing tests re-run alone (a timed-out one
   * with {@link TIMEOUT_FACTOR}× its limit). When every failure
   * that repeats is such a timeout, the same re-runs are made on the
   * accepted content (`Check.confirmAccepted`): a test that times out alone
   * there too hangs alone whatever the write (it depends on the tests
   * before it, or on time) and is not blamed on it. Returns the tests still
   * blamed; undefined when the re-run could not be judged (every failure stands).
   */
  private async confirmFailures(check: Check, tests: Problem[], regressions: readonly Problem[], change: Change, io: GuardIO): Promise<{ blamed: Set<Problem>; repeated: Set<Problem>; flaky: Problem[]; slow: SlowTest[]; hangAlone: SlowTest[] } | undefined> {
    const timedOut = tests.filter(p => p.timeout).length
    io.notice('info', `re-running ${tests.length} newly failing test${tests.length === 1 ? '' : 's'} alone${timedOut ? ` (${timedOut} that timed out with ${TIMEOUT_FACTOR}× ${timedOut === 1 ? 'its' : 'their'} limit)` : ''}…`, 'start')
    const confirmation = await check.confirm!(tests, this.checkIO(io))
    if (!confirmation) return undefined
    const blamed = new Set([...confirmation.still, ...confirmation.notRerun ?? []])
    const slow = confirmation.slow ?? []
    const slowKeys = new Set(slow.map(s => s.problem.key))
    const flaky = tests.filter(p => !blamed.has(p) && !slowKeys.has(p.key))
    let hangAlone: SlowTest[] = []
    // Only timeouts repeated, and nothing else is wrong: did they hang alone before the write too?
    const others = regressions.filter(p => p.kind !== 'test' || p.code === GONE)
    const onlyTimeouts = !others.length && !confirmation.notRerun?.length && confirmation.still.length > 0 && confirmation.still.every(p => p.timeout)
    if (onlyTimeouts && check.confirmAccepted && check.servable?.(change)) {
      io.notice('info', `re-running ${plural(confirmation.still.length, 'test')} that timed out alone on the content before the write…`, 'start')
      const before = await check.confirmAccepted(confirmation.still, change, this.checkIO(io))
      const hung = new Set(before?.still ?? [])
      hangAlone = confirmation.still.filter(p => hung.has(p)).map(p => ({ problem: p, limitMs: p.timeout!.limitMs, rerunLimitMs: longerLimit(p.timeout!.limitMs) }))
      for (const p of hung) blamed.delete(p)
    }
    const said = [
      flaky.length ? `${flaky.length} failure${flaky.length === 1 ? '' : 's'} did not repeat (flaky)` : '',
      slow.length ? `${plural(slow.length, 'test')} passed only with a longer time limit` : '',
      hangAlone.length ? `${plural(hangAlone.length, 'test')} ${hangAlone.length === 1 ? 'times' : 'time'} out alone before the write too` : '',
    ].filter(Boolean)
    const rest = confirmation.notRerun?.length ? ` (${plural(confirmation.still.length, 'failure')} repeated; ${confirmation.notRerun.length} other${confirmation.notRerun.length === 1 ? '' : 's'} not re-run: the verdict was decided)` : ''
    io.notice(said.length ? 'warn' : 'info', said.length ? `${said.join('; ')}; not blamed on the write${rest}` : `failures confirmed${rest}`, 'end')
    return { blamed, repeated: new Set(confirmation.still.filter(p => blamed.has(p))), flaky, slow, hangAlone }
  }

  /**
   * Whether a test that no longer runs was removed or renamed by the write
   * itself: a file that may declare it was touched, and no such file
   * declares it any more (or exists). A test hidden while its declaration
   * stays (a build tag, a skip mark, a conftest ignore) is not.
   */
  private removedOnPurpose(check: Check, test: { key: string; file: string }, change: Change): boolean {
    const source = check.testSource?.(test, change) ?? quotedTitle(test)
    const touched = new Set(change.files)
    if (!source.files.some(f => touched.has(f))) return false
    return !source.files.some(f => {
      const text = readIfPresent(join(this.options.root, f))
      return !!text && source.declaration.test(text.toString('utf8'))
    })
  }

  /**
   * The accepted result of the test files that fail after the write and
   * whose accepted result is not current (a file the write
   * created has none: its tests are new), measured on the accepted content
   * (`Check.measureAccepted`), so a test failing before and after is not
   * blamed on the write. Tests that pass after the write are never measured
   * again: they cannot be new failures.
   */
  private async measureFailing(check: Check, m: Measurement, change: Change, io: GuardIO): Promise<void> {
    const state = this._accepted.get(check)!
    const created = new Set(change.files.filter((_, i) => change.before?.get(change.paths[i]!) === null))
    // Current: measured since the last change nobody judged (a shell command, a fixture no import graph sees).
    const current = this._current.get(check)
    // Failing, or declaring tests that no longer run (did they pass before?).
    const candidates = [...m.problems.filter(p => p.kind === 'test' && !p.own).map(p => p.file), ...m.suspect ?? []]
    const files = [...new Set(candidates.filter(f => !current?.has(f) && !created.has(f)))].sort()
    if (!files.length) return
    io.notice('info', `measuring the accepted state of ${plural(files.length, 'failing test file')}: ${check.verb} on the content before the write…`, 'start')
    const accepted = await check.measureAccepted!(files, change, this.checkIO(io))
    if (!accepted || accepted.status !== 'ok') {
      const why = accepted?.error ?? accepted?.status ?? 'it cannot be served the content before this write'
      this._unmeasured.set(check, why)
      io.notice('warn', `${check.name}: could not measure the accepted state (${why})`, 'end')
      return
    }
    this._unmeasured.delete(check)
    state.advance(accepted)
    check.advance?.(accepted)
    this.markCurrent(check, accepted)
    io.notice('info', `${check.name}: ${plural(accepted.problems.length, 'existing problem')} in the accepted state of ${plural(files.length, 'failing test file')}`, 'end')
  }

  /**
   * After a rollback that put every file back byte for byte: nothing is
   * measured again; each check that measured the write returns to its state
   * from before it (see `Check.restore`).
   */
  async restore(measured: Measured, io: GuardIO): Promise<void> {
    for (const check of measured.measurements.keys()) {
      try {
        await check.restore?.(this.checkIO(io))
      } catch {
        // A check that cannot restore re-checks on its next measurement instead.
      }
    }
    io.notice('info', 'accepted state confirmed: every file is back byte for byte (nothing re-checked)')
  }

  /** A copy of every check's accepted state: what a turn's unfinished change is judged against when the turn ends (ADR 0037). */
  acceptedCopy(): Map<Check, AcceptedState> {
    return new Map([...this._accepted].map(([check, state]) => [check, state.clone()]))
  }

  /** Every check's accepted state as it is now (not a copy: read it, do not keep it). */
  get acceptedStates(): ReadonlyMap<Check, AcceptedState> {
    return this._accepted
  }

  /**
   * Measure `change` (every path a turn's held writes touched, `before` as it
   * was before the first of them) against `base` — copies from
   * {@link acceptedCopy} — instead of the accepted state. No accepted
   * result is taken as current: every failing test file is measured on the
   * content before. The accepted state is untouched; `base` advances with
   * what was measured on the content before. Call inside `queue`.
   */
  async measureAgainst(base: ReadonlyMap<Check, AcceptedState>, change: Change, io: GuardIO, describe: string): Promise<Measured> {
    const accepted = new Map(this._accepted)
    const current = new Map(this._current)
    for (const [check, state] of base) this._accepted.set(check, state)
    this._current.clear()
    try {
      return await this.measure(change, io, describe)
    } finally {
      for (const [check, state] of accepted) this._accepted.set(check, state)
      this._current.clear()
      for (const [check, files] of current) this._current.set(check, files)
    }
  }

  /**
   * `now` (copies from {@link acceptedCopy}, each check's result on the
   * content before `change`) advanced with `change` measured over it: what
   * every check finds with those files as they are now. Undefined when that
   * is not known from this measuring alone: a check found something `now`
   * did not have, could not judge, or stopped early (then measure against
   * the base instead). `change` carries no content before: nothing is
   * measured on it. The accepted state is untouched. Call inside `queue`.
   */
  async measureOver(now: Map<Check, AcceptedState>, change: Change, io: GuardIO, describe: string): Promise<Map<Check, AcceptedState> | undefined> {
    const measured = await this.measureAgainst(now, { paths: change.paths, files: change.files }, io, describe)
    if (measured.checks.length !== this.options.checks.length || measured.checks.some(c => c.outcome !== 'pass' || c.partial)) return undefined
    for (const [check, m] of measured.measurements) {
      if (m.partial) return undefined
      now.get(check)?.advance(m)
    }
    return now
  }

  /** Return to `base` (a turn's change was undone as a group): the next judgement measures what is current first. */
  resetTo(base: ReadonlyMap<Check, AcceptedState>): void {
    for (const [check, state] of base) this._accepted.set(check, state)
    this.markDirty()
  }

  /** The write is kept: the accepted state advances to what was measured. */
  advance(measured: Measured): void {
    for (const [check, m] of measured.measurements) {
      if (m.partial) {
        // Only part of the state was measured: the whole is measured again before the next write.
        this._accepted.get(check)?.reset()
        continue
      }
      this._accepted.get(check)?.advance(m)
      check.advance?.(m)
      this.markCurrent(check, m)
    }
  }

  /**
   * Change impact before a write: who imports the files it is about to
   * change, from each profile's import graph, nearest first, at most `max`
   * each. Call inside `queue` (the TypeScript graph lives in the type-check
   * worker). A source that fails is reported as a notice and skipped.
   */
  async impact(change: Change, io: GuardIO, max: number): Promise<ImpactList[]> {
    const lists: ImpactList[] = []
    for (const source of this.options.impact ?? []) {
      try {
        const list = await source.importers(change, max, this.checkIO(io))
        if (list) lists.push(list)
      } catch (error) {
        io.notice('warn', `impact: could not read the import graph (${(error as Error)?.message ?? error})`)
      }
    }
    return lists
  }

  /**
   * After a rollback: measure again what `measured` measured and return
   * problems the accepted state still does not have (empty when the accepted
   * state is back, as it should be).
   */
  async recheck(change: Change, measured: Measured, io: GuardIO): Promise<{ leftover: Problem[]; errors: string[] }> {
    const leftover: Problem[] = []
    const errors: string[] = []
    // After the rollback the deleted files are back: the importers measured are found again through them.
    const selection = measured.selection ?? change
    for (const check of measured.measurements.keys()) {
      const state = this._accepted.get(check)
      if (!state?.measured) continue
      io.notice('info', `${check.verb} again after the rollback…`, 'start')
      const m = await check.measure(check.lazyBaseline ? selection : change, this.checkIO(io))
      if (m.status !== 'ok') {
        errors.push(m.error ?? `${check.name} ${m.status}`)
        continue
      }
      const { regressions, vanished } = state.compare(m, this.options.rules, new Set(change.files))
      leftover.push(...regressions, ...goneProblems(check.name, vanished, one => `that passed still ${one ? 'does' : 'do'} not run`))
      io.notice(regressions.length ? 'error' : 'info', regressions.length ? `${check.name}: the accepted state is NOT back` : `${check.name}: accepted state confirmed`, 'end')
    }
    if (leftover.length || errors.length) this._unreflected++
    return { leftover, errors }
  }

  /** Start the checks' workers in the background (session start); measures nothing. */
  startWorkers(): void {
    for (const check of this.options.checks) {
      try {
        check.startWorkers?.()
      } catch {
        // A worker that cannot start now starts (or fails, reported) on its first run.
      }
    }
  }

  /** Forget every accepted state and release the checks' workers. */
  async dispose(): Promise<void> {
    this._abort.abort()
    for (const state of this._accepted.values()) state.reset()
    this._known.clear()
    this._knownAll = false
    this._current.clear()
    await Promise.all(this.options.checks.map(async c => {
      try {
        await c.dispose?.()
      } catch {
        // A check that cannot release cleanly must not block disposal of the others.
      }
    }))
  }

  private checkIO(io: GuardIO, timeoutMs = this.options.timeoutMs): CheckIO {
    return {
      record: io.record,
      notice: (level, text) => io.notice(level, text),
      timeoutMs,
      maxOutputBytes: this.options.maxOutputBytes,
      ...(this.options.vault ? { vault: this.options.vault } : {}),
      signal: io.signal ? AbortSignal.any([io.signal, this._abort.signal]) : this._abort.signal,
    }
  }
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`
}

/** One line for the end-of-check notice. */
function summarise(v: CheckVerdict): string {
  if (v.outcome === 'error') return `${v.check}: not judged (${v.error})`
  if (v.outcome === 'fail') return `${v.check} failed: ${plural(v.regressions.length, 'new problem')} (${(v.durationMs / 1000).toFixed(1)} s)`
  const extra = v.warnings.length ? `, ${plural(v.warnings.length, 'warning')}` : ''
  return `${v.check} passed${extra} (${(v.durationMs / 1000).toFixed(1)} s)`
}

/** The default {@link Check.testSource}: the test's own file, declaring its last title quoted (`it('adds', …)`). */
function quotedTitle(test: { key: string; file: string }): { files: string[]; declaration: RegExp } {
  const title = testName(test).split(' > ').at(-1)!.replace(/\s*\[[^\]]*\]$/, '')
  const escaped = title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  return { files: [test.file], declaration: new RegExp(`(['"\`])${escaped}\\1`) }
}
