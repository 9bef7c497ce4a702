import { realpathSync } from 'node:fs'
import { resolveInside, toPosixRelative } from 'dsh-common'
import type { Session } from 'dsh-session'
import type { ToolExecution, ToolResult } from 'dsh-tools'
import type { StepBatch } from 'dsh-agent'
import type { CallChange, CommitRequest, RollbackRequest, RollbackResult } from 'dsh-snapshot'
import { Announced, announcedChange, changeOf, expectedBefore } from './call-change.ts'
import { measureOwn, OWN_MEASURE_NOTICE, ownBefore, ownChange, type OwnMeasure } from './own-measure.ts'
import type { Config } from './config.ts'
import { Guard, type GuardIO } from './measure.ts'
import { judge, judgeStop, worseThan, type JudgedWrite } from './judge.ts'
import { act, type Conclusion } from './act.ts'
import type { VerifyLearning, VerifyResult } from './result.ts'
import { formatImpact } from './impact.ts'
import { listFiles, openNotes, undoneMessage, type HeldWriteName } from './message.ts'
import { buildProfiles } from './profiles.ts'
import { warmUp, type WarmState } from './warm-up.ts'
import type { AcceptedState } from './accepted.ts'
import { formatProblem } from './problems.ts'
import type { StopRefusal } from 'dsh-agent'
import type { Change, Check, CheckVerdict, Problem, RunRecord, ThreadHeap } from './types.ts'

/** A progress line for UIs (the CLI shows it as a spinner or a line). */
export interface DstvalidNotice {
  sessionId: string
  level: 'info' | 'warn' | 'error'
  text: string
  phase?: 'start' | 'end'
}

/** What the verifier needs from its host (the Cordis adapter): events out, the session log, a logger. */
export interface VerifierHost {
  /** Append a `verify/run` record to the session's log. */
  record(session: Session, run: RunRecord): void
  notice(notice: DstvalidNotice): void
  /** Ask the snapshot plugin to restore a scope; undefined when nobody answered. */
  rollback(request: RollbackRequest): Promise<RollbackResult | undefined>
  /** Tell the snapshot plugin a scope is kept. */
  commit(request: CommitRequest): void
  /** Whether dsh-snapshot is loaded (it announces what each guarded call changed, and can put it back). */
  snapshotLoaded(): boolean
  result(result: VerifyResult): void
  /** A write returned kept for now while its verdict runs on (background verdicts); its final verdict follows as `result`. */
  deferred(deferred: VerifyDeferred): void
  /** A kept, verified write (called only with `learnings` on). */
  learning(learning: VerifyLearning): void
  warn(text: string): void
}

/** The `verify/deferred` payload: a write returned to the agent before its lazy checks (tests) ran; they run in the background. */
export interface VerifyDeferred {
  sessionId: string
  callId: string
  tool: string
  /** Workspace-relative paths of the call. */
  paths: string[]
}

/** The one line a write's result carries while its verdict runs in the background. */
export const PENDING_NOTE = 'kept for now: its tests are running; the verdict comes before your next call'

/** What a call needs: a write with the paths it will touch, or a shell call. */
export type CallPlan = { kind: 'write'; paths: string[] } | { kind: 'shell' }

/** A write kept while the turn has open debt: its snapshot scope stays open until the turn ends (ADR 0037). */
interface HeldWrite {
  callId: string
  tool: string
  /** Workspace-relative paths of this call. */
  files: string[]
  /** It was kept for now: its new problems were in other files. */
  debt: boolean
  /** Kept for now: the check that found them, and what it found (said again as rolled back when it is undone). */
  failed?: CheckVerdict
  /** Its verdict measured every check on its content (none not judged, none stopped early): the accepted state reflects it. */
  complete: boolean
}

/** A turn's unfinished change: the writes held since its first write kept for now, and what they are judged against at the stop. */
interface TurnDebt {
  session: Session
  guard: Guard
  /** The accepted states before the first write kept for now. */
  base: Map<Check, AcceptedState>
  held: HeldWrite[]
  /** Per absolute path: its content before the first held write to it (null: absent). */
  before: Map<string, Buffer | null>
  /** Some held write's content before is not known (a shell call). */
  unknownBefore: boolean
  /** Problems the writes kept for now reported, still in the accepted state when last looked. */
  open: Problem[]
  /** Stops refused so far. */
  refusals: number
  /** Calls that changed a file (or may have: a shell call not judged) since the debt opened, whatever their verdict. */
  wrote: number
  /** {@link wrote} at the last refusal: unchanged at the next stop, the model wrote nothing since it was asked to fix. */
  wroteAtRefusal?: number
  /** The guard's {@link Guard.epoch} when the debt opened: unchanged, the accepted state still describes the workspace. */
  epoch: number
  /** The last stop's judgement, with the number of held writes it saw: a stop with nothing written since (nor changed outside) is not judged again. */
  last?: { held: number; failed: CheckVerdict }
}

