import { fileURLToPath } from 'node:url'
import { processGroupRssKb, startProcess, type LongProcess } from 'dsh-common'
import { checkEnv, checkIsolation } from '../../run.ts'
import type { DshVitestReport } from './check.ts'

/** One run of the warm runner: related to `changed`, the whole suite, or named test files (optionally one test-name pattern). */
export interface WarmRunRequest {
  /** Absolute paths a write touched (invalidated before the run). */
  changed: string[] | null
  mode: 'related' | 'all' | 'files'
  /** For `files`: absolute test-file paths. */
  files?: string[]
  /** For `files`: a regular expression on full test names (`-t`). */
  pattern?: string
  /** Only these vitest projects (undefined: every project). */
  projects?: readonly string[]
  /** Find the test files only (reported as never run); run nothing. */
  list?: boolean
  /** Absolute path → base64 content (null: absent) served to the module graph in place of the disk's during this run (the accepted content). */
  accepted?: Record<string, string | null>
}

/** Where a warm run's time went, ms (the run's steps; the per-file sums are vitest's own module diagnostics). */
export interface WarmRunPhases {
  invalidateMs?: number
  globMs?: number
  /** Finding the related test files through vite's module graph. */
  relatedMs?: number
  /** `runTestSpecifications`, wall clock. */
  runMs?: number
  /** Summed over test files: the calls recorder taking V8's counters in the workers. */
  recorderMs?: number
  /** Reading the reads and calls records of the run's test files (their import closures for the initialisers). */
  recordMs?: number
  reportMs?: number
  /** Test files run. */
  files?: number
  /** Summed over test files: worker preparation, environment set-up, collection (imports), tests. */
  prepareMs?: number
  environmentMs?: number
  collectMs?: number
  testsMs?: number
}

/** Test file → workspace module → names of the functions it executed (absolute paths; `""` is the module's own code). */
export type RunCalls = Record<string, Record<string, string[]>>

export type WarmRunAnswer =
  /**
   * `readers` (a listing): the listed test files whose recorded file-system reads see a changed path (absolute).
   * `typeOnly` (a listing): the listed test files every project of which runs them in vitest's typecheck mode, with
   * the tsconfigs those projects' `tsc` reads (absolute). `typechecked` (a listing): the listed test files some
   * project runs in the typecheck mode (absolute).
   */
  | { status: 'ok'; report: DshVitestReport; rssKb?: number; phases?: WarmRunPhases; calls?: RunCalls; readers?: string[]; typeOnly?: Record<string,
    string[]>; typechecked?: string[]; cancelled?: boolean }
  /** `calls`: the run was cancelled in time (the runner lives on): what its finished test files executed. */
  | { status: 'timeout'; calls?: RunCalls }
  /** The runner crashed, could not start, or answered with an error. */
  | { status: 'error'; error: string }
  /** This vitest's Node API is not the one the warm runner speaks: use the CLI. */
  | { status: 'unsupported'; reason: string }

type ServerMessage =
  | { ready: true; version?: string }
  | { unsupported: string }
  | { startError: string }
  | { id: number; ok: true; report: DshVitestReport; phases?: WarmRunPhases; calls?: RunCalls; readers?: string[]; typeOnly?: Record<string,
    string[]>; typechecked?: string[]; cancelled?: boolean }
  | { id: number; ok: false; error: string }

export interface WarmClientOptions {
  root: string
  /** Absolute path of the workspace's own `vitest/node` entry. */
  vitestNode: string
  /** Extra vitest CLI arguments (`testArgs`). */
  extraArgs: string[]
  /** Heap bound of the runner's main process in MB (0: Node's default). */
  maxHeapMb?: number
  /** Record the functions each test file executes (the calls recorder; default true). */
  recordCalls?: boolean
  /** dsh's vault: read-only for the runner (ADR 0015). */
  vault?: string
}

const SERVER = fileURLToPath(new URL('./server.mjs', import.meta.url))

/** How long a run past its time limit may take to end once cancelled before its process group is killed. */
const CANCEL_GRACE_MS = 10_000

