import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import type { ImpactList } from '../../impact.ts'
import { checkEnvFull } from '../../run.ts'
import type { TsCheckResult } from './program.ts'
import { offerParser, withdrawParser, type ParseRequest, type ParserHost } from '../js/body-edit.ts'
import type { WorkerHeap, WorkerInit, WorkerReady, WorkerReply, WorkerRequest } from './protocol.ts'

/**
 * Not answered within the timeout: the worker keeps working on it (or on an
 * earlier request still running) in the background; `runningMs` is how long
 * that work has run so far.
 */
export type TsTimeout = { status: 'timeout'; runningMs: number }

export type TsWorkerAnswer =
  | { status: 'ok'; result: TsCheckResult }
  | TsTimeout
  | { status: 'error'; error: string }

export type TsImpactAnswer =
  | { status: 'ok'; impact: ImpactList }
  | TsTimeout
  | { status: 'error'; error: string }

type Reply = Extract<WorkerReply, { ok: true }>
type Answer = { status: 'ok'; reply: Reply } | TsTimeout | { status: 'error'; error: string }

export interface TsWorkerOptions {
  /** Old-generation heap bound of the worker, in MB (0: Node's default). A program past it dies and is restarted cold. */
  maxHeapMb: number
}

/**
 * The loader the worker needs to import `worker.ts`: tsx's ESM API when it
 * is installed (this suite runs from TypeScript sources), else nothing (a
 * runtime that strips types itself).
 */
function tsxApiUrl(): string | undefined {
  try {
    const cjs = createRequire(import.meta.url).resolve('tsx/esm/api')
    // The `require` entry cannot register ESM hooks from an eval worker; its ESM twin can.
    return pathToFileURL(cjs.replace(/\.cjs$/, '.mjs')).href
  } catch {
    // tsx is not installed: rely on the runtime.
    return undefined
  }
}

function bootstrap(entry: string): string {
  const api = tsxApiUrl()
  return `(async () => {
    ${api ? `(await import(${JSON.stringify(api)})).register()` : ''}
    await import(${JSON.stringify(entry)})
  })().catch(error => { setImmediate(() => { throw error }) })`
}

/**
 * A long-lived worker thread holding the warm TypeScript program. One
 * request at a time. A request that outlives its timeout is answered
 * `timeout` but never thrown away: the worker finishes it in the background
 * (its program keeps the work: a cold first check that takes minutes is
 * done once, not restarted from nothing), and the next request waits for it
 * within its own timeout. Only dispose (or a crash) ends the worker.
 */
export class TsWorkerClient implements ParserHost {
  private _worker?: Worker
  private _ready?: Promise<WorkerReady>
  private _nextId = 0
  private _pending?: { id: number; settle: (a: Answer) => void; since: number; done: Promise<void> }
  /** Fails the start in progress (set while a worker is starting). */
  private _failStart?: (why: string) => void
  private _heap?: WorkerHeap['heap']

  constructor(private readonly init: WorkerInit, private readonly options: TsWorkerOptions) {
    // Its TypeScript parses for the body-edit parser too, when idle: the main thread then loads none.
    offerParser(this)
  }

  /**
   * A parse for the body-edit parser, on the worker's TypeScript: only when
   * the worker is up and idle (a check in flight, or a start, is not waited
   * for: undefined, and the parser uses its own).
   */
  async parse(request: ParseRequest): Promise<{ value: unknown } | undefined> {
    if (!this._worker || this._pending || this._failStart) return undefined
    const answer = await this.request({ kind: 'parse', request }, PARSE_TIMEOUT_MS)
    return answer.status === 'ok' && 'parsed' in answer.reply ? { value: answer.reply.parsed } : undefined
  }

  /** The worker's heap as it last reported it (after its last answer); undefined while none is alive. */
  get heap(): WorkerHeap['heap'] | undefined {
    return this._worker ? this._heap : undefined
  }

  /** Whether a worker (and its warm program) is alive. */
  get alive(): boolean {
    return !!this._worker
  }

  /** Start the worker if needed; resolves with the workspace's TypeScript version. */
  start(): Promise<WorkerReady> {
    if (this._ready) return this._ready
    offerParser(this)
    const entry = new URL('./worker.ts', import.meta.url).href
    const worker = new Worker(bootstrap(entry), {
      eval: true,
      workerData: this.init,
      env: checkEnvFull(),
      resourceLimits: this.options.maxHeapMb ? { maxOldGenerationSizeMb: this.options.maxHeapMb } : undefined,
      stdout: false,
      stderr: false,
    })
    this._worker = worker
    this._ready = new Promise<WorkerReady>((resolve, reject) => {
      this._failStart = why => reject(new Error(why))
      const onMessage = (message: WorkerReady | WorkerReply | WorkerHeap) => {
        if ('heap' in message) {
          if (this._worker === worker) this._heap = message.heap
          return
        }
        if ('ready' in message) {
          this._failStart = undefined
          resolve(message)
          worker.unref()
          return
        }
        const pending = this._pending
        if (pending && pending.id === message.id) {
          this._pending = undefined
          worker.unref()
          pending.settle(message.ok ? { status: 'ok', reply: message } : { status: 'error', error: message.error })
        }
      }
      const onGone = (why: string) => {
        if (this._worker !== worker) return
        this.forget()
        reject(new Error(why))
        const pending = this._pending
        this._pending = undefined
        pending?.settle({ status: 'error', error: why })
      }
      worker.on('message', onMessage)
      worker.on('error', error => onGone(`type-check worker failed: ${error.message}`))
      worker.on('exit', code => onGone(`type-check worker exited (code ${code})`))
    })
    this._ready.catch(() => {})
    return this._ready
  }

