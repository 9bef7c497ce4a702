import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http'
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import { acquireFileLock, ensureVault, LockTimeoutError, processState, type FileLock, type LockOwner } from 'dsh-common'
import type { HookAdapter } from './adapter.ts'
import { adapterFor } from './adapters/index.ts'
import type { HookHost, PendingVerdict } from './host.ts'
import type { WitnessReport } from './chain-witness.ts'
import { hookPaths, MAX_SOCKET_PATH } from './paths.ts'

/** The host's lock is held by a live process: at most one host per workspace. */
export class HostRunningError extends Error {
  readonly code = 'HOST_RUNNING'
  constructor(readonly pid: number) {
    super(`a dsh hooks host already serves this workspace (pid ${pid})`)
  }
}

/**
 * Take the workspace's host lock (its file holds this process's pid), the
 * first thing a starting host does, so a second starter exits at once.
 * @throws HostRunningError when a live process holds it.
 */
export async function claimHost(vault: string): Promise<FileLock> {
  const paths = hookPaths(vault)
  ensureVault(vault)
  mkdirSync(paths.dir, { recursive: true, mode: 0o700 })
  chmodSync(paths.dir, 0o700)
  for (let attempt = 0; ; attempt++) {
    try {
      return await acquireFileLock(paths.lock, { staleMs: Number.MAX_SAFE_INTEGER, timeoutMs: 0 })
    } catch (error) {
      if (!(error instanceof LockTimeoutError)) throw error
      const pid = error.holder?.pid ?? 0
      // A stopped holder (SIGSTOP) answers nothing and takes no signal but SIGKILL: it is replaced, not waited for.
      if (attempt > 0 || !pid || !/^[Tt]$/.test(schedulerState(pid) ?? '')) throw new HostRunningError(pid)
      process.kill(pid, 'SIGKILL')
      for (let i = 0; i < 50 && schedulerState(pid) !== undefined && schedulerState(pid) !== 'Z'; i++) await new Promise(r => setTimeout(r, 20))
    }
  }
}

export interface ListenOptions {
  host: HookHost
  vault: string
  workspace: string
  /** Exit after this long without a hook call (and no call waiting for its post hook). */
  idleMs: number
  /** Called once when idle (or on `close`): dispose the suite, release the lock. */
  onIdle(): void | Promise<void>
  adapters?: (agent: string) => HookAdapter | undefined
  log?: (line: string) => void
  /** More of `GET /status` (what the suite is measuring now). */
  status?: () => Partial<HostStatus>
}

export interface HookServer {
  socket: string
  close(): Promise<void>
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.on('error', reject)
  })
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = body === undefined ? '' : JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

/** A hook answer later than this starts the heartbeat. */
const HEARTBEAT_AFTER_MS = 1000
/** Spaces sent per heartbeat: the client's curl gives up below 1 byte/s averaged over seconds. */
const HEARTBEAT = ' '.repeat(32)
/** What a hook answer that failed after its heartbeat began ends with (the client fails open on it). */
const HOOK_ERROR_MARK = '!dsh-error'

/**
 * Answer a hook call: at once when it is ready within a second (the common
 * case: one plain response); else a 200 is sent then and a few spaces every
 * second until the answer follows them (JSON may start with white space), so
 * the client tells a host that is working (bytes keep coming) from one that
 * is stopped or wedged (nothing for seconds) with no process of its own.
 * A failure after the heartbeat began ends the body with `!dsh-error`.
 */
async function answerHook(res: ServerResponse, answer: () => Promise<unknown>): Promise<void> {
  let beat: NodeJS.Timeout | undefined
  const pulse = () => {
    // A client that gave up (its timeout) closed the socket: nothing more to send.
    if (!res.destroyed) res.write(HEARTBEAT)
  }
  const first = setTimeout(() => {
    if (res.destroyed) return
    res.writeHead(200, { 'content-type': 'application/json' })
    pulse()
    beat = setInterval(pulse, 1000)
  }, HEARTBEAT_AFTER_MS)
  try {
    const body = await answer()
    if (!res.headersSent) return send(res, 200, body)
    res.end(body === undefined ? '' : JSON.stringify(body))
  } catch (error) {
    if (!res.headersSent) throw error
    res.end(`\n${HOOK_ERROR_MARK} ${(error as Error).message.replace(/\s+/g, ' ')}`)
    throw error
  } finally {
    clearTimeout(first)
    clearInterval(beat)
  }
}

/**
 * Serve hook calls on `<vault>/hooks/host.sock` (owner-only): `POST
 * /hook/<agent>/<event>` with the agent's payload answers with the JSON the
 * hook writes; `GET /suite/tools` and `POST /suite/call` serve the MCP
 * server; `GET /verdicts/pending` lists the verdicts still running in the
 * background, `POST /verdicts/settle` answers once they are final (logs
 * written); `GET /status` says who is served. Only this workspace's host
 * listens there; the socket is created with umask 077.
 */