/** Writes of an agent step awaiting the step's judgement (per: 'step'). */
interface PendingStep {
  session: Session
  step: number
  writes: (JudgedWrite & { paths: string[] })[]
  /** Each path's content before the step's first write to it. */
  before: Map<string, Buffer | null>
  /** Some write's content before is not known. */
  unknownBefore: boolean
}

/**
 * Judging for every workspace of one plugin instance: plans a call,
 * prepares the accepted state before it runs, then after it (per call, or
 * per step) measures (`measure.ts`), judges (`judge.ts`) and acts
 * (`act.ts`); warms a session's workspace, releases the measuring. No
 * Cordis in here; `index.ts` wires it to events.
 */
export class Verifier {
  private _enabled: boolean
  private readonly _guards = new Map<string, Guard>()
  private readonly _steps = new Map<string, PendingStep>()
  /** Per session: the turn's open debt (turn verdicts). */
  private readonly _debts = new Map<string, TurnDebt>()
  /** What dsh-snapshot announced calls changed, until they are judged. */
  private readonly _announced = new Announced()
  /** Sessions told that this plugin measures calls itself. */
  private readonly _ownNoticed = new Set<string>()
  /** Per session: verdicts still running after their write returned (background verdicts). */
  private readonly _pending = new Map<string, Set<Promise<void>>>()
  /** Per session: background verdicts that undid a write, said to the agent at its next guarded call or stop. */
  private readonly _undone = new Map<string, string[]>()

  constructor(private readonly config: Config, private readonly host: VerifierHost) {
    this._enabled = config.enabled
  }

  get enabled(): boolean {
    return this._enabled
  }

  /** Start judging writes again; the next write measures a fresh baseline. */
  enable(): void {
    this._enabled = true
  }

  /** Stop judging writes: pending step state is dropped (its captures committed) and warm checkers are released. */
  async disable(): Promise<void> {
    this._enabled = false
    await this.release()
  }

  /** The engine of a workspace (created on first use); `vault`: where its caches are kept (the first session's vault). */
  guardFor(root: string, vault?: string): Guard {
    const key = realpathSync(root)
    let guard = this._guards.get(key)
    if (!guard) {
      const { profiles, notes } = buildProfiles(key, this.config, vault)
      guard = new Guard({
        root: key,
        checks: profiles.flatMap(p => p.checks),
        rules: { strictTests: this.config.strictTests, isTestFile: file => new RegExp(this.config.testFilePattern).test(file) },
        timeoutMs: this.config.timeoutMs,
        maxOutputBytes: this.config.maxOutputBytes,
        confirmFlaky: this.config.confirmFlaky,
        ...(vault ? { vault } : {}),
        impact: profiles.flatMap(p => p.impact ?? []),
      })
      for (const note of notes) this.host.warn(note)
      this._guards.set(key, guard)
    }
    return guard
  }

  /** What kind of judgement a call needs, if any. */
  plan(exec: ToolExecution): CallPlan | undefined {
    if (!this._enabled || !exec.tool) return undefined
    if (exec.tool.effects === 'write') {
      try {
        return { kind: 'write', paths: exec.tool.paths?.(exec.arguments) ?? [] }
      } catch {
        // Arguments the tool will reject anyway (schema failure): nothing to judge.
        return undefined
      }
    }
    if (exec.tool.effects === 'shell') return { kind: 'shell' }
    return undefined
  }

  /** The `snapshot/changed` answer: true (a verdict promised, the change kept for it) for every call this verifier judges. */
  heard(change: CallChange): boolean {
    if (!this._enabled || (change.effects === 'shell' && !this.config.shell)) return false
    this._announced.put(change)
    return true
  }

  private io(session: Session, signal?: AbortSignal): GuardIO {
    return {
      record: run => this.host.record(session, run),
      notice: (level, text, phase) => this.host.notice({ sessionId: session.id, level, text, ...(phase ? { phase } : {}) }),
      signal,
    }
  }

