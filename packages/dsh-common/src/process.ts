import type { Readable, Writable } from 'node:stream'
import { execa } from 'execa'
import { trackProcessGroup } from './process-groups.ts'

export interface StartOptions {
  cwd: string
  /** Added to (or, with an `undefined` value, removed from) this process's environment. */
  env?: Record<string, string | undefined>
  /** Milliseconds between SIGTERM and SIGKILL of the group when stopping. */
  killGraceMs?: number
}

/** A long-lived child (a server spoken to over stdio) in its own process group. */
export interface LongProcess {
  readonly pid: number | undefined
  readonly stdin: Writable
  readonly stdout: Readable
  /** The last `maxStderrBytes` of stderr (diagnostics for error messages). */
  stderrTail(): string
  /** Settles when the leader exited (never rejects). */
  readonly exited: Promise<{ exitCode: number | null; signal?: string; spawnError?: string }>
  /** Whether the leader is still running. */
  readonly running: boolean
  /**
   * Kill the whole process group: SIGTERM, then SIGKILL after the grace
   * period; resolves when the leader is gone. Idempotent, never throws.
   */
  stop(): Promise<void>
}

/**
 * Start a long-lived command (no shell) in its own process group, so
 * `stop()` (a timeout, a dispose) takes its whole tree down, like
 * `runCommand` does for one-shot commands.
 */
export function startProcess(argv: readonly string[], options: StartOptions): LongProcess {
  const [file, ...args] = argv
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries({ ...process.env, ...options.env })) if (value !== undefined) env[key] = value
  const child = execa(file!, args, {
    cwd: options.cwd,
    env,
    extendEnv: false,
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'pipe',
    buffer: false,
    detached: true,
    reject: false,
    windowsHide: true,
  })
  let running = true
  let tail = ''
  child.stderr?.on('data', (chunk: Buffer) => { tail = (tail + chunk.toString('utf8')).slice(-4096) })
  // A server whose stdin closes under it must not take this process down with EPIPE.
  child.stdin?.on('error', () => {})
  const release = child.pid === undefined ? undefined : trackProcessGroup(child.pid)
  const exited = child.then(r => {
    running = false
    release?.()
    const spawnError = r.failed && r.exitCode === undefined && !r.signal ? (r.originalMessage ?? r.shortMessage ?? 'could not start') : undefined
    return { exitCode: r.exitCode ?? null, signal: r.signal ?? undefined, spawnError }
  })
  const pid = child.pid
  const killGroup = (sig: NodeJS.Signals) => {
    if (pid === undefined) return
    try {
      process.kill(-pid, sig)
    } catch {
      // ESRCH: the group is already gone.
    }
  }
  let stopping: Promise<void> | undefined
  return {
    pid,
    stdin: child.stdin!,
    stdout: child.stdout!,
    stderrTail: () => tail,
    exited,
    get running() {
      return running
    },
    stop() {
      stopping ??= (async () => {
        killGroup('SIGTERM')
        const grace = setTimeout(() => killGroup('SIGKILL'), options.killGraceMs ?? 2000)
        await exited
        clearTimeout(grace)
        // The leader is gone; nothing it started may linger in its group.
        killGroup('SIGKILL')
      })()
      return stopping
    },
  }
}
