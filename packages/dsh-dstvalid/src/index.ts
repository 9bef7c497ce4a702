import { Context, Service } from '@deepseek-ai/cordis'
import { realpathSync } from 'node:fs'
import { resolveInside, toPosixRelative } from 'dsh-common'
import type { Session } from 'dsh-session'
import type { ToolExecution, ToolResult } from 'dsh-tools'
import type { StepBatch } from 'dsh-agent'
import type {} from 'dsh-snapshot'
import { changedFiles, scanFiles } from './changes.ts'
import { Config } from './config.ts'
import { Guard, type GuardIO } from './engine.ts'
import { conclude, type Conclusion, type JudgedWrite, type VerifyLearning, type VerifyResult } from './flow.ts'
import { formatImpact } from './impact/graph.ts'
import { buildProfiles } from './profiles.ts'
import { answerJudge, commitSnapshot, requestRollback } from './snapshot-port.ts'
import type { Change, RunRecord } from './types.ts'

/** A progress line for UIs (the CLI shows it as a spinner or a line). */
export interface DstvalidNotice {
  sessionId: string
  level: 'info' | 'warn' | 'error'
  text: string
  phase?: 'start' | 'end'
}

declare module '@deepseek-ai/cordis' {
  interface Context {
    dstvalid: DstValidService
  }
  interface Events {
    /** One check judged one write call (pass, fail, or rolled back), with the new problems it saw. @mode emit */
    'verify/result'(result: VerifyResult): void
    /** Progress of a check ("type-checking after edit_file src/a.ts…") and change-impact lists, for UIs. @mode emit */
    'dstvalid/notice'(notice: DstvalidNotice): void
    /** A write was kept and verified: these paths, this tool, these passing checks (learnings mode; never after a rollback). @mode emit */
    'verify/learning'(learning: VerifyLearning): void
  }
}

declare module 'dsh-session' {
  interface SessionEventMap {
    /** A command (or in-process check) dsh-dstvalid ran to judge a write: the harness's own record of what ran. */
    'verify/run': RunRecord
  }
}

/** Writes of an agent step awaiting the step's judgement (per: 'step'). */
interface PendingStep {
  session: Session
  step: number
  writes: (JudgedWrite & { paths: string[] })[]
}

/**
 * The `dstvalid` service: after each write (or each step's writes), runs the
 * workspace's checks, compares with the measured accepted state, and rolls
 * back a write that made things worse through `snapshot/rollback`.
 */
export class DstValidService extends Service {
  static inject = ['sessions', 'tools']
  static Config = Config
  private _enabled: boolean
  private readonly _guards = new Map<string, Guard>()
  private readonly _steps = new Map<string, PendingStep>()

