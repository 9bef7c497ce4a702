import { startProcess, type LongProcess } from 'dsh-common'
import { checkEnv } from '../../run.ts'

/** The server answered a request with a JSON-RPC error. */
class RpcError extends Error {
  constructor(readonly method: string, readonly code: number, message: string) {
    super(`${method}: ${message}`)
  }
}

/** The server process is gone (exited, killed, never started). */
export class RpcGone extends Error {}

interface Pending {
  method: string
  resolve(value: unknown): void
  reject(error: Error): void
}

/**
 * JSON-RPC 2.0 over a child's stdio with `Content-Length` framing (the
 * framing of TypeScript 7's `tsc --api --async` and of language servers).
 * The child runs in its own process group: `close()` kills its tree.
 */
export class RpcClient {
  private readonly _process: LongProcess
  private readonly _pending = new Map<number, Pending>()
  private _buffer: Buffer = Buffer.alloc(0)
  private _nextId = 0
  private _gone?: RpcGone

  constructor(argv: readonly string[], cwd: string) {
    this._process = startProcess(argv, { cwd, env: checkEnv() })
    this._process.stdout.on('data', (chunk: Buffer) => this.onData(chunk))
    void this._process.exited.then(r => {
      const tail = this._process.stderrTail().trim().split('\n').slice(-1)[0]
      const why = r.spawnError ? `could not start: ${r.spawnError}` : `exited (${r.signal ?? `code ${r.exitCode}`})`
      this.fail(new RpcGone(`tsc --api ${why}${tail ? `: ${tail}` : ''}`))
    })
  }

  get alive(): boolean {
    return !this._gone && this._process.running
  }

  /** The server's pid (the leader of its process group). */
  get pid(): number | undefined {
    return this._process.pid
  }

  /** Send a request; resolves with its result, rejects with RpcError or RpcGone. */
  request<T>(method: string, params: unknown): Promise<T> {
    if (this._gone) return Promise.reject(this._gone)
    const id = ++this._nextId
    const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id, method, params }), 'utf8')
    return new Promise<T>((resolve, reject) => {
      this._pending.set(id, { method, resolve: resolve as (v: unknown) => void, reject })
      this._process.stdin.write(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii'), body]))
    })
  }

  /** Kill the server's process group; pending requests reject. */
  async close(): Promise<void> {
    this.fail(new RpcGone('tsc --api was stopped'))
    await this._process.stop()
  }

  private fail(error: RpcGone) {
    this._gone ??= error
    for (const p of this._pending.values()) p.reject(this._gone)
    this._pending.clear()
  }

  private onData(chunk: Buffer) {
    this._buffer = this._buffer.length ? Buffer.concat([this._buffer, chunk]) : chunk
    for (;;) {
      const headerEnd = this._buffer.indexOf('\r\n\r\n')
      if (headerEnd < 0) return
      const header = this._buffer.subarray(0, headerEnd).toString('ascii')
      const length = Number(/Content-Length:\s*(\d+)/i.exec(header)?.[1] ?? NaN)
      if (!Number.isFinite(length)) {
        this.fail(new RpcGone(`tsc --api sent a message without Content-Length: ${header.slice(0, 80)}`))
        void this._process.stop()
        return
      }
      const start = headerEnd + 4
      if (this._buffer.length < start + length) return
      const text = this._buffer.subarray(start, start + length).toString('utf8')
      this._buffer = this._buffer.subarray(start + length)
      let message: { id?: number; method?: string; result?: unknown; error?: { code: number; message: string } }
      try {
        message = JSON.parse(text) as typeof message
      } catch {
        // A broken stream cannot be resynchronised: give the server up (the check falls back or restarts it).
        this.fail(new RpcGone(`tsc --api sent a message that is not JSON: ${text.slice(0, 80)}`))
        void this._process.stop()
        return
      }
      this.onMessage(message)
    }
  }

  private onMessage(message: { id?: number; method?: string; result?: unknown; error?: { code: number; message: string } }) {
    if (message.method !== undefined) {
      // A request from the server (file-system callbacks are not enabled): refuse it.
      if (message.id !== undefined) {
        const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'not supported' } }), 'utf8')
        this._process.stdin.write(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii'), body]))
      }
      return
    }
    const pending = message.id === undefined ? undefined : this._pending.get(message.id)
    if (!pending) return
    this._pending.delete(message.id!)
    if (message.error) pending.reject(new RpcError(pending.method, message.error.code, message.error.message))
    else pending.resolve(message.result)
  }
}
