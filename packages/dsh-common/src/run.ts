import { randomBytes } from 'node:crypto'
import { execa } from 'execa'
import { trackProcessGroup } from './process-groups.ts'
import { isolatedArgv, isolationSupport, killMarkedProcesses, RUN_MARKER, signalOfIsolatedStatus, type Isolation } from './isolation.ts'

export interface RunOptions {
  cwd: string
  /** Milliseconds before the whole process group is killed (SIGTERM, then SIGKILL after `killGraceMs`). */
  timeoutMs?: number
  killGraceMs?: number
  /** Combined stdout+stderr cap in bytes; the excess is dropped and counted. */
  maxOutputBytes?: number
  /** Added to (or, with an `undefined` value, removed from) this process's environment. */
  env?: Record<string, string | undefined>
  input?: string
  signal?: AbortSignal
  /** Run through `/bin/sh -c` (argv must then be a single command string). */
  shell?: boolean
  /**
   * Isolate the command: in fresh user, PID and mount namespaces where the
   * system allows (`isolationSupport()`), with `readOnly` and `hidden`
   * paths and `overlays`; otherwise every process carrying the run's marker
   * is killed (and a run with overlays throws: it cannot be served).
   * Either way, nothing the command started outlives it: when the leader
   * exits (or is killed), every process it started — also after `setsid`
   * or a double fork — ends.
   */
  isolate?: Isolation
}

export interface RunResult {
  argv: readonly string[]
  cwd: string
  /** Exit code; `null` when killed by a signal or never started. */
  exitCode: number | null
  signal?: string
  stdout: string
  stderr: string
  /** stdout and stderr interleaved as they arrived (capped). */
  output: string
  /** Bytes dropped by the output cap. */
  truncatedBytes: number
  timedOut: boolean
  aborted: boolean
  durationMs: number
  /** Set when the program could not be started (ENOENT, EACCES…). */
  spawnError?: string
  /** With `isolate`: how it was isolated ('none': the marker sweep, see `killMarkedProcesses`). */
  isolation?: 'namespaces' | 'none'
}

const DEFAULT_CAP = 1 << 20

/**
 * Run a command without a shell (unless `shell`), in its own process group,
 * so a timeout or abort kills the whole tree (children and grandchildren,
 * even ones that ignore SIGTERM). The group is tracked (process-groups.ts)
 * so it is killed when this process exits or is interrupted. Never throws
 * for a failing command: the outcome is data.
 */
export async function runCommand(argv: readonly string[], options: RunOptions): Promise<RunResult> {
  const started = performance.now()
  const cap = options.maxOutputBytes ?? DEFAULT_CAP
  let kept = 0
  let truncatedBytes = 0
  const out: string[] = []
  const so: string[] = []
  const se: string[] = []
  const collect = (sink: string[]) => (chunk: Buffer) => {
    const room = cap - kept
    if (room <= 0) {
      truncatedBytes += chunk.length
      return
    }
    const piece = chunk.length > room ? chunk.subarray(0, room) : chunk
    truncatedBytes += chunk.length - piece.length
    kept += piece.length
    const text = piece.toString('utf8')
    out.push(text)
    sink.push(text)
  }
  const command = options.shell ? ['/bin/sh', '-c', argv.join(' ')] : [...argv]
  const isolation = options.isolate ? isolationSupport().mode : undefined
  // Overlays need a mount namespace: without one the command would see the files as they are, not as asked.
  if (isolation === 'none' && options.isolate?.overlays?.length) throw new Error('runCommand: overlays need namespaces, which are not available here (isolationSupport())')
  const marker = isolation === 'none' ? randomBytes(8).toString('hex') : undefined
  const [file, ...args] = isolation === 'namespaces' ? isolatedArgv(command, options.isolate) : command
  let timedOut = false
  let aborted = false
  const child = execa(file!, args, {
    cwd: options.cwd,
    env: childEnv(marker ? { ...options.env, [RUN_MARKER]: marker } : options.env),
    extendEnv: false,
    input: options.input,
    stdin: options.input === undefined ? 'ignore' : 'pipe',
    buffer: false,
    detached: true,
    reject: false,
    stripFinalNewline: false,
    windowsHide: true,
  })
  child.stdout?.on('data', collect(so))
  child.stderr?.on('data', collect(se))
  const pid = child.pid
  // Isolated: the leader's end is the run's end, whoever still holds its output.
  if (isolation) {
    child.on('exit', () => {
      if (pid !== undefined) killGroupOf(pid, 'SIGKILL')
      if (marker) killMarkedProcesses(marker)
    })
  }
  const release = pid === undefined ? undefined : trackProcessGroup(pid)
  const killGroup = (sig: NodeJS.Signals) => {
    if (pid !== undefined) killGroupOf(pid, sig)
  }
  let graceTimer: NodeJS.Timeout | undefined
  const terminate = () => {
    killGroup('SIGTERM')
    graceTimer = setTimeout(() => killGroup('SIGKILL'), options.killGraceMs ?? 2000)
    graceTimer.unref()
  }
  const timer = options.timeoutMs ? setTimeout(() => { timedOut = true; terminate() }, options.timeoutMs) : undefined
  const onAbort = () => { aborted = true; terminate() }
  if (options.signal?.aborted) onAbort()
  else options.signal?.addEventListener('abort', onAbort, { once: true })
  const result = await child
  if (timer) clearTimeout(timer)
  options.signal?.removeEventListener('abort', onAbort)
  // The leader exited; make sure nothing it left in its group lingers.
  if (timedOut || aborted) killGroup('SIGKILL')
  if (graceTimer) clearTimeout(graceTimer)
  release?.()
  const spawnError = result.failed && result.exitCode === undefined && !result.signal && !timedOut && !aborted
    ? (result.originalMessage ?? result.shortMessage ?? 'could not start')
    : undefined
  // In namespaces the command's init reports a signal as 128 + n; a timeout or abort is a kill, as without them.
  const killedInside = isolation === 'namespaces' && (timedOut || aborted) ? signalOfIsolatedStatus(result.exitCode) : undefined
  return {
    argv: options.shell ? [argv.join(' ')] : argv,
    cwd: options.cwd,
    exitCode: killedInside ? null : (result.exitCode ?? null),
    signal: killedInside ?? result.signal ?? undefined,
    stdout: so.join(''),
    stderr: se.join(''),
    output: out.join(''),
    truncatedBytes,
    timedOut,
    aborted,
    durationMs: Math.round(performance.now() - started),
    spawnError,
    ...(isolation ? { isolation } : {}),
  }
}

function killGroupOf(pgid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pgid, sig)
  } catch {
    // ESRCH: the group is already gone.
  }
}

/** Human form of a result's end: "exit 0", "timed out after 120 s", "killed by SIGKILL". */
export function describeExit(r: RunResult, timeoutMs?: number): string {
  if (r.spawnError) return `could not start: ${r.spawnError}`
  if (r.timedOut) return `timed out after ${Math.round((timeoutMs ?? r.durationMs) / 1000)} s (process group killed)`
  if (r.aborted) return 'aborted (process group killed)'
  if (r.exitCode === null) return `killed by ${r.signal ?? 'a signal'}`
  return `exit ${r.exitCode}`
}

/** This process's environment with `overrides` applied; an `undefined` override removes the variable. */
function childEnv(overrides: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries({ ...process.env, ...overrides })) {
    if (value !== undefined) env[key] = value
  }
  return env
}
