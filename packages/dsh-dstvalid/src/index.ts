import { Context, Service } from '@deepseek-ai/cordis'
import type { StepBatch } from 'dsh-agent'
import { maskCredentialsDeep } from 'dsh-common'
import type {} from 'dsh-snapshot'
import type { ToolExecution, ToolResult } from 'dsh-tools'
import { Config } from './config.ts'
import type { Guard } from './measure.ts'
import type { VerifyLearning, VerifyResult } from './result.ts'
import { commitSnapshot, hearChanges, requestRollback, snapshotLoaded } from './snapshot-port.ts'
import type { RunRecord, ThreadHeap } from './types.ts'
import { Verifier, type DstvalidNotice, type VerifyDeferred } from './verifier.ts'
import type { WarmState } from './warm-up.ts'

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
    /** A write returned to the agent kept for now while its tests run in the background (`background`): `{ sessionId, callId, tool, paths }`; its `verify/verdict` lines follow. */
    'verify/deferred': VerifyDeferred
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
      // A check's output may hold a credential value a test found (in a file, in /proc): masked before anyone sees it.
      notice: notice => ctx.emit('dstvalid/notice', maskCredentialsDeep(notice)),
      rollback: request => requestRollback(ctx, request),
      commit: request => commitSnapshot(ctx, request),
      snapshotLoaded: () => snapshotLoaded(ctx),
      result: raw => {
        const result = maskCredentialsDeep(raw)
        ctx.sessions.get(result.sessionId)?.append('verify/verdict', result)
        ctx.emit('verify/result', result)
      },
      deferred: deferred => {
        ctx.sessions.get(deferred.sessionId)?.append('verify/deferred', deferred)
      },
      learning: learning => ctx.emit('verify/learning', learning),
      warn: text => logger.warn(text),
    })
    ctx.on('tools/execute', (exec: ToolExecution, next: () => Promise<ToolResult>) => this.verifier.execute(exec, next))
    ctx.on('agent/step-results', (batch: StepBatch, next: () => Promise<StepBatch['results']>) => this.verifier.stepResults(batch, next))
    hearChanges(ctx, change => this.verifier.heard(change))
    ctx.on('verify/settle', sessionId => this.verifier.settleVerdicts(sessionId))
    ctx.on('session/created', session => this.verifier.warm(session))
    // Turn verdicts (ADR 0037): a stop with the turn's change unfinished is refused, then the change undone.
    ctx.on('agent/stop', agent => this.verifier.stop(agent.session))
    ctx.on('session/event', (session, event) => {
      if (event.type === 'turn/end') this.verifier.turnEnded(session.id)
    })
    ctx.on('snapshot/outside', info => {
      const session = ctx.sessions.get(info.sessionId)
      if (session) this.verifier.outside(session.cwd)
    })
    ctx.effect(() => () => this.verifier.release(), 'dstvalid.guards')
  }

  get enabled(): boolean {
    return this.verifier.enabled
  }

  /** Resolves when every background verdict of a session is final (as `verify/settle`). */
  settle(sessionId: string): Promise<void> {
    return this.verifier.settleVerdicts(sessionId)
  }

  /** Start judging writes again; the next write measures a fresh baseline. */
  enable(): void {
    this.verifier.enable()
  }

  /** Stop judging writes: pending step state is dropped (its captures committed) and warm checkers are released. */
  disable(): Promise<void> {
    return this.verifier.disable()
  }

  /** Where the warm-up of a workspace is (warming, warm, cold), for status; undefined when none began. */
  warmState(root: string): WarmState | undefined {
    return this.verifier.warmState(root)
  }

  /** The heaps of the threads a workspace's checks keep in this process (its type-check worker), for status. */
  heaps(root: string): ThreadHeap[] {
    return this.verifier.heaps(root)
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

// The judging core, Cordis-free: a host that embeds it without the plugin.
export * from './types.ts'
export * from './config.ts'
export { Verifier, PENDING_NOTE, type CallPlan, type DstvalidNotice, type VerifierHost, type VerifyDeferred } from './verifier.ts'
export type { WarmState } from './warm-up.ts'
export { Guard, type GuardIO, type GuardOptions, type Measured } from './measure.ts'
export type { VerifyLearning, VerifyResult } from './result.ts'
export { findImporters, formatImpact, type ImpactList, type Importer, type ImportEdge } from './impact.ts'
// The toolchains: the list, what one is, what a workspace gets.
export { TOOLCHAINS, buildProfiles, detectProfiles, styleToolsFor, type BuiltProfiles } from './profiles.ts'
export type { Contribution, Toolchain, ToolchainWorkspace } from './toolchains/toolchain.ts'
export type { StyleTools } from './modes/style-tools.ts'
export type { StyleRun, StyleTool, StyleToolName, StyleToolSpec } from './modes/style-tool.ts'
// Checks a bench builds directly, and how it finds the workspace's tools.
export { resolveFromWorkspace } from './workspace-modules.ts'
export { StyleCheck, type StyleCheckOptions } from './modes/style.ts'
export { CoverageCheck, type CoverageOptions, type CoverageReading, type CoverageSource } from './modes/coverage.ts'
export { TypecheckCheck } from './toolchains/typescript/check.ts'
export { TsProgramChecker, type TsCheckResult } from './toolchains/typescript/program.ts'
export { TsWorkerClient } from './toolchains/typescript/client.ts'
export { Typecheck7Check, type Typecheck7Options } from './toolchains/typescript7/check.ts'
export { nativeTscCommand, workspaceTypescript, type WorkspaceTypescript } from './toolchains/typescript7/install.ts'
export { VitestCheck, type VitestCheckOptions } from './toolchains/vitest/check.ts'
export { WarmVitestCheck, type WarmVitestOptions } from './toolchains/vitest/warm.ts'
export type { WarmRunPhases } from './toolchains/vitest/warm-client.ts'
// Test selection by the functions each test file executed (ADR 0021).
export { bodyEdit, commentOnly, parseWith, predictedNames, type BodyEdit, type ParseRequest } from './toolchains/js/body-edit.ts'
export { TestMap, type MapSelection } from './toolchains/vitest/test-map.ts'
export { vitestCommand } from './toolchains/vitest/index.ts'
// Why a check could not run, from a process's output (the line that explains it).
export { explainFailure, stripAnsi } from './run.ts'