export async function listenHooks(options: ListenOptions): Promise<HookServer> {
  const paths = hookPaths(options.vault)
  if (paths.socket.length > MAX_SOCKET_PATH) throw new Error(`socket path ${paths.socket} is longer than ${MAX_SOCKET_PATH} bytes (a unix socket limit); use a shorter workspace path`)
  const find = options.adapters ?? adapterFor
  const started = Date.now()
  let inFlight = 0
  let timer: NodeJS.Timeout | undefined
  let closing: Promise<void> | undefined
  const arm = () => {
    clearTimeout(timer)
    timer = setTimeout(() => {
      if (inFlight > 0 || options.host.busy()) arm()
      else void close()
    }, options.idleMs)
    timer.unref()
  }

  const server = createServer((req, res) => {
    inFlight++
    arm()
    const gone = new AbortController()
    res.on('close', () => {
      if (!res.writableFinished) gone.abort()
      inFlight--
      arm()
    })
    route(req, res, gone.signal).catch((error: Error) => {
      options.log?.(`error ${req.method} ${req.url}: ${error.stack ?? error.message}`)
      if (!res.headersSent) send(res, 500, { error: error.message })
    })
  })

  async function route(req: IncomingMessage, res: ServerResponse, gone: AbortSignal): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://dsh')
    const hook = /^\/hook\/([\w-]+)\/([\w-]+)$/.exec(url.pathname)
    if (req.method === 'POST' && hook) {
      const adapter = find(hook[1]!)
      const body = await readBody(req)
      if (!adapter) return send(res, 404, { error: `no adapter for agent "${hook[1]}"` })
      let payload: unknown
      try {
        payload = JSON.parse(body)
      } catch {
        payload = body
      }
      return answerHook(res, () => options.host.handle(adapter, hook[2]!, payload, gone))
    }
    if (req.method === 'GET' && url.pathname === '/suite/tools') return send(res, 200, options.host.suiteTools())
    if (req.method === 'POST' && url.pathname === '/suite/call') {
      const { name, arguments: args } = JSON.parse(await readBody(req)) as { name: string; arguments?: unknown }
      return send(res, 200, await options.host.callSuiteTool(name, args))
    }
    if (req.method === 'GET' && url.pathname === '/proof/head') return send(res, 200, options.host.witness.report())
    if (req.method === 'GET' && url.pathname === '/verdicts/pending') return send(res, 200, { pending: options.host.pendingVerdicts() })
    if (req.method === 'POST' && url.pathname === '/verdicts/settle') return send(res, 200, { settled: await options.host.settleVerdicts() })
    if (req.method === 'GET' && url.pathname === '/status') {
      return send(res, 200, {
        pid: process.pid, workspace: options.workspace, sessions: options.host.sessionIds(),
        uptimeMs: Date.now() - started, rssBytes: process.memoryUsage().rss, ...options.status?.(),
      })
    }
    send(res, 404, { error: `no route ${req.method} ${url.pathname}` })
  }

  rmSync(paths.socket, { force: true })
  rmSync(paths.noted, { recursive: true, force: true })
  const umask = process.umask(0o077)
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(paths.socket, () => resolve())
    })
  } finally {
    process.umask(umask)
  }
  chmodSync(paths.socket, 0o600)
  arm()
  // A workspace (or vault) removed under the host: nothing can reach it any more.
  const orphan = setInterval(() => {
    if (!existsSync(paths.socket)) void close()
  }, 10_000)
  orphan.unref()

  const close = () => closing ??= (async () => {
    clearTimeout(timer)
    clearInterval(orphan)
    await new Promise<void>(resolve => server.close(() => resolve()))
    rmSync(paths.socket, { force: true })
    await options.onIdle()
  })()
  return { socket: paths.socket, close }
}

/** What `dsh hooks status` reports about a workspace's host. */
export interface HostStatus {
  /** `stopped`: its process is stopped (SIGSTOP); `unresponsive`: running, socket there, no answer in time. */
  state: 'up' | 'starting' | 'stopped' | 'unresponsive' | 'down'
  pid?: number
  sessions?: string[]
  rssBytes?: number
  /** Each thread's V8 heap (the main thread's, the type-check worker's as it last reported it): used and committed bytes. */
  heaps?: { thread: string; usedBytes: number; totalBytes: number }[]
  uptimeMs?: number
  /** What the suite is measuring now (the accepted state at session start, a write's checks); empty: nothing, warm. */
  measuring?: string[]
  /**
   * The warm-up (dsh-dstvalid's, begun at the first session start): `warming`, `warm` (what a
   * first write needs is measured; `ms` it took) or `cold` (it ended without, `why`).
   */
  warm?: { state: 'warming' | 'warm' | 'cold'; ms: number; pieces: number; yielded: number; why?: string }
}

/** The scheduler state letter of a process (`R`, `S`, `T` stopped…), undefined when it is gone or there is no /proc. */
function schedulerState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
  } catch {
    // ENOENT: no such process (or not Linux).
    return undefined
  }
}

