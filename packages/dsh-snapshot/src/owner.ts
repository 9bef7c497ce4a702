import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { hostname } from 'node:os'

/**
 * Who writes a journal. A pid alone is not enough to tell a dead writer
 * from a live one (pids are reused, machines reboot), so the process start
 * time and the boot id are kept where the OS offers them (Linux /proc).
 */
export interface JournalOwner {
  pid: number
  host: string
  /** Start time of the process in clock ticks since boot (Linux), when readable. */
  start?: string
  /** Kernel boot id (Linux), when readable. */
  boot?: string
  /** Unique per Snapshots instance; several live in one process (tests, hot reload). */
  instance: string
}

function readProcStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Field 2 (comm) may contain spaces and parentheses; fields after the last ')' are fixed.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return fields[19]
  } catch {
    // ENOENT: no such process, or no /proc on this OS.
    return undefined
  }
}

function readBootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
  } catch {
    // ENOENT: not Linux.
    return undefined
  }
}

const HOST = hostname()
const BOOT = readBootId()
const START = readProcStart(process.pid)

/** A fresh owner identity for a journal written by this process. */
export function currentOwner(): JournalOwner {
  return { pid: process.pid, host: HOST, start: START, boot: BOOT, instance: `${process.pid}-${randomBytes(4).toString('hex')}` }
}

export type OwnerState = 'this-process' | 'alive' | 'dead' | 'other-host'

/**
 * Whether the writer of a journal is still running. A journal from another
 * host (a vault on a shared disk) cannot be judged and is left alone.
 */
export function ownerState(owner: JournalOwner): OwnerState {
  if (owner.host !== HOST) return 'other-host'
  if (owner.boot && BOOT && owner.boot !== BOOT) return 'dead'
  if (owner.pid === process.pid && (!owner.start || owner.start === START)) return 'this-process'
  try {
    process.kill(owner.pid, 0)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return 'dead'
  }
  if (owner.start) {
    const start = readProcStart(owner.pid)
    if (start !== undefined && start !== owner.start) return 'dead'
  }
  return 'alive'
}

/**
 * Instances of this plugin alive in this process, shared across module
 * copies (a hot reload re-imports the module) so a journal of a disposed
 * instance can be told from one still in use.
 */
const LIVE_KEY = Symbol.for('dsh-snapshot.live-instances')
const registry = globalThis as { [LIVE_KEY]?: Set<string> }
export const liveInstances: Set<string> = registry[LIVE_KEY] ??= new Set()