  constructor(ctx: Context, public config: Config) {
    super(ctx, 'dstvalid')
    this._enabled = config.enabled
    ctx.on('tools/execute', (exec, next) => this.onExecute(exec, next))
    ctx.on('agent/step-results', (batch, next) => this.onStepResults(batch, next))
    answerJudge(ctx, exec => (this.plan(exec)?.kind === 'write' || (this.config.shell && this.plan(exec)?.kind === 'shell')) || undefined)
    ctx.on('session/created', session => this.warm(session))
    ctx.effect(() => () => this.release(), 'dstvalid.guards')
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

  /** The engine of a workspace (created on first use). */
  guardFor(root: string): Guard {
    const key = realpathSync(root)
    let guard = this._guards.get(key)
    if (!guard) {
      const { profiles, notes } = buildProfiles(key, this.config)
      guard = new Guard({
        root: key,
        checks: profiles.flatMap(p => p.checks),
        rules: { strictTests: this.config.strictTests, isTestFile: file => new RegExp(this.config.testFilePattern).test(file) },
        timeoutMs: this.config.timeoutMs,
        maxOutputBytes: this.config.maxOutputBytes,
        confirmFlaky: this.config.confirmFlaky,
        impact: profiles.flatMap(p => p.impact ?? []),
      })
      for (const note of notes) this.ctx.logger('dsh-dstvalid').warn(note)
      this._guards.set(key, guard)
    }
    return guard
  }

  /** What kind of judgement a call needs, if any. */
  private plan(exec: ToolExecution): { kind: 'write'; paths: string[] } | { kind: 'shell' } | undefined {
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

  private io(session: Session, signal?: AbortSignal): GuardIO {
    return {
      record: run => { session.append('verify/run', run) },
      notice: (level, text, phase) => this.ctx.emit('dstvalid/notice', { sessionId: session.id, level, text, ...(phase ? { phase } : {}) }),
      signal,
    }
  }

  /** Resolve a tool's paths inside the workspace; a path outside is left to the tool to refuse. */
  private changeOf(root: string, paths: readonly string[]): Change {
    const abs: string[] = []
    for (const p of paths) {
      try {
        abs.push(resolveInside(root, p))
      } catch {
        // Outside the workspace: the tool refuses it, nothing to check.
      }
    }
    const real = realpathSync(root)
    return { paths: abs, files: abs.map(a => toPosixRelative(real, a)) }
  }

  private async onExecute(exec: ToolExecution, next: () => Promise<ToolResult>): Promise<ToolResult> {
    const plan = this.plan(exec)
    if (!plan) return next()
    const session = exec.session
    let guard: Guard
    try {
      guard = this.guardFor(session.cwd)
    } catch (error) {
      // The checks could not be set up (e.g. an unreadable package.json): run
      // the call unjudged and say so, rather than failing the turn.
      const message = (error as Error)?.message ?? String(error)
      const result = await next()
      commitSnapshot(this.ctx, { sessionId: session.id, callId: exec.callId })
      this.io(session, exec.signal).notice('error', `checks could not be set up: ${message}`)
      return plan.kind === 'write' ? withNotes(result, [`warning: not verified: dsh-dstvalid could not set up checks for this workspace (${message})`]) : result
    }
    if (plan.kind === 'shell' && !this.config.shell) {
      const result = await next()
      guard.markDirty()
      return result
    }
    const io = this.io(session, exec.signal)
    return guard.queue.run(async () => {
      const planned = plan.kind === 'write' ? this.changeOf(session.cwd, plan.paths) : undefined
      try {
        await guard.prepare(io, planned)
      } catch (error) {
        // Measured nothing: the judgement reports "no measured baseline" instead of guessing.
        io.notice('error', `measuring the accepted state failed: ${(error as Error)?.message ?? error}`)
      }
      const impact = planned && this.config.impact !== 'off' ? await this.impactOf(guard, planned, io) : undefined
      const before = plan.kind === 'shell' ? scanFiles(guard.options.root) : undefined
      const raw = await next()
      // The impact list goes with a write that ran; a rollback replaces the whole result anyway.
      const result = raw.isError ? raw : withNotes(raw, impact)
      const change = planned ?? this.changeOf(guard.options.root, changedFiles(before!, scanFiles(guard.options.root)))
      if ((plan.kind === 'write' && result.isError) || !change.paths.length) {
        // A failed write tool changed nothing (the workspace tools are all-or-nothing): nothing to judge.
        commitSnapshot(this.ctx, { sessionId: session.id, callId: exec.callId })
        return result
      }
      if (this.config.per === 'step' && exec.step !== undefined && plan.kind === 'write') {
        this.pend(session, exec, change)
        return result
      }
      const writes = [{ callId: exec.callId, tool: exec.name, files: change.files }]
      const conclusion = await this.settle(session, change, writes, `${exec.name} ${change.files.join(', ')}`, { callId: exec.callId }, io)
      return this.rewrite(result, conclusion)
    })
  }

  /**
   * Judge and conclude one change. An unexpected failure of the engine
   * becomes data: the write is kept (its snapshot committed) with a
   * "not verified" note, and an error notice.
   */
  private async settle(session: Session, change: Change, writes: JudgedWrite[], describe: string, scope: { callId?: string; step?: number }, io: GuardIO): Promise<Conclusion> {
    const guard = this.guardFor(session.cwd)
    try {
      const judgement = await guard.judge(change, io, describe)
      return await conclude(guard, judgement, change, writes, session.id, {
        rollback: reason => requestRollback(this.ctx, { sessionId: session.id, ...scope, reason }),
        commit: () => commitSnapshot(this.ctx, { sessionId: session.id, ...scope }),
        result: r => this.ctx.emit('verify/result', r),
        ...(this.config.learnings ? { learning: (l: VerifyLearning) => this.ctx.emit('verify/learning', l) } : {}),
      }, io, this.limits())
    } catch (error) {
      const message = (error as Error)?.message ?? String(error)
      guard.markDirty()
      commitSnapshot(this.ctx, { sessionId: session.id, ...scope })
      io.notice('error', `dsh-dstvalid failed while judging ${describe}: ${message}`)
      this.ctx.logger('dsh-dstvalid').warn(error)
      return { kept: true, notes: [`warning: not verified — dsh-dstvalid failed: ${message}`] }
    }
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
    if (lists.length && !lines.length) io.notice('info', `impact: nothing in the workspace imports ${change.files.join(', ')}`)
    return this.config.impact === 'result' ? lines : []
  }

  private rewrite(result: ToolResult, conclusion: Conclusion): ToolResult {
    if (conclusion.replacement !== undefined) return { ...result, content: conclusion.replacement, isError: true }
    return conclusion.notes.length ? { ...result, content: `${result.content}\n${conclusion.notes.join('\n')}` } : result
  }

  private pend(session: Session, exec: ToolExecution, change: Change) {
    const key = session.id
    let pending = this._steps.get(key)
    if (!pending || pending.step !== exec.step) this._steps.set(key, pending = { session, step: exec.step!, writes: [] })
    pending.writes.push({ callId: exec.callId, tool: exec.name, files: change.files, paths: change.paths })
  }

  private async onStepResults(batch: StepBatch, next: () => Promise<StepBatch['results']>): Promise<StepBatch['results']> {
    const results = await next()
    const pending = this._steps.get(batch.session.id)
    if (!pending || pending.step !== batch.step) return results
    this._steps.delete(batch.session.id)
    if (!this._enabled) return results
    const session = batch.session
    const guard = this.guardFor(session.cwd)
    const io = this.io(session)
    const paths = [...new Set(pending.writes.flatMap(w => w.paths))]
    const change: Change = { paths, files: paths.map(p => toPosixRelative(guard.options.root, p)) }
    const describe = `step ${batch.step} (${pending.writes.map(w => `${w.tool} ${w.files.join(', ')}`).join('; ')})`
    const conclusion = await guard.queue.run(() => this.settle(session, change, pending.writes, describe, { step: batch.step }, io))
    const judged = new Set(pending.writes.map(w => w.callId))
    return results.map(({ call, result }) => ({ call, result: judged.has(call.callId) ? this.rewrite(result, conclusion) : result }))
  }

  /** Measure the baseline of a new session's workspace in the background. */
  private warm(session: Session) {
    if (!this._enabled || !this.config.warmOnStart) return
    let guard: Guard
    try {
      guard = this.guardFor(session.cwd)
    } catch (error) {
      this.ctx.logger('dsh-dstvalid').warn('cannot guard %s: %s', session.cwd, (error as Error).message)
      return
    }
    guard.queue.run(() => guard.prepare(this.io(session))).catch(error => {
      this.ctx.emit('dstvalid/notice', { sessionId: session.id, level: 'error', text: `baseline failed: ${(error as Error).message}` })
    })
  }

  private limits() {
    return { maxLines: this.config.maxProblemLines, maxBytes: this.config.maxProblemBytes }
  }

  /** Drop pending step state (committing its captures, since nobody will judge them) and release every guard. */
  private async release(): Promise<void> {
    for (const pending of this._steps.values()) commitSnapshot(this.ctx, { sessionId: pending.session.id, step: pending.step })
    this._steps.clear()
    const guards = [...this._guards.values()]
    this._guards.clear()
    await Promise.all(guards.map(g => g.dispose()))
  }
}

/** `result` with `lines` appended to its content (unchanged when there are none). */
function withNotes(result: ToolResult, lines: readonly string[] | undefined): ToolResult {
  return lines?.length ? { ...result, content: `${result.content}\n${lines.join('\n')}` } : result
}

export namespace DstValidService {
  export type Config = import('./config.ts').Config
}

export default DstValidService
export * from './types.ts'
export * from './config.ts'
export * from './problems.ts'
export * from './accepted.ts'
export * from './engine.ts'
export * from './flow.ts'
export * from './message.ts'
export * from './profiles.ts'
export * from './queue.ts'
export * from './changes.ts'
export * from './impact/graph.ts'
export { GoImpact, parseGoImports } from './impact/go.ts'
export { PythonImpact, pythonImports } from './impact/python.ts'
export { programImports } from './typescript/imports.ts'
export { StyleCheck, type StyleCheckOptions } from './checks/style.ts'
export { CoverageCheck, parseCoverageSummary, parseCoverProfile, type CoverageOptions, type CoverageReading, type CoverageSource } from './checks/coverage.ts'
export { STYLE_CHECK, type StyleRun, type StyleTool, type StyleToolName } from './style/tool.ts'
export { STYLE_TOOLS, configures, styleToolsFor, type StyleTools } from './style/detect.ts'
export { EslintTool, parseEslintJson } from './style/eslint.ts'
export { NOT_FORMATTED, PrettierTool, parsePrettier } from './style/prettier.ts'
export { BIOME_NOT_FORMATTED, BiomeTool, parseBiomeGithub } from './style/biome.ts'
export { GOFMT_NOT_FORMATTED, GofmtTool, parseGofmt } from './style/gofmt.ts'
export { RuffTool, parseRuffJson } from './style/ruff.ts'
export { TsProgramChecker, type TsCheckResult, type TsDiagnostic } from './typescript/program.ts'
export { TsWorkerClient, type TsImpactAnswer, type TsWorkerAnswer } from './typescript/client.ts'
export { TypecheckCheck } from './checks/typecheck.ts'
export { VitestCheck } from './checks/vitest.ts'
export { CommandCheck } from './checks/command.ts'
export { GoBuildCheck, GoVetCheck, GoTestCheck, parseGoDiagnostics, parseGoTestJson } from './checks/go.ts'
export { PythonCompileCheck, PytestCheck, parseJunit } from './checks/python.ts'
export { CargoCheck, CargoTestCheck, parseCargoMessages, parseCargoTest } from './checks/rust.ts'
