import { Context, Service } from '@deepseek-ai/cordis'
import type { StepBatch } from 'dsh-agent'
import type {} from 'dsh-snapshot'
import type { ToolExecution, ToolResult } from 'dsh-tools'
import { Config } from './config.ts'
import type { Guard } from './engine.ts'
import type { VerifyLearning, VerifyResult } from './flow.ts'
import { answerJudge, commitSnapshot, requestRollback, shellChanges, shellTracked } from './snapshot-port.ts'
import type { RunRecord } from './types.ts'
import { Verifier, type DstvalidNotice } from './verifier.ts'

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
    /** A command (or in-process check) dsh-dstvalid ran to judge a write: the harness's own record of what ran. `outcome` is what the command found, not the verdict. */
    'verify/run': RunRecord
    /** The verdict of one check on one write call (the `verify/result` payload), kept in the log so a stored session shows it. */
    'verify/verdict': VerifyResult
  }
}

/**
 * The `dstvalid` service: after each write (or each step's writes), runs the
 * workspace's checks, compares with the measured accepted state, and rolls
 * back a write that made things worse through `snapshot/rollback`. The
 * judging itself is the Cordis-free {@link Verifier}; this class wires it to events.
 */
export class DstValidService extends Service {
  static inject = ['sessions', 'tools']
  static Config = Config
  private readonly verifier: Verifier

  constructor(ctx: Context, public config: Config) {
    super(ctx, 'dstvalid')
    const logger = ctx.logger('dsh-dstvalid')
    this.verifier = new Verifier(config, {
      record: (session, run) => { session.append('verify/run', run) },
      notice: notice => ctx.emit('dstvalid/notice', notice),
      rollback: request => requestRollback(ctx, request),
      commit: request => commitSnapshot(ctx, request),
      tracked: request => shellTracked(ctx, request),
      shellChanges: request => shellChanges(ctx, request),
      result: result => {
        ctx.sessions.get(result.sessionId)?.append('verify/verdict', result)
        ctx.emit('verify/result', result)
      },
      learning: learning => ctx.emit('verify/learning', learning),
      warn: text => logger.warn(text),
    })
    ctx.on('tools/execute', (exec: ToolExecution, next: () => Promise<ToolResult>) => this.verifier.execute(exec, next))
    ctx.on('agent/step-results', (batch: StepBatch, next: () => Promise<StepBatch['results']>) => this.verifier.stepResults(batch, next))
    answerJudge(ctx, exec => this.verifier.judges(exec) || undefined)
    ctx.on('session/created', session => this.verifier.warm(session))
    ctx.on('snapshot/outside', info => {
      const session = ctx.sessions.get(info.sessionId)
      if (session) this.verifier.outside(session.cwd)
    })
    ctx.effect(() => () => this.verifier.release(), 'dstvalid.guards')
  }

  get enabled(): boolean {
    return this.verifier.enabled
  }

  /** Start judging writes again; the next write measures a fresh baseline. */
  enable(): void {
    this.verifier.enable()
  }

  /** Stop judging writes: pending step state is dropped (its captures committed) and warm checkers are released. */
  disable(): Promise<void> {
    return this.verifier.disable()
  }

  /** The engine of a workspace (created on first use); `vault`: where its caches are kept. */
  guardFor(root: string, vault?: string): Guard {
    return this.verifier.guardFor(root, vault)
  }
}

export namespace DstValidService {
  export type Config = import('./config.ts').Config
}

export default DstValidService
export * from './types.ts'
export * from './verifier.ts'
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
export { PythonImpact, pythonGraph, pythonImports } from './impact/python.ts'
export { programImports } from './typescript/imports.ts'
export { StyleCheck, type StyleCheckOptions } from './checks/style.ts'
export { JestCheck, type JestCheckOptions } from './checks/jest.ts'
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
export { VitestCheck, VitestJudge, ownParseErrors, type VitestReport, type VitestCheckOptions } from './checks/vitest.ts'
export { WarmVitestCheck, TEST_CONFIG_FILE, type WarmVitestOptions } from './checks/vitest-warm.ts'
export type { WarmRunPhases } from './vitest/warm-client.ts'
export { CommandCheck } from './checks/command.ts'
export { GoBuildCheck, GoVetCheck, GoTestCheck, parseGoDiagnostics, parseGoBuildOutput, parseGoTestJson, readGoTestRun, type GoBuildError, type GoTestRun } from './checks/go.ts'
export { findPython, PythonAnnouncer, PythonCompileCheck, PytestCheck, parseJunit, type PythonInterpreter } from './checks/python.ts'
export { readPytestConfig, sourceRoots, type PytestConfig } from './checks/pytest-config.ts'
export { CargoCheck, CargoTestCheck, parseCargoMessages, parseCargoTest } from './checks/rust.ts'
export { Typecheck7Check, nativeTypecheck, type Typecheck7Options } from './checks/typecheck7.ts'
export * from './typescript7/index.ts'