  /** The `tools/execute` listener: prepare, run the tool, judge (or pend for the step). */
  async execute(exec: ToolExecution, next: () => Promise<ToolResult>): Promise<ToolResult> {
    const plan = this.plan(exec)
    if (!plan) return next()
    const session = exec.session
    // Background verdicts: every earlier one is final (a rollback applied) before this call runs — dsh-tools' `execute`
    // waits for `verify/settle` before the waterfall, the one way into it; one that undid a write refuses this call.
    const undone = this.takeUndone(session.id)
    if (undone.length) return { content: `not run: ${undone.join('\n')}${undone.at(-1)!.endsWith(';') ? ' ' : '\n'}call again`, isError: true }
    let guard: Guard
    try {
      guard = this.guardFor(session.cwd, session.vault)
    } catch (error) {
      // The checks could not be set up (e.g. an unreadable package.json): run
      // the call unjudged and say so, rather than failing the turn.
      const message = (error as Error)?.message ?? String(error)
      const result = await next()
      this._announced.take(session.id, exec.callId)
      this.host.commit({ sessionId: session.id, callId: exec.callId })
      if (!result.isError) this.noteWrite(session.id)
      this.io(session, exec.signal).notice('error', `checks could not be set up: ${message}`)
      return plan.kind === 'write' ? withNotes(result, [`warning: not verified: dsh-dstvalid could not set up checks for this workspace (${message})`]) : result
    }
    if (plan.kind === 'shell' && !this.config.shell) {
      const result = await next()
      guard.markDirty()
      const debt = this._debts.get(session.id)
      if (debt) debt.last = undefined
      // Not judged, so not known to have written nothing: it counts as writing.
      this.noteWrite(session.id)
      return result
    }
    const io = this.io(session, exec.signal)
    // A write or shell call judged per call with dsh-snapshot (which can undo it later): it returns once the checks that decide at once passed.
    const background = this.config.background && this.host.snapshotLoaded()
    let early!: (result: ToolResult) => void
    const returned = new Promise<ToolResult>(resolve => { early = resolve })
    const task = guard.queue.run(async () => {
      const paths = plan.kind === 'write' ? changeOf(session.cwd, plan.paths) : undefined
      // What the call changes is dsh-snapshot's to say, when it returns; without it, measured here.
      const own = this.host.snapshotLoaded() ? undefined : this.measureOwn(session, guard, paths, io)
      const planned = paths && (own ? ownBefore(paths, own) : expectedBefore(paths))
      // A shell call with dsh-snapshot is judged after it first: dsh-snapshot announces its content before.
      const afterFirst = plan.kind === 'shell' && !own
      try {
        await guard.prepare(io, planned, afterFirst)
      } catch (error) {
        // Measured nothing: the judgement reports "no measured baseline" instead of guessing.
        io.notice('error', `measuring the accepted state failed: ${(error as Error)?.message ?? error}`)
      }
      const impact = planned && this.config.impact !== 'off' ? await this.impactOf(guard, planned, io) : undefined
      const raw = await next()
      // The impact list goes with a write that ran; a rollback replaces the whole result anyway.
      const result = raw.isError ? raw : withNotes(raw, impact)
      const announced = this._announced.take(session.id, exec.callId)
      const change = own ? ownChange(paths, own) : announcedChange(guard.options.root, paths, announced)
      if ((plan.kind === 'write' && result.isError) || !change.paths.length) {
        // A failed write tool changed nothing (the workspace tools are all-or-nothing): nothing to judge.
        this.host.commit({ sessionId: session.id, callId: exec.callId })
        return result
      }
      // It wrote, whatever its verdict (kept, kept for now, rolled back): the model is working on the turn's change.
      this.noteWrite(session.id)
      if (this.config.per === 'step' && exec.step !== undefined && plan.kind === 'write') {
        this.pend(session, exec, change)
        return result
      }
      const writes = [{ callId: exec.callId, tool: exec.name, files: change.files }]
      let finish: (() => void) | undefined
      const decided = background ? () => {
        finish = this.defer(session, exec, change.files)
        early(withNotes(result, [PENDING_NOTE]))
      } : undefined
      try {
        const conclusion = await this.settle(session, change, writes, `${exec.name} ${listFiles(change.files)}`, { callId: exec.callId }, io, decided)
        if (finish) this.delivered(session, exec.name, change.files, conclusion)
        return rewrite(result, conclusion)
      } finally {
        finish?.()
      }
    })
    if (!background) return task
    return Promise.race([task, returned])
  }

  /** A write's verdict goes on in the background: logged, and every guarded call, stop and settle waits for it until `done`. */
  private defer(session: Session, exec: ToolExecution, files: string[]): () => void {
    let done!: () => void
    const verdict = new Promise<void>(resolve => { done = resolve })
    const pending = this._pending.get(session.id) ?? new Set()
    this._pending.set(session.id, pending)
    pending.add(verdict)
    this.host.deferred({ sessionId: session.id, callId: exec.callId, tool: exec.name, paths: [...files] })
    this.io(session).notice('info', `${exec.name} ${listFiles(files)} returned kept for now: its tests run in the background`)
    return () => {
      pending.delete(verdict)
      if (!pending.size) this._pending.delete(session.id)
      done()
    }
  }

