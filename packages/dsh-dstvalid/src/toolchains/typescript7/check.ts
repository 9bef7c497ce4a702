import { rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { runCommand, toPosixRelative } from 'dsh-common'
import { findImporters, type ImpactList } from '../../impact.ts'
import { diagnostic } from '../../problems.ts'
import { checkEnv, seconds } from '../../run.ts'
import { typesUnchanged } from '../js/comments.ts'
import { RpcGone } from './rpc.ts'
import { Tsc7ApiServer, type Tsc7Result } from './api.ts'
import { listProgramFiles, parseTscOutput, writeShadowConfigs } from './build.ts'
import { pathMappings, scanImportGraph } from '../js/imports.ts'
import { nativeTscCommand, workspaceTypescript } from './install.ts'
import { projectGraph } from './projects.ts'
import type { TsDiagnostic } from '../runner.ts'
import type { Change, Check, CheckIO, ImpactSource, Measurement } from '../../types.ts'

/** Files the programs can hold. */
const SCRIPT = /\.(?:[cm]?[jt]sx?|d\.[cm]?ts)$/

export interface Typecheck7Options {
  root: string
  /** Absolute path of the tsconfig to check (a solution config's references are followed, as `tsc -b` does). */
  configPath: string
  /** How to start the workspace's own TypeScript 7 `tsc` (see `nativeTscCommand`). */
  tsc: string[]
  /**
   * `true` (default): a warm `tsc --api` server per workspace; a cold
   * `tsc -b` per judgement only when the server cannot run. `false`: always
   * the cold `tsc -b`.
   */
  warm?: boolean
}

let shadowRuns = 0

/**
 * The type-check of a workspace whose own `typescript` is 7 or later (the
 * native compiler), or undefined for an older one (the classic API's
 * `TypecheckCheck` judges those). Chosen by the workspace's version, never
 * the suite's: the generations report different errors.
 */
export function nativeTypecheck(root: string, configPath: string): Typecheck7Check | undefined {
  const ts = workspaceTypescript(root)
  return ts && ts.major >= 7 ? new Typecheck7Check({ root, configPath, tsc: nativeTscCommand(ts) }) : undefined
}

/** Whether a change touches what decides the project graph (a tsconfig, a package.json): the server must re-open it. */
function touchesConfig(change: Change | undefined): boolean {
  return !!change?.paths.some(p => /^tsconfig.*\.json$/.test(basename(p)) || basename(p) === 'package.json')
}

/**
 * `tsc -b <tsconfig>` semantics for a workspace on TypeScript 7 (the native
 * compiler, which has no classic JavaScript API), with the workspace's own
 * `tsc`. Warm: one `tsc --api` server holds every project of the graph; each
 * check takes a new snapshot of the files on disk and collects the
 * diagnostics of every program. Cold (the fallback, or `warm: false`): a
 * `tsc -b` over shadow configs whose outputs and build info go to
 * `node_modules/.cache`, removed after the run. Either way nothing is
 * written into the workspace's sources, and a timeout or `dispose()` kills
 * the compiler's process group.
 */
export class Typecheck7Check implements Check, ImpactSource {
  readonly name = 'typecheck'
  readonly verb = 'type-checking'
  private _server?: Tsc7ApiServer
  private _last?: Tsc7Result
  /** Why the warm server is not used (set once it failed; the rest of the session checks cold). */
  private _coldBecause?: string

  constructor(private readonly options: Typecheck7Options) {
    if (options.warm === false) this._coldBecause = 'configured'
  }

  /** Whether a warm server is running now. */
  get warm(): boolean {
    return !!this._server?.alive
  }

  /** The warm server's pid, while one runs. */
  get serverPid(): number | undefined {
    return this._server?.pid
  }

  /** Why checks run cold (`tsc -b` per judgement), or undefined while the warm server is used. */
  get coldReason(): string | undefined {
    return this._coldBecause
  }

  /** A write that changed only comments and whitespace in TypeScript sources: its types cannot have changed. */
  unaffectedBy(change: Change): Promise<string | undefined> {
    return typesUnchanged(change)
  }

  async measure(change: Change | undefined, io: CheckIO): Promise<Measurement> {
    if (touchesConfig(change)) await this.stopServer()
    if (!this._coldBecause) {
      const warm = await this.measureWarm(io)
      if (warm) return warm
    }
    return this.measureCold(io)
  }

  /** Importers of the change's files, from our own scan of the programs' files (TypeScript 7 exposes no module resolution). */
  async importers(change: Change, max: number, io: CheckIO): Promise<ImpactList | undefined> {
    const files = change.files.filter(f => SCRIPT.test(f))
    if (!files.length) return undefined
    let last = this._last
    if (!last && !this._coldBecause) {
      const warm = await this.warmResult(io)
      if (warm === 'timeout') throw new Error(`the import graph timed out after ${seconds(io.timeoutMs)} (tsc --api process group killed)`)
      last = warm
    }
    if (!last) {
      // Cold: the programs' files from `tsc -p <project> --listFilesOnly` (reads only); `paths` are not known here.
      const programFiles = await listProgramFiles(this.options.tsc, projectGraph(this.options.configPath), this.options.root, io.timeoutMs)
      return findImporters(scanImportGraph(this.options.root, programFiles), files, max)
    }
    const paths = last.projects.flatMap(p => pathMappings(p.config, p.options))
    return findImporters(scanImportGraph(this.options.root, last.files, paths), files, max)
  }

  async dispose(): Promise<void> {
    await this.stopServer()
  }

  private async stopServer() {
    const server = this._server
    this._server = undefined
    this._last = undefined
    await server?.close()
  }

  /**
   * The warm measurement, or undefined when the server cannot run (the
   * caller falls back to a cold `tsc -b`). A server that dies mid-session is
   * restarted once before giving up on it.
   */
  private async measureWarm(io: CheckIO): Promise<Measurement | undefined> {
    for (let attempt = 0; ; attempt++) {
      const cold = !this._server
      const started = performance.now()
      const argv = ['tsc', '-b', toPosixRelative(this.options.root, this.options.configPath), cold ? '(tsc --api, cold)' : '(tsc --api, warm)']
      let result: Tsc7Result | 'timeout'
      try {
        result = await this.warmResult(io)
      } catch (error) {
        const why = (error as Error).message.split('\n')[0]!
        io.record({ check: this.name, argv, cwd: this.options.root, exitCode: null, durationMs: Math.round(performance.now() - started), outcome: 'error' })
        if (!cold && attempt === 0) continue
        this._coldBecause = `tsc --api failed: ${why}`
        io.notice('warn', `typecheck: ${this._coldBecause}; type-checking with a cold tsc -b per judgement from now on`)
        return undefined
      }
      const durationMs = Math.round(performance.now() - started)
      if (result === 'timeout') {
        io.record({ check: this.name, argv, cwd: this.options.root, exitCode: null, durationMs, outcome: 'timeout' })
        return { status: 'timeout', problems: [], scope: 'all', error: `type-check timed out after ${seconds(io.timeoutMs)} (tsc --api process group killed)` }
      }
      return this.judged(result.diagnostics, argv, durationMs, io)
    }
  }

  /** One snapshot's diagnostics from the warm server (started if needed); 'timeout' after killing it. */
  private async warmResult(io: CheckIO): Promise<Tsc7Result | 'timeout'> {
    const server = this._server ??= new Tsc7ApiServer(this.options.tsc, this.options.root, projectGraph(this.options.configPath))
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<'timeout'>(resolve => { timer = setTimeout(() => resolve('timeout'), io.timeoutMs) })
    try {
      const result = await Promise.race([server.check(), timeout])
      if (result === 'timeout') {
        await this.stopServer()
        return 'timeout'
      }
      this._last = result
      return result
    } catch (error) {
      await this.stopServer()
      throw error instanceof RpcGone ? error : new Error((error as Error).message)
    } finally {
      clearTimeout(timer)
    }
  }

  /** A cold `tsc -b` over shadow configs: outputs and build info under `node_modules/.cache`, removed afterwards. */
  private async measureCold(io: CheckIO): Promise<Measurement> {
    const name = `dsh-dstvalid-tsc-b-${process.pid}-${++shadowRuns}`
    const fallback = join(tmpdir(), name)
    const { entry, originals, dirs } = writeShadowConfigs(this.options.configPath, name, fallback)
    const argv = ['tsc', '-b', toPosixRelative(this.options.root, this.options.configPath), '--pretty', 'false',
      '(cold; outputs and build info under node_modules/.cache, removed)']
    try {
      const r = await runCommand([...this.options.tsc, '-b', entry, '--pretty', 'false'], {
        cwd: this.options.root, timeoutMs: io.timeoutMs, maxOutputBytes: io.maxOutputBytes, env: checkEnv(), signal: io.signal,
      })
      const diagnostics = parseTscOutput(r.output, this.options.root, originals)
      const failed = r.timedOut || r.aborted || r.spawnError || r.exitCode === null || (r.exitCode !== 0 && !diagnostics.length)
      if (failed) {
        const outcome = r.timedOut ? 'timeout' : 'error'
        io.record({ check: this.name, argv, cwd: this.options.root, exitCode: r.exitCode, durationMs: r.durationMs, outcome })
        const tail = r.output.trim().split('\n').slice(-1)[0] ?? ''
        const error = r.timedOut
          ? `type-check timed out after ${seconds(io.timeoutMs)} (tsc -b process group killed)`
          : `type-check failed to run: tsc -b ${r.spawnError ? `could not start: ${r.spawnError}` : `exit ${r.exitCode ?? r.signal}`}${tail ? `: ${tail.slice(0, 200)}` : ''}`
        return { status: r.timedOut ? 'timeout' : 'error', problems: [], scope: 'all', error }
      }
      return this.judged(diagnostics, argv, r.durationMs, io, r.exitCode)
    } finally {
      for (const d of dirs) rmSync(d, { recursive: true, force: true })
    }
  }

  private judged(diagnostics: TsDiagnostic[], argv: string[], durationMs: number, io: CheckIO, exitCode?: number | null): Measurement {
    const errors = diagnostics.filter(d => d.category === 'error').length
    io.record({ check: this.name, argv, cwd: this.options.root, exitCode: exitCode ?? (errors ? 2 : 0), durationMs, outcome: errors ? 'fail' : 'pass' })
    const problems = diagnostics.map(d => diagnostic(this.name, d.file, d.line, `TS${d.code}`, d.message))
    return { status: 'ok', problems, scope: 'all' }
  }
}
