import { readdirSync, readFileSync } from 'node:fs'
import type { Readable, Writable } from 'node:stream'
import { execa } from 'execa'
import { trackProcessGroup } from './process-groups.ts'
import { isolatedArgv, isolationSupport, signalOfIsolatedStatus, type Isolation } from './isolation.ts'

export interface StartOptions {
  cwd: string
  /** Added to (or, with an `undefined` value, removed from) this process's environment. */
  env?: Record<string, string | undefined>
  /** Milliseconds between SIGTERM and SIGKILL of the group when stopping. */
  killGraceMs?: number
  /** Open an IPC channel (the child must be a Node process): `send` and `onMessage` work. */
  ipc?: boolean
  /**
   * Start it in fresh user, PID and mount namespaces where the system allows
   * (`isolationSupport()`), as `runCommand`'s `isolate` does: its `/proc`
   * shows only its own processes, and everything it starts ends with it
   * (also when this process is SIGKILLed). Where namespaces are not
   * available it starts as without (its process group still ends on `stop()`).
   */
  isolate?: Isolation
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
  /** Send one message over the IPC channel (`ipc: true`); false when there is none or it closed. */
  send(message: unknown): boolean
  /** Listen to IPC messages (`ipc: true`); returns the disposer. */
  onMessage(listener: (message: unknown) => void): () => void
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
  const isolated = !!options.isolate && isolationSupport().mode === 'namespaces'
  const [file, ...args] = isolated ? isolatedArgv(argv, options.isolate) : argv
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
    ...(options.ipc ? { ipc: true, serialization: 'advanced' as const } : {}),
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
    // Isolated, the namespace's init reports a signal that ended the command as 128 + n.
    const inside = isolated ? signalOfIsolatedStatus(r.exitCode) : undefined
    if (inside) return { exitCode: null, signal: inside, spawnError }
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
    send(message) {
      if (!options.ipc || !running || !child.connected) return false
      try {
        child.send(message as never)
        return true
      } catch {
        // The channel closed between the check and the send.
        return false
      }
    },
    onMessage(listener) {
      if (!options.ipc) return () => {}
      const handler = (message: unknown) => listener(message)
      child.on('message', handler)
      return () => { child.off('message', handler) }
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

/**
 * Resident memory of every process in a process group, in kB (Linux `/proc`);
 * undefined where `/proc` cannot be read.
 */
export function processGroupRssKb(pgid: number): number | undefined {
  let total = 0
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    // No procfs (not Linux).
    return undefined
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      // Fields after the command name (which may hold spaces): state ppid pgrp …
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(fields[2]) !== pgid) continue
      const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${entry}/status`, 'utf8'))
      if (rss) total += Number(rss[1])
    } catch {
      // The process exited while we read it.
    }
  }
  return total
}

/**
 * The sum of `read(pid)` over a process and all its descendants (Linux
 * `/proc`); `read` returns the process's parent and its value, undefined
 * when it cannot be read (it exited). Undefined where `/proc` cannot be read.
 */
function sumOverTree(pid: number, read: (entry: string) => { ppid: number; value: number } | undefined): number | undefined {
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    // No procfs (not Linux).
    return undefined
  }
  const children = new Map<number, number[]>()
  const values = new Map<number, number>()
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    let got: { ppid: number; value: number } | undefined
    try {
      got = read(entry)
    } catch {
      // The process exited while we read it.
    }
    if (!got) continue
    const list = children.get(got.ppid) ?? []
    list.push(Number(entry))
    children.set(got.ppid, list)
    values.set(Number(entry), got.value)
  }
  let total = 0
  const queue = [pid]
  for (let p; (p = queue.pop()) !== undefined;) {
    total += values.get(p) ?? 0
    queue.push(...(children.get(p) ?? []))
  }
  return total
}

/**
 * Resident memory of a process and all its descendants (worker threads
 * included: they are the process's own), in kB (Linux `/proc`); undefined
 * where `/proc` cannot be read.
 */
export function processTreeRssKb(pid: number): number | undefined {
  return sumOverTree(pid, entry => {
    const status = readFileSync(`/proc/${entry}/status`, 'utf8')
    return { ppid: Number(/PPid:\s+(\d+)/.exec(status)?.[1]), value: Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) }
  })
}

/** Clock ticks per second of `/proc/<pid>/stat` times (USER_HZ: 100 on Linux). */
const USER_HZ = 100

/**
 * CPU time of a process and all its descendants, in ms (Linux `/proc`):
 * user + system of each live process (its threads included) and of the
 * children it has waited for (so a command that ran and exited still
 * counts in its parent). Undefined where `/proc` cannot be read. The
 * difference of two readings is what the tree spent between them.
 */
export function processTreeCpuMs(pid: number): number | undefined {
  const ticks = sumOverTree(pid, entry => {
    const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
    // Fields after the command name (which may hold spaces): state ppid … utime(14) stime cutime cstime.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return { ppid: Number(f[1]), value: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) }
  })
  return ticks === undefined ? undefined : ticks * (1000 / USER_HZ)
}