  /** A background verdict came in: a rollback is kept to refuse the next call with; a kept write's notes reach the model as context. */
  private delivered(session: Session, tool: string, files: string[], conclusion: Conclusion): void {
    const what = `the verdict on your earlier ${tool} of ${listFiles(files)} came in:`
    if (conclusion.replacement !== undefined) {
      const restored = conclusion.kept ? '' : files.length === 1 ? '\nthe file is as before;' : '\nthe files are as before;'
      const texts = this._undone.get(session.id) ?? []
      texts.push(`${what} ${conclusion.replacement}${restored}`)
      this._undone.set(session.id, texts)
      return
    }
    if (conclusion.notes.length) session.append('context/message', { source: 'dsh-dstvalid', text: [`${what} kept`, ...conclusion.notes].join('\n') })
  }

  /** Resolves when every background verdict of the session is final (those that start meanwhile too). */
  async settleVerdicts(sessionId: string): Promise<void> {
    for (;;) {
      const pending = this._pending.get(sessionId)
      if (!pending?.size) return
      await Promise.all([...pending])
    }
  }

  /** The background verdicts that undid a write since the agent was last told (each said once). */
  takeUndone(sessionId: string): string[] {
    const texts = this._undone.get(sessionId) ?? []
    this._undone.delete(sessionId)
    return texts
  }

  /** Measure a call here (dsh-snapshot is not loaded), saying so once per session. */
  private measureOwn(session: Session, guard: Guard, write: Change | undefined, io: GuardIO): OwnMeasure {
    if (!this._ownNoticed.has(session.id)) io.notice('warn', OWN_MEASURE_NOTICE)
    this._ownNoticed.add(session.id)
    return measureOwn(guard.options.root, write)
  }

  /**
   * Files changed while no tool call ran (a background process, an
   * editor), reported by the snapshot plugin: the next judgement measures
   * the current state first, so they are never blamed on a write.
   */
  outside(root: string): void {
    let key: string
    try {
      key = realpathSync(root)
    } catch {
      // The workspace is gone: nothing to re-measure.
      return
    }
    this._guards.get(key)?.markDirty()
    // A turn's change is judged again at its next stop: the workspace moved under it.
    for (const debt of this._debts.values()) if (debt.guard.options.root === key) debt.last = undefined
  }

  /**
   * Measure, judge and act on one change. An unexpected failure of the
   * measuring becomes data: the write is kept (its snapshot committed) with
   * a "not verified" note, and an error notice.
   */
  private async settle(session: Session, change: Change, writes: JudgedWrite[], describe: string, scope: { callId?: string; step?: number }, io: GuardIO, decided?: () => void): Promise<Conclusion> {
    const guard = this.guardFor(session.cwd, session.vault)
    try {
      const measured = await guard.measure(change, io, describe, decided)
      const turnVerdicts = this.config.verdicts === 'turn'
      const decision = judge({ verdicts: measured.checks, writes, files: change.files, turnVerdicts, limits: this.limits() })
      const complete = measured.checks.length === guard.checks.length && measured.checks.every(v => v.outcome !== 'error' && !v.partial)
      const hold = (kept?: CheckVerdict) => this.hold(session, change, writes, complete, kept)
      const conclusion = await act({
        decision, change, writes, sessionId: session.id,
        ports: {
          rollback: reason => this.host.rollback({ sessionId: session.id, ...scope, reason }),
          commit: () => (this._debts.has(session.id) ? hold() : this.host.commit({ sessionId: session.id, ...scope })),
          result: r => this.host.result(r),
          ...(this.config.learnings ? { learning: (l: VerifyLearning) => this.host.learning(l) } : {}),
          ...(turnVerdicts ? { provisional: (verdict: CheckVerdict) => this.owe(session, guard, verdict, hold) } : {}),
        },
        accepted: {
          advance: () => guard.advance(measured),
          restore: () => guard.restore(measured, io),
          recheck: () => guard.recheck(change, measured, io),
        },
        notice: io.notice,
        limits: this.limits(),
      })
      const debt = this._debts.get(session.id)
      if (debt && conclusion.kept && !conclusion.provisional) {
        const was = debt.open.length
        debt.open = stillOpen(debt)
        if (was || debt.open.length) conclusion.notes.push(...openNotes(debt.open, { ...this.limits(), maxLines: Math.min(5, this.limits().maxLines) }))
      }
      return conclusion
    } catch (error) {
      const message = (error as Error)?.message ?? String(error)
      guard.markDirty()
      this.host.commit({ sessionId: session.id, ...scope })
      io.notice('error', `dsh-dstvalid failed while judging ${describe}: ${message}`)
      this.host.warn(`dsh-dstvalid failed while judging ${describe}: ${(error as Error)?.stack ?? message}`)
      return { kept: true, notes: [`warning: not verified: dsh-dstvalid failed: ${message}`] }
    }
  }