/** The host's pid from its lock, when that process is alive. */
function hostPid(vault: string): number | undefined {
  let owner: LockOwner
  try {
    owner = JSON.parse(readFileSync(hookPaths(vault).lock, 'utf8')) as LockOwner
  } catch {
    return undefined
  }
  const alive = processState(owner)
  return alive === 'alive' || alive === 'this-process' ? owner.pid : undefined
}

/**
 * Ask the workspace's host over its socket; otherwise tell from its lock
 * and its process: a live holder that is stopped is `stopped`; one with a
 * socket that did not answer is `unresponsive`; one without is `starting`.
 */
export async function hostStatus(vault: string, timeoutMs = 2000): Promise<HostStatus> {
  const paths = hookPaths(vault)
  const pid = hostPid(vault)
  const stopped = pid !== undefined && /^[Tt]$/.test(schedulerState(pid) ?? '')
  if (stopped) return { state: 'stopped', pid }
  const socket = existsSync(paths.socket)
  if (socket) {
    const answer = await requestSocket(paths.socket, 'GET', '/status', undefined, timeoutMs).catch(() => undefined)
    if (answer) return { state: 'up', ...(JSON.parse(answer) as Omit<HostStatus, 'state'>) }
  }
  if (pid === undefined) return { state: 'down' }
  // Stopped while it was asked (a signal is not instant).
  if (/^[Tt]$/.test(schedulerState(pid) ?? '')) return { state: 'stopped', pid }
  return { state: socket ? 'unresponsive' : 'starting', pid }
}

/** Whether a process runs (a zombie, ended and not yet reaped, does not). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    // ESRCH: gone (EPERM cannot be: the host is this user's).
    return false
  }
  return !/^[ZX]$/.test(schedulerState(pid) ?? '')
}

/**
 * Stop the workspace's host (nothing will call it: its hooks were
 * uninstalled): SIGTERM, which it answers by closing once the calls in
 * flight are answered (at most 5 s), SIGKILL after `graceMs` (at once when it
 * is stopped: a stopped process takes no other signal). Resolves once it is
 * gone, with its pid; undefined when none ran.
 */
export async function stopHost(vault: string, graceMs = 8000): Promise<number | undefined> {
  const pid = hostPid(vault)
  if (pid === undefined) return undefined
  const gone = async (ms: number) => {
    for (const until = Date.now() + ms; Date.now() < until; await new Promise(r => setTimeout(r, 100))) if (!running(pid)) return true
    return !running(pid)
  }
  const stopped = /^[Tt]$/.test(schedulerState(pid) ?? '')
  try {
    process.kill(pid, stopped ? 'SIGKILL' : 'SIGTERM')
  } catch {
    // Ended meanwhile.
    return pid
  }
  if (!(await gone(graceMs))) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // Ended meanwhile.
    }
    await gone(5000)
  }
  return pid
}

/** One HTTP request over a unix socket; resolves with the body of a 200 answer. */
export function requestSocket(socket: string, method: string, path: string, body: string | undefined, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: socket, method, path, headers: { 'content-type': 'application/json' }, timeout: timeoutMs }, res => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('error', reject)
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        if (res.statusCode === 200) resolve(text)
        else reject(new Error(`${method} ${path} on ${socket}: ${res.statusCode} ${text}`))
      })
    })
    req.on('timeout', () => req.destroy(new Error(`no answer from ${socket} within ${timeoutMs} ms`)))
    req.on('error', reject)
    req.end(body)
  })
}

/**
 * The live host's record of the proof chains its suite writes (see
 * `ChainWitness`); undefined when no host of this workspace answers.
 */
export async function askWitness(vault: string, timeoutMs = 2000): Promise<WitnessReport | undefined> {
  const paths = hookPaths(vault)
  if (!existsSync(paths.socket)) return undefined
  const answer = await requestSocket(paths.socket, 'GET', '/proof/head', undefined, timeoutMs).catch(() => undefined)
  return answer ? JSON.parse(answer) as WitnessReport : undefined
}

/**
 * The verdicts still running in the background in the workspace's live
 * host; undefined when no host of this workspace answers.
 */
export async function askPendingVerdicts(vault: string, timeoutMs = 2000): Promise<PendingVerdict[] | undefined> {
  const paths = hookPaths(vault)
  if (!existsSync(paths.socket)) return undefined
  const answer = await requestSocket(paths.socket, 'GET', '/verdicts/pending', undefined, timeoutMs).catch(() => undefined)
  return answer ? (JSON.parse(answer) as { pending: PendingVerdict[] }).pending : undefined
}

/**
 * Wait until the live host's background verdicts are final and its session
 * logs written; resolves with the verdicts that were pending (undefined: no
 * host answered within `timeoutMs`, default 10 minutes: a verdict may run
 * the project's tests).
 */
export async function settleHostVerdicts(vault: string, timeoutMs = 600_000): Promise<PendingVerdict[] | undefined> {
  const paths = hookPaths(vault)
  if (!existsSync(paths.socket)) return undefined
  const answer = await requestSocket(paths.socket, 'POST', '/verdicts/settle', undefined, timeoutMs).catch(() => undefined)
  return answer ? (JSON.parse(answer) as { settled: PendingVerdict[] }).settled : undefined
}
