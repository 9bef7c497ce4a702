import { AcceptedState, type JudgeRules } from './accepted.ts'
import { SerialQueue } from './queue.ts'
import type { ImpactList } from './impact/graph.ts'
import type { Change, Check, CheckIO, CheckVerdict, ImpactSource, Measurement, Problem, RunRecord, Verdict } from './types.ts'

/** What the engine reports while it works; the Cordis adapter turns these into events. */
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
  /** Re-run newly failing tests once, alone, before blaming the write. */
  confirmFlaky: boolean
  /** Change-impact sources (empty or absent: the impact mode is off). */
  impact?: ImpactSource[]
}

/** A judged change, with the measurements needed to accept it. */
export interface Judgement extends Verdict {
  /** Measurements to advance the accepted state with, if the write is kept. */
  readonly measurements: ReadonlyMap<Check, Measurement>
}

/**
 * The checking engine for one workspace: measures the accepted state,
 * judges a change against it, and advances it when a write is kept.
 * Callers serialise work through `queue` (checks of one workspace never
 * overlap). No Cordis imports.
 */
export class Guard {
  readonly queue = new SerialQueue()
  private readonly _accepted = new Map<Check, AcceptedState>()
  private _dirty = false
  private _baselined = false
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
  }

  /**
   * Make sure the accepted state is measured before a write runs: the
   * baseline (whole workspace) the first time, or — after an unjudged change —
   * a re-measure of what the coming write can affect. Call inside `queue`.
   */
  async prepare(io: GuardIO, upcoming?: Change): Promise<void> {
    const baseline = !this._baselined
    if (!baseline && !this._dirty) return
    this._baselined = true
    this._dirty = false
    for (const check of this.options.checks) {
      const state = this._accepted.get(check)!
      if (!baseline && !state.measured) continue
      io.notice('info', `measuring the ${baseline ? 'baseline' : 'current'} state: ${check.verb}…`, 'start')
      const m = await check.measure(baseline ? undefined : upcoming, this.checkIO(io))
      if (m.status === 'ok') {
        state.advance(m)
        check.advance?.(m)
        io.notice('info', `${check.name}: ${m.problems.length} existing problem${m.problems.length === 1 ? '' : 's'} in the accepted state`, 'end')
      } else {
        io.notice('warn', `${check.name}: could not measure the accepted state (${m.error ?? m.status})`, 'end')
      }
    }
  }

  /**
   * Judge a change: run the pipeline in order, stop at the first check that
   * finds a regression. Newly failing tests are re-run alone first (flaky
   * tests must not roll back good work). Call inside `queue`, after the write.
   */
  async judge(change: Change, io: GuardIO, describe: string): Promise<Judgement> {
    const checks: CheckVerdict[] = []
    const measurements = new Map<Check, Measurement>()
    for (const check of this.options.checks) {
      const started = performance.now()
      io.notice('info', `${check.verb} after ${describe}…`, 'start')
      const verdict = await this.judgeOne(check, change, io, measurements)
      verdict.durationMs = Math.round(performance.now() - started)
      checks.push(verdict)
      io.notice(verdict.outcome === 'pass' ? 'info' : verdict.outcome === 'fail' ? 'warn' : 'error', summarise(verdict), 'end')
      if (verdict.outcome === 'fail') break
    }
    return { checks, regression: checks.some(c => c.outcome === 'fail'), measurements }
  }

  private async judgeOne(check: Check, change: Change, io: GuardIO, measurements: Map<Check, Measurement>): Promise<CheckVerdict> {
    const state = this._accepted.get(check)!
    const base: CheckVerdict = { check: check.name, outcome: 'pass', regressions: [], warnings: [], flaky: [], durationMs: 0, ...(check.advisory ? { advisory: true } : {}) }
    const m = await check.measure(change, this.checkIO(io))
    if (m.notes?.length) base.notes = m.notes
    if (m.status !== 'ok') return { ...base, outcome: 'error', error: m.error ?? `${check.name} ${m.status}` }
    if (!state.measured) {
      // No baseline to compare with: accept this state as the new baseline, say so.
      measurements.set(check, m)
      return { ...base, outcome: 'error', error: `${check.name}: no measured baseline to compare with; this state is now the baseline` }
    }
    let { regressions, warnings } = state.compare(m, this.options.rules)
    if (check.advisory) {
      // An advisory check warns, never rolls back.
      warnings = [...regressions, ...warnings]
      regressions = []
    }
    let flaky: Problem[] = []
    const tests = regressions.filter(p => p.kind === 'test')
    if (tests.length && this.options.confirmFlaky && check.confirm) {
      io.notice('info', `re-running ${tests.length} newly failing test${tests.length === 1 ? '' : 's'} alone…`, 'start')
      const still = await check.confirm(tests, this.checkIO(io))
      if (still) {
        const confirmed = new Set(still)
        flaky = tests.filter(p => !confirmed.has(p))
        regressions = regressions.filter(p => p.kind !== 'test' || confirmed.has(p))
        io.notice(flaky.length ? 'warn' : 'info', flaky.length ? `${flaky.length} failure${flaky.length === 1 ? '' : 's'} did not repeat (flaky); not blamed on the write` : 'failures confirmed', 'end')
      }
    }
    // A flaky test passed alone: the accepted state keeps it as passing.
    const flakyKeys = new Set(flaky.map(p => p.key))
    measurements.set(check, flaky.length
      ? { ...m, problems: m.problems.filter(p => !flakyKeys.has(p.key)), passed: [...(m.passed ?? []), ...flaky.map(p => ({ key: p.key, file: p.file }))] }
      : m)
    return { ...base, outcome: regressions.length ? 'fail' : 'pass', regressions, warnings, flaky }
  }

  /** The write is kept: the accepted state advances to what was measured. */
  accept(judgement: Judgement): void {
    for (const [check, m] of judgement.measurements) {
      this._accepted.get(check)?.advance(m)
      check.advance?.(m)
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
   * After a rollback: measure again what the judgement measured and return
   * problems the accepted state still does not have (empty when the accepted
   * state is back, as it should be).
   */
  async recheck(change: Change, judgement: Judgement, io: GuardIO): Promise<{ leftover: Problem[]; errors: string[] }> {
    const leftover: Problem[] = []
    const errors: string[] = []
    for (const check of judgement.measurements.keys()) {
      const state = this._accepted.get(check)
      if (!state?.measured) continue
      io.notice('info', `${check.verb} again after the rollback…`, 'start')
      const m = await check.measure(change, this.checkIO(io))
      if (m.status !== 'ok') {
        errors.push(m.error ?? `${check.name} ${m.status}`)
        continue
      }
      const { regressions } = state.compare(m, this.options.rules)
      leftover.push(...regressions)
      io.notice(regressions.length ? 'error' : 'info', regressions.length ? `${check.name}: the accepted state is NOT back` : `${check.name}: accepted state confirmed`, 'end')
    }
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
    this._baselined = false
    await Promise.all(this.options.checks.map(async c => {
      try {
        await c.dispose?.()
      } catch {
        // A check that cannot release cleanly must not block disposal of the others.
      }
    }))
  }

  private checkIO(io: GuardIO): CheckIO {
    return {
      record: io.record,
      notice: (level, text) => io.notice(level, text),
      timeoutMs: this.options.timeoutMs,
      maxOutputBytes: this.options.maxOutputBytes,
      signal: io.signal ? AbortSignal.any([io.signal, this._abort.signal]) : this._abort.signal,
    }
  }
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`
}

/** One line for the end-of-check notice. */
export function summarise(v: CheckVerdict): string {
  if (v.outcome === 'error') return `${v.check}: not judged (${v.error})`
  if (v.outcome === 'fail') return `${v.check} failed: ${plural(v.regressions.length, 'new problem')} (${(v.durationMs / 1000).toFixed(1)} s)`
  const extra = v.warnings.length ? `, ${plural(v.warnings.length, 'warning')}` : ''
  return `${v.check} passed${extra} (${(v.durationMs / 1000).toFixed(1)} s)`
}