  /** A write kept for now (turn verdicts): the turn's debt opens (its base measured before the accepted state advances) or grows. */
  private owe(session: Session, guard: Guard, verdict: CheckVerdict, hold: (kept?: CheckVerdict) => void): void {
    if (!this._debts.has(session.id)) {
      this._debts.set(session.id, { session, guard, base: guard.acceptedCopy(), held: [], before: new Map(), unknownBefore: false, open: [], refusals: 0, wrote: 0, epoch: guard.epoch })
    }
    const debt = this._debts.get(session.id)!
    hold(verdict)
    const seen = new Set(verdict.regressions.map(p => p.key))
    debt.open = [...verdict.regressions, ...stillOpen(debt).filter(p => !seen.has(p.key))]
  }

  /** A call changed files (or may have) while the turn has debt: a later stop is refused again rather than undone at once. */
  private noteWrite(sessionId: string): void {
    const debt = this._debts.get(sessionId)
    if (debt) debt.wrote++
  }

  /** Keep a write's snapshot scope open until the turn ends (the turn has debt). */
  private hold(session: Session, change: Change, writes: readonly JudgedWrite[], complete: boolean, kept?: CheckVerdict): void {
    const d = this._debts.get(session.id)!
    for (const w of writes) d.held.push({ callId: w.callId, tool: w.tool, files: [...w.files], debt: !!kept, complete, ...(kept ? { failed: kept } : {}) })
    if (!change.before) d.unknownBefore = true
    for (const [path, bytes] of change.before ?? []) if (!d.before.has(path)) d.before.set(path, bytes)
    // A shell call's paths: their content before is not known here (the snapshot holds it).
    for (const path of change.paths) if (!change.before?.has(path) && !d.before.has(path)) d.unknownBefore = true
  }

  /**
   * The `agent/stop` answer (turn verdicts): with debt open, judge every
   * held write together against the turn's base. No worse: every held
   * write is committed. Worse: the stop is refused (`stopRefusals` times),
   * then the unfinished change is undone as a group and the model told.
   */
  async stop(session: Session): Promise<StopRefusal | undefined> {
    // A background verdict is final before the stop is judged; one that undid a write is said as the stop's refusal.
    await this.settleVerdicts(session.id)
    const undone = this.takeUndone(session.id)
    if (undone.length) return { source: 'dsh-dstvalid', text: `not done yet: ${undone.join('\n')}` }
    const debt = this._debts.get(session.id)
    if (!debt || !this._enabled) return undefined
    const { guard } = debt
    const io = this.io(session)
    return guard.queue.run(async () => {
      const again = debt.last?.held === debt.held.length ? debt.last.failed : undefined
      const known = again ? undefined : this.judgedAlready(debt, io)
      const measured = again || known ? undefined : await this.measureTurn(debt, debt.held, io)
      const failed = again ?? (known ?? measured?.checks)?.find(c => c.outcome === 'fail')
      if (failed) debt.last = { held: debt.held.length, failed }
      const wroteSinceRefusal = debt.wroteAtRefusal === undefined || debt.wrote > debt.wroteAtRefusal
      const decision = judgeStop({ failed, held: debt.held, open: debt.open, refusals: debt.refusals, maxRefusals: this.config.stopRefusals, wroteSinceRefusal, limits: this.limits() })
      if (decision.kind === 'keep') {
        if (measured) guard.advance(measured)
        this.host.commit({ sessionId: session.id, callIds: debt.held.map(w => w.callId) })
        this._debts.delete(session.id)
        io.notice('info', `the turn's change is no worse than the turn's start: ${plural(debt.held.length, 'held write')} kept`)
        return undefined
      }
      if (decision.kind === 'refuse') {
        debt.refusals = decision.attempt
        debt.wroteAtRefusal = debt.wrote
        io.notice('warn', decision.notice)
        return { source: 'dsh-dstvalid', text: decision.text }
      }
      if (decision.why === 'nothing written') io.notice('info', `the stop came with nothing written since it was refused: the unfinished change is undone now (${plural(debt.refusals, 'refusal')} of ${this.config.stopRefusals})`)
      await this.undo(debt, failed!, decision.group, io)
      return undefined
    })
  }