type Ready = { status: 'ready'; version?: string } | { status: 'unsupported'; reason: string } | { status: 'error'; error: string }

/**
 * The parent side of one warm vitest child: starts it (its own process
 * group), sends runs one at a time, kills the whole tree on timeout or
 * dispose. A dead child is started again by the next run.
 */
export class WarmVitestClient {
  private _child?: LongProcess
  /** The newest output of the child (it prints little: vite warnings, a crash). */
  private _output = ''
  private _ready?: Promise<Ready>
  private _nextId = 0
  private _pending?: { id: number; settle: (a: WarmRunAnswer) => void }
  private _starts = 0

  constructor(private readonly options: WarmClientOptions) {}

  /** Whether a child is alive (started or starting). */
  get alive(): boolean {
    return !!this._child?.running
  }

  /** How many times a child was started (for tests and notices). */
  get starts(): number {
    return this._starts
  }

  /** The child's process id (its process group id), while alive. */
  get pid(): number | undefined {
    return this._child?.running ? this._child.pid : undefined
  }

  /** Start the child if none is alive; resolves when it is ready (or cannot be). */
  start(): Promise<Ready> {
    if (this._ready && this._child?.running) return this._ready
    this._starts++
    const heap = this.options.maxHeapMb ? [`--max-old-space-size=${this.options.maxHeapMb}`] : []
    const child = startProcess([process.execPath, ...heap, SERVER, this.options.root, this.options.vitestNode, JSON.stringify(this.options.extraArgs),
      JSON.stringify({ calls: this.options.recordCalls !== false })], {
      cwd: this.options.root,
      env: checkEnv({ CI: '1' }),
      ipc: true,
      // Agent-written tests run in it: they see only the runner's own processes (ADR 0015).
      isolate: checkIsolation(undefined, this.options.vault),
    })
    this._child = child
    this._output = ''
    // Drain stdout (a full pipe would block the runner); keep its tail for messages.
    child.stdout.on('data', (chunk: Buffer) => { this._output = (this._output + chunk.toString('utf8')).slice(-4096) })
    const ready = new Promise<Ready>(resolve => {
      const off = child.onMessage(raw => {
        const message = raw as ServerMessage
        if ('ready' in message) resolve({ status: 'ready', version: message.version })
        else if ('unsupported' in message) resolve({ status: 'unsupported', reason: message.unsupported })
        else if ('startError' in message) resolve({ status: 'error', error: message.startError.split('\n')[0]! })
        else if ('id' in message) {
          const pending = this._pending
          if (pending?.id !== message.id) return
          this._pending = undefined
          // The runner's process group (vitest and its workers), measured from here right after the run.
          pending.settle(message.ok ? { status: 'ok', report: message.report, rssKb: child.pid === undefined ? undefined : processGroupRssKb(child.pid), phases: message.phases, ...(message.calls ? { calls: message.calls } : {}), ...(message.readers ? { readers: message.readers } : {}), ...(message.typeOnly ? { typeOnly: message.typeOnly } : {}), ...(message.typechecked ? { typechecked: message.typechecked } : {}), ...(message.cancelled ? { cancelled: true } : {}) } : { status: 'error', error: message.error.split('\n')[0]! })
        }
      })
      void child.exited.then(exit => {
        off()
        const tail = `${this._output}\n${child.stderrTail()}`.trim().split('\n').filter(Boolean).slice(-1)[0]
        const why = `warm vitest exited (${exit.signal ?? `code ${exit.exitCode}`})${tail ? `: ${tail.slice(0, 200)}` : ''}`
        resolve({ status: 'error', error: why })
        const pending = this._pending
        this._pending = undefined
        pending?.settle({ status: 'error', error: why })
        if (this._child === child) {
          this._child = undefined
          this._ready = undefined
        }
      })
    })
    this._ready = ready
    return ready
  }