  /**
   * Type-check the program; `changed` are absolute paths a write touched.
   * `pause`: the answer may be part-way (`result.paused`, at a file with a
   * new error): {@link resume} goes on, any other request stops it.
   */
  async check(changed: readonly string[], timeoutMs: number, pause = false): Promise<TsWorkerAnswer> {
    return this.checked(await this.request({ kind: 'check', changed: [...changed], ...(pause ? { pause } : {}) }, timeoutMs))
  }

  /** Go on with a paused check. */
  async resume(timeoutMs: number): Promise<TsWorkerAnswer> {
    return this.checked(await this.request({ kind: 'resume' }, timeoutMs))
  }

  private checked(answer: Answer): TsWorkerAnswer {
    if (answer.status !== 'ok') return answer
    return 'result' in answer.reply ? { status: 'ok', result: answer.reply.result } : { status: 'error', error: 'type-check worker answered out of turn' }
  }

  /** Importers of workspace-relative `files` in the warm program's import graph, nearest first, at most `max`. */
  async importers(files: readonly string[], max: number, timeoutMs: number): Promise<TsImpactAnswer> {
    const answer = await this.request({ kind: 'importers', files: [...files], max }, timeoutMs)
    if (answer.status !== 'ok') return answer
    return 'impact' in answer.reply ? { status: 'ok', impact: answer.reply.impact } : { status: 'error', error: 'type-check worker answered out of turn' }
  }

  /**
   * Forget the last check (every file it was told about is back byte for
   * byte): the worker's projects return to their state from before it.
   * Returns how many projects were reverted; 0 when no worker is alive (the
   * next check starts from the build-info cache or cold anyway).
   */
  async revert(timeoutMs: number): Promise<number> {
    if (!this._worker) return 0
    const answer = await this.request({ kind: 'revert' }, timeoutMs)
    return answer.status === 'ok' && 'reverted' in answer.reply ? answer.reply.reverted : 0
  }

  private async request(message: DistributiveOmit<WorkerRequest, 'id'>, timeoutMs: number): Promise<Answer> {
    const started = performance.now()
    const left = () => Math.max(1, timeoutMs - (performance.now() - started))
    try {
      await this.withTimeout(this.start(), timeoutMs)
    } catch (error) {
      // Still starting (loading TypeScript): it keeps starting.
      if (error === TIMEOUT) return { status: 'timeout', runningMs: Math.round(performance.now() - started) }
      return { status: 'error', error: (error as Error).message }
    }
    // An earlier request that outlived its timeout is still running: wait for it, within this one's time.
    const earlier = this._pending
    if (earlier) {
      try {
        await this.withTimeout(earlier.done, left())
      } catch (error) {
        if (error === TIMEOUT) return { status: 'timeout', runningMs: Math.round(performance.now() - earlier.since) }
        throw error
      }
    }
    const worker = this._worker
    if (!worker) return { status: 'error', error: 'type-check worker is gone' }
    const id = ++this._nextId
    const since = performance.now()
    let settled!: () => void
    const done = new Promise<void>(resolve => { settled = resolve })
    const answer = new Promise<Answer>(settle => {
      this._pending = { id, since, done, settle: a => { settle(a); settled() } }
    })
    worker.ref()
    worker.postMessage({ ...message, id } as WorkerRequest)
    try {
      return await this.withTimeout(answer, left())
    } catch (error) {
      // Not thrown away: the worker finishes it in the background.
      if (error === TIMEOUT) return { status: 'timeout', runningMs: Math.round(performance.now() - since) }
      throw error
    }
  }

  /** How long the request running in the background has been running (ms); undefined when the worker is idle. */
  get busyMs(): number | undefined {
    return this._pending ? Math.round(performance.now() - this._pending.since) : undefined
  }

  /**
   * Terminate the worker (its warm program is lost). An idle worker with a
   * build-info cache writes it first (bounded by `flushTimeoutMs`), so the
   * next start re-checks only what changed.
   */
  async dispose(flushTimeoutMs = 10_000): Promise<void> {
    withdrawParser(this)
    if (this.init.cacheDir && this._worker && !this._pending && !this._failStart) await this.request({ kind: 'persist' }, flushTimeoutMs)
    await this.terminate()
  }

  private async terminate(): Promise<void> {
    const worker = this._worker
    const pending = this._pending
    const failStart = this._failStart
    this._pending = undefined
    this._failStart = undefined
    this.forget()
    // A start or request in flight is answered now, so no caller waits (and no
    // timeout timer keeps the process alive) after disposal.
    failStart?.('type-check worker disposed')
    pending?.settle({ status: 'error', error: 'type-check worker disposed' })
    await worker?.terminate()
  }

  private forget() {
    this._worker = undefined
    this._ready = undefined
  }

  private withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
    let timer: NodeJS.Timeout | undefined
    return Promise.race([
      promise,
      new Promise<never>((_, reject) => { timer = setTimeout(() => reject(TIMEOUT), ms) }),
    ]).finally(() => clearTimeout(timer))
  }
}

const TIMEOUT = Symbol('timeout')

/** A parse takes milliseconds; one that does not answer in this long is the parser's own to do. */
const PARSE_TIMEOUT_MS = 10_000

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never