  /**
   * The turn's change judged by what its writes' verdicts measured, when
   * that is the whole truth about the content as it is: every held write's
   * verdict is final and measured every check, nothing changed unjudged
   * since the turn's base (nor was left not back by a rollback), and each
   * check's accepted state is measured. Then the accepted state is each
   * check's result on the current content, and comparing it with the base
   * is what measuring the turn again would find, with nothing run.
   * Undefined when something must be measured: a check not in that state, a
   * failing test the base has no result for, a test that passed and no
   * longer runs (was it removed on purpose?).
   */
  private judgedAlready(debt: TurnDebt, io: GuardIO): CheckVerdict[] | undefined {
    if (!this.reflected(debt)) return undefined
    const touched = new Set(debt.held.flatMap(w => w.files))
    const verdicts = compareStates(debt.base, debt.guard.acceptedStates, debt.guard, touched)
    if (!verdicts) return undefined
    const files = [...touched]
    io.notice('info', `the turn's change (${listFiles(files)}): judged by the verdicts of its ${plural(debt.held.length, 'write')}, every check measured on the content as it is (nothing run again)`)
    return verdicts
  }

  /** Whether the accepted state is each check's result on the workspace as it is (see {@link judgedAlready}). */
  private reflected(debt: TurnDebt): boolean {
    const { guard } = debt
    return guard.epoch === debt.epoch && debt.held.length > 0 && debt.held.every(w => w.complete) && guard.checks.every(c => c.advisory || guard.acceptedStates.get(c)?.measured)
  }

  /**
   * After the unfinished change (`group`) was put back: whether what stays
   * (`rest`) leaves the project worse than the turn's base. With `now` (the
   * accepted state at the turn's end, reflecting it): only what the put-back
   * files can affect is measured (the type-check, their related tests), over
   * `now`; the rest's other results stand. Otherwise, or when that
   * measuring finds anything `now` did not have, every rest path is
   * measured against the base.
   */
  private async restWorse(debt: TurnDebt, group: readonly HeldWrite[], rest: readonly HeldWrite[], now: Map<Check, AcceptedState> | undefined, io: GuardIO): Promise<boolean> {
    if (now) {
      const { guard } = debt
      const files = [...new Set(group.flatMap(w => w.files))]
      const restored: Change = { paths: files.map(f => resolveInside(guard.options.root, f)), files }
      const after = await guard.measureOver(now, restored, io, `undoing the turn's unfinished change (${listFiles(files)})`)
      const verdicts = after && compareStates(debt.base, after, guard, new Set(rest.flatMap(w => w.files)))
      if (verdicts) return verdicts.some(v => v.outcome === 'fail')
    }
    const again = await this.measureTurn(debt, rest, io)
    return !!again?.checks.some(c => c.outcome === 'fail')
  }

  /** Every `writes`' path measured together against the turn's base; undefined when there is nothing to measure. */
  private async measureTurn(debt: TurnDebt, writes: readonly HeldWrite[], io: GuardIO) {
    const files = [...new Set(writes.flatMap(w => w.files))]
    if (!files.length) return undefined
    const paths = files.map(f => resolveInside(debt.guard.options.root, f))
    const before = new Map<string, Buffer | null>()
    let known = !debt.unknownBefore
    for (const p of paths) {
      const b = debt.before.get(p)
      if (b === undefined) known = false
      else before.set(p, b)
    }
    const change: Change = { paths, files, ...(known ? { before } : {}) }
    return debt.guard.measureAgainst(debt.base, change, io, `the turn's change (${listFiles(files)})`)
  }

  /**
   * Undo the unfinished change as a group (every write the debt traces to
   * and every later one that built on it), then judge what stays against
   * the turn's base: still worse (a kept write used what was undone), the
   * rest is undone too. The model reads what was undone at its next request.
   */
  private async undo(debt: TurnDebt, failed: CheckVerdict, group: HeldWrite[], io: GuardIO): Promise<void> {
    const { session, guard } = debt
    const reason = `the turn ended worse than it began: ${failed.check} found ${failed.regressions.map(formatProblem).slice(0, 3).join('; ')}`
    let undone = group
    let rest = debt.held.filter(w => !group.includes(w))
    const now = rest.length && this.reflected(debt) ? guard.acceptedCopy() : undefined
    let rollback = await this.host.rollback({ sessionId: session.id, callIds: undone.map(w => w.callId), reason })
    if (rollback?.matched && rest.length) {
      if (await this.restWorse(debt, group, rest, rollback.failed.length ? undefined : now, io)) {
        const more = await this.host.rollback({ sessionId: session.id, callIds: rest.map(w => w.callId), reason })
        if (more) rollback = { ...more, restored: [...rollback.restored, ...more.restored], deleted: [...rollback.deleted, ...more.deleted], failed: [...rollback.failed, ...more.failed] }
        undone = debt.held
        rest = []
      }
    }
    if (rest.length) this.host.commit({ sessionId: session.id, callIds: rest.map(w => w.callId) })
    this._debts.delete(session.id)
    guard.resetTo(debt.base)
    for (const w of undone) {
      // The turn's verdict, and the check that kept it for now when that was another (a test after a type-check's turn verdict).
      for (const v of w.failed && w.failed.check !== failed.check ? [failed, w.failed] : [failed]) {
        this.host.result({ sessionId: session.id, callId: w.callId, tool: w.tool, paths: w.files, check: v.check, outcome: rollback?.matched ? 'rolled-back' : 'fail', newProblems: v.regressions.map(formatProblem), durationMs: v.durationMs })
      }
    }
    const text = undoneMessage(failed, names(undone), names(rest), rollback, this.limits())
    io.notice(rollback?.matched && !rollback.failed.length ? 'warn' : 'error', text.split('\n')[0]!, 'end')
    session.append('context/message', { source: 'dsh-dstvalid', text })
  }