  /**
   * One run; `timeoutMs` covers start-up too. A timeout kills the child's whole process group.
   * `yieldTo` (a preemptible run, the warm-up's): when it aborts, the run is cancelled as at a
   * timeout but the runner lives on, and the answer is what finished (`cancelled: true`).
   */
  async run(request: WarmRunRequest, timeoutMs: number, signal?: AbortSignal, yieldTo?: AbortSignal): Promise<WarmRunAnswer> {
    let timer: NodeJS.Timeout | undefined
    const expired = new Promise<'timeout'>(resolve => { timer = setTimeout(() => resolve('timeout'), timeoutMs) })
    // The signal lives as long as the session: its listener goes with the run.
    let onAbort: (() => void) | undefined
    const aborted = new Promise<'aborted'>(resolve => {
      if (signal?.aborted) resolve('aborted')
      onAbort = () => resolve('aborted')
      signal?.addEventListener('abort', onAbort, { once: true })
    })
    try {
      const ready = await Promise.race([this.start(), expired, aborted])
      if (ready === 'timeout' || ready === 'aborted') {
        await this.dispose()
        return ready === 'timeout' ? { status: 'timeout' } : { status: 'error', error: 'aborted' }
      }
      if (ready.status === 'unsupported') {
        await this.dispose()
        return { status: 'unsupported', reason: ready.reason }
      }
      if (ready.status === 'error') {
        await this.dispose()
        return ready
      }
      const child = this._child
      if (!child) return { status: 'error', error: 'warm vitest is gone' }
      const id = ++this._nextId
      const answer = new Promise<WarmRunAnswer>(settle => { this._pending = { id, settle } })
      if (!child.send({ ...request, kind: 'run', id })) {
        this._pending = undefined
        return { status: 'error', error: 'warm vitest is gone' }
      }
      let onYield: (() => void) | undefined
      const yielded = new Promise<'yield'>(resolve => {
        if (yieldTo?.aborted) resolve('yield')
        onYield = () => resolve('yield')
        yieldTo?.addEventListener('abort', onYield, { once: true })
      })
      const result = await Promise.race([answer, expired, aborted, yielded]).finally(() => { if (onYield) yieldTo?.removeEventListener('abort', onYield) })
      if (result === 'yield') {
        child.send({ kind: 'cancel' })
        let grace: NodeJS.Timeout | undefined
        const late = await Promise.race([answer, aborted, expired,
          new Promise<'late'>(resolve => { grace = setTimeout(() => resolve('late'), CANCEL_GRACE_MS) })])
        clearTimeout(grace)
        if (typeof late === 'object') return late.status === 'ok' ? { ...late, cancelled: true } : late
        this._pending = undefined
        await this.dispose()
        return late === 'aborted' ? { status: 'error', error: 'aborted' } : { status: 'timeout' }
      }
      if (result === 'timeout') {
        // Cancelled, vitest lets the tests that are running finish: the records of the files that finished are kept.
        // A run that does not end within the grace (a test stuck in a loop) is killed with its process group.
        child.send({ kind: 'cancel' })
        let grace: NodeJS.Timeout | undefined
        const late = await Promise.race([answer, aborted, new Promise<'late'>(resolve => { grace = setTimeout(() => resolve('late'), CANCEL_GRACE_MS) })])
        clearTimeout(grace)
        if (typeof late === 'object' && late.status === 'ok') return { status: 'timeout', ...(late.calls ? { calls: late.calls } : {}) }
        this._pending = undefined
        await this.dispose()
        return { status: 'timeout' }
      }
      if (result === 'aborted') {
        this._pending = undefined
        await this.dispose()
        return { status: 'error', error: 'aborted' }
      }
      return result
    } finally {
      clearTimeout(timer)
      if (onAbort) signal?.removeEventListener('abort', onAbort)
    }
  }

  /** Stop the child and every worker it started (asks first, then kills the process group). */
  async dispose(): Promise<void> {
    const child = this._child
    this._child = undefined
    this._ready = undefined
    if (!child) return
    child.send({ kind: 'close' })
    await Promise.race([child.exited, new Promise(r => setTimeout(r, 1500).unref())])
    // Even a clean exit may leave workers in the group.
    await child.stop()
  }
}
