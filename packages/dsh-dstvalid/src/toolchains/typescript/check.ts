import { toPosixRelative } from 'dsh-common'
import { diagnostic } from '../../problems.ts'
import { listFiles } from '../../message.ts'
import { seconds } from '../../run.ts'
import { TsWorkerClient } from './client.ts'
import { typesUnchanged } from '../js/comments.ts'
import type { ImpactList } from '../../impact.ts'
import type { TsCheckResult } from './program.ts'
import type { Change, Check, CheckIO, ImpactSource, Measurement, ThreadHeap } from '../../types.ts'

/** Files the TypeScript program can hold. */
const SCRIPT = /\.(?:[cm]?[jt]sx?|d\.[cm]?ts)$/

export interface TypecheckOptions {
  root: string
  /** Absolute path of the tsconfig to check. */
  configPath: string
  /** Absolute path of the workspace's own `typescript` entry. */
  typescriptPath: string
  maxHeapMb: number
  /** Directory of the build-info cache (in the session's vault): the first check after a restart re-checks only what changed. Absent: none. */
  cacheDir?: string
}

/**
 * `tsc -b --noEmit` semantics over the workspace's tsconfig project graph
 * (`tsc --noEmit -p <tsconfig>` for a single project) on warm programs held
 * by a worker thread: after a one-file edit only what the edit can affect is
 * re-checked. A changed file in no program is parsed for syntax errors and
 * said once: `not type-checked: <file> is in no tsconfig program` (more than
 * three files: one line with their count and the first eight).
 * Timeout: the check is not judged, but the worker is never terminated for
 * it: it finishes in the background (a slow cold baseline is measured once),
 * and the next check waits for it within its own timeout.
 */
export class TypecheckCheck implements Check, ImpactSource {
  readonly name = 'typecheck'
  readonly verb = 'type-checking'
  private readonly _client: TsWorkerClient
  /** Files already told to be in no program. */
  private readonly _announced = new Set<string>()

  constructor(private readonly options: TypecheckOptions) {
    this._client = new TsWorkerClient(
      { root: options.root, configPath: options.configPath, typescriptPath: options.typescriptPath,
        ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}) },
      { maxHeapMb: options.maxHeapMb },
    )
  }

  heaps(): ThreadHeap[] {
    const heap = this._client.heap
    return heap ? [{ thread: 'type-check worker', ...heap }] : []
  }

  /** Whether a worker holds a warm program now. */
  get warm(): boolean {
    return this._client.alive
  }

  async measure(change: Change | undefined, io: CheckIO): Promise<Measurement> {
    const cold = !this._client.alive
    const started = performance.now()
    const left = () => Math.max(1, io.timeoutMs - (performance.now() - started))
    const problemsOf = (result: TsCheckResult) => result.diagnostics.map(d => diagnostic(this.name, d.file, d.line, `TS${d.code}`, d.message))
    let answer = await this._client.check(change?.paths ?? [], io.timeoutMs, !!io.regresses)
    // Paused at a file with a new error: stop there when that already makes the write worse (the rest cannot change the verdict).
    let stopped = false
    while (answer.status === 'ok' && answer.result.paused && !(stopped = io.regresses!(problemsOf(answer.result)))) answer = await this._client.resume(left())
    // A cold worker whose programs started from the vault's build info re-checked only what changed since.
    const how = !cold ? 'in-process, incremental' : answer.status === 'ok' && answer.result.restored.length ? 'in-process, from build info' : 'in-process, cold'
    const mode = stopped && answer.status === 'ok' ? `(${how}; stopped at the first new errors, ${answer.result.rechecked} file${answer.result.rechecked === 1 ? '' : 's'} re-checked)` : `(${how})`
    const configured = toPosixRelative(this.options.root, this.options.configPath)
    let argv = ['tsc', '--noEmit', '-p', configured, mode]
    if (answer.status !== 'ok') {
      io.record({ check: this.name, argv, cwd: this.options.root, exitCode: null, durationMs: Math.round(performance.now() - started), outcome: answer.status })
      const error = answer.status === 'timeout'
        ? `type-check still running in the background after ${seconds(io.timeoutMs)} (${seconds(answer.runningMs)} so far; its work is kept, and a later write is judged once it is done)`
        : `type-check failed to run: ${answer.error.split('\n')[0]}`
      return { status: answer.status, problems: [], scope: 'all', error }
    }
    const { result } = answer
    if (result.projects.length !== 1 || result.projects[0] !== configured) argv = ['tsc', '-b', '--noEmit', ...result.projects, mode]
    const errors = result.diagnostics.filter(d => d.category === 'error').length
    io.record({ check: this.name, argv, cwd: this.options.root, exitCode: errors ? 2 : 0, durationMs: Math.round(performance.now() - started),
      outcome: errors ? 'fail' : 'pass' })
    const problems = problemsOf(result)
    if (stopped) return { status: 'ok', problems, scope: 'all', partial: true }
    const orphans = result.orphans.filter(file => !this._announced.has(file))
    for (const file of orphans) this._announced.add(file)
    const notes = orphans.length > 3
      ? [`not type-checked: ${orphans.length} files are in no tsconfig program: ${listFiles(orphans)}`]
      : orphans.map(file => `not type-checked: ${file} is in no tsconfig program`)
    const kept = change && result.declarationsKept ? { declarationsKept: { programs: result.declarationsKept } } : {}
    return { status: 'ok', problems, scope: 'all', ...(notes.length ? { notes } : {}), ...kept }
  }

  /** A write that changed only comments and whitespace in TypeScript sources: its types cannot have changed. */
  unaffectedBy(change: Change): Promise<string | undefined> {
    return typesUnchanged(change)
  }

  /** Change impact from the warm program's import graph (module resolution as the workspace's own TypeScript does it). */
  async importers(change: Change, max: number, io: CheckIO): Promise<ImpactList | undefined> {
    const files = change.files.filter(f => SCRIPT.test(f))
    if (!files.length) return undefined
    const answer = await this._client.importers(files, max, io.timeoutMs)
    if (answer.status === 'ok') return answer.impact
    throw new Error(answer.status === 'timeout' ? `the type-check worker is still busy after ${seconds(io.timeoutMs)} (it keeps running in the background)` : answer.error.split('\n')[0])
  }

  /** A byte-identical rollback: the warm programs return to their state from before the write's check. */
  async restore(io: CheckIO): Promise<void> {
    await this._client.revert(io.timeoutMs)
  }

  dispose(): Promise<void> {
    return this._client.dispose()
  }
}