  /** The turn ended without a stop this verifier answered (aborted, an error): its held writes stay as they are. */
  turnEnded(sessionId: string): void {
    const debt = this._debts.get(sessionId)
    if (!debt) return
    this._debts.delete(sessionId)
    this.host.commit({ sessionId, callIds: debt.held.map(w => w.callId) })
    debt.guard.markDirty()
    this.host.warn(`session ${sessionId}: the turn ended before its change was finished; ${plural(debt.held.length, 'held write')} kept as they are`)
  }

  /**
   * Change impact of a coming write: one notice per import graph, and the
   * lines to append to the result when `impact: 'result'`.
   */
  private async impactOf(guard: Guard, change: Change, io: GuardIO): Promise<string[]> {
    if (!change.files.length) return []
    const lists = await guard.impact(change, io, this.config.impactMax)
    const lines = lists.map(formatImpact).filter((line): line is string => line !== undefined)
    for (const line of lines) io.notice('info', line)
    if (lists.length && !lines.length) io.notice('info', `impact: nothing in the workspace imports ${listFiles(change.files)}`)
    return this.config.impact === 'result' ? lines : []
  }

  private pend(session: Session, exec: ToolExecution, change: Change) {
    const key = session.id
    let pending = this._steps.get(key)
    if (!pending || pending.step !== exec.step) this._steps.set(key, pending = { session, step: exec.step!, writes: [], before: new Map(), unknownBefore: false })
    pending.writes.push({ callId: exec.callId, tool: exec.name, files: change.files, paths: change.paths })
    // The step's accepted content: each path as it was before the step's first write to it.
    if (!change.before) pending.unknownBefore = true
    for (const [path, bytes] of change.before ?? []) if (!pending.before.has(path)) pending.before.set(path, bytes)
  }

  /** The `agent/step-results` listener (per: 'step'): judge the step's writes once, rewrite their results. */
  async stepResults(batch: StepBatch, next: () => Promise<StepBatch['results']>): Promise<StepBatch['results']> {
    const results = await next()
    const pending = this._steps.get(batch.session.id)
    if (!pending || pending.step !== batch.step) return results
    this._steps.delete(batch.session.id)
    if (!this._enabled) return results
    const session = batch.session
    const guard = this.guardFor(session.cwd, session.vault)
    const io = this.io(session)
    const paths = [...new Set(pending.writes.flatMap(w => w.paths))]
    const change: Change = { paths, files: paths.map(p => toPosixRelative(guard.options.root, p)), ...(pending.unknownBefore ? {} : { before: pending.before }) }
    const describe = `step ${batch.step} (${pending.writes.map(w => `${w.tool} ${listFiles(w.files)}`).join('; ')})`
    const conclusion = await guard.queue.run(() => this.settle(session, change, pending.writes, describe, { step: batch.step }, io))
    const judged = new Set(pending.writes.map(w => w.callId))
    return results.map(({ call, result }) => ({ call, result: judged.has(call.callId) ? rewrite(result, conclusion) : result }))
  }

  /** Measure the baseline of a new session's workspace in the background. */
  warm(session: Session): void {
    if (!this._enabled || !this.config.warmOnStart) return
    let guard: Guard
    try {
      guard = this.guardFor(session.cwd, session.vault)
    } catch (error) {
      this.host.warn(`cannot guard ${session.cwd}: ${(error as Error).message}`)
      return
    }
    guard.startWorkers()
    this.warmInBackground(session, guard)
  }

  /** The heaps of the threads a workspace's checks keep in this process (its type-check worker), for status. */
  heaps(root: string): ThreadHeap[] {
    try {
      return this._guards.get(realpathSync(root))?.checks.flatMap(c => c.heaps?.() ?? []) ?? []
    } catch {
      // The workspace is gone.
      return []
    }
  }

  /** Where each workspace's warm-up is (by the guard's root), for status. */
  private readonly _warmth = new Map<string, WarmState & { startedAt?: number }>()

  /** The warm-up of a workspace (its real path, or any path to it): undefined when none began. */
  warmState(root: string): WarmState | undefined {
    try {
      const found = this._warmth.get(realpathSync(root))
      if (!found) return undefined
      const { startedAt, ...state } = found
      // While it runs: how long so far.
      return state.state === 'warming' && startedAt !== undefined ? { ...state, ms: Math.round(performance.now() - startedAt) } : state
    } catch {
      // The workspace is gone: nothing warms it.
      return undefined
    }
  }

  /** One warm-up per workspace at a time (see {@link warmUp}); a session that starts while one runs shares it. */
  private warmInBackground(session: Session, guard: Guard): void {
    const root = guard.options.root
    if (this._warmth.get(root)?.state === 'warming') return
    void guard.queue.hold(warmUp(guard, this.io(session), {
      tests: this.config.warmMap,
      timeoutMs: this.config.warmTimeoutMs,
      // A step's writes wait for one judgement after their tool ran: the disk is not the accepted content meanwhile.
      canMeasure: () => ![...this._steps.values()].some(p => this._guards.get(realpathSync(p.session.cwd)) === guard),
      onState: state => {
        // A later session's warm-up that found everything measured: the workspace stays as warm as it was, and since when.
        if (this._warmth.get(root)?.state === 'warm' && state.pieces === 0 && state.state !== 'cold') return
        this._warmth.set(root, { ...state, startedAt: performance.now() - state.ms })
      },
    }))
  }

  private limits() {
    return { maxLines: this.config.maxProblemLines, maxBytes: this.config.maxProblemBytes }
  }

  /** Drop pending step state and open debts (committing their captures, since nobody will judge them) and release every guard. */
  async release(): Promise<void> {
    for (const [id, debt] of this._debts) this.host.commit({ sessionId: id, callIds: debt.held.map(w => w.callId) })
    this._debts.clear()
    for (const pending of this._steps.values()) this.host.commit({ sessionId: pending.session.id, step: pending.step })
    this._steps.clear()
    this._announced.clear()
    this._undone.clear()
    const guards = [...this._guards.values()]
    this._guards.clear()
    await Promise.all(guards.map(g => g.dispose()))
  }
}

/** `result` with `lines` appended to its content (unchanged when there are none). */
function withNotes(result: ToolResult, lines: readonly string[] | undefined): ToolResult {
  return lines?.length ? { ...result, content: `${result.content}\n${lines.join('\n')}` } : result
}

/** A tool result as the model sees it after the verdict. */
function rewrite(result: ToolResult, conclusion: Conclusion): ToolResult {
  if (conclusion.replacement !== undefined) return { ...result, content: conclusion.replacement, isError: true }
  return conclusion.notes.length ? { ...result, content: `${result.content}\n${conclusion.notes.join('\n')}` } : result
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`
}

function names(writes: readonly HeldWrite[]): HeldWriteName[] {
  return writes.map(w => ({ tool: w.tool, files: w.files }))
}

/**
 * Each check's verdict on `now` against `base` (`touched`: the turn's files),
 * in pipeline order; undefined when a check is not measured in either, a
 * failing test has no base result, or a test that passed no longer runs.
 */
function compareStates(base: ReadonlyMap<Check, AcceptedState>, now: ReadonlyMap<Check, AcceptedState>, guard: Guard, touched: ReadonlySet<string>): CheckVerdict[] | undefined {
  const verdicts: CheckVerdict[] = []
  for (const check of guard.checks) {
    if (check.advisory) continue
    const before = base.get(check)
    const after = now.get(check)
    if (!before?.measured || !after?.measured) return undefined
    const { regressions, warnings, unknown, vanished } = before.compare(after.asMeasurement(), guard.options.rules, touched)
    if (unknown.length || vanished.length) return undefined
    verdicts.push({ check: check.name, outcome: regressions.length ? 'fail' : 'pass', regressions, warnings, flaky: [], durationMs: 0 })
  }
  return verdicts
}

/** What the turn's held writes leave worse than the turn's base, as last measured (the problems still open). */
function stillOpen(debt: TurnDebt): Problem[] {
  return worseThan(debt.base, debt.guard.acceptedStates, debt.guard.options.rules, new Set(debt.held.flatMap(w => w.files)))
}
