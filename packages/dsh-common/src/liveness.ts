import { readFileSync } from 'node:fs'
import { hostname } from 'node:os'

/**
 * Who a process is, well enough to tell later whether it still runs. A pid
 * alone is not enough (pids are reused, machines reboot), so the process
 * start time and the kernel boot id are kept where the OS offers them
 * (Linux /proc). Used by the snapshot journal's owner and by file locks.
 */
export interface ProcessIdentity {
  pid: number
  host: string
  /** Start time of the process in clock ticks since boot (Linux), when readable. */
  start?: string
  /** Kernel boot id (Linux), when readable. */
  boot?: string
}

export type ProcessState = 'this-process' | 'alive' | 'dead' | 'other-host'

/** A process's scheduler state (`R`, `S`, `Z` zombie…) and start time in clock ticks since boot, from /proc; undefined when unreadable. */
function readProcStat(pid: number): { state: string; start: string | undefined } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Field 2 (comm) may contain spaces and parentheses; fields after the last ')' are fixed.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return { state: fields[0] ?? '', start: fields[19] }
  } catch {
    // ENOENT: no such process, or no /proc on this OS.
    return undefined
  }
}

function readProcStart(pid: number): string | undefined {
  return readProcStat(pid)?.start
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

/** This process's identity. */
export function currentProcess(): ProcessIdentity {
  return { pid: process.pid, host: HOST, ...(START ? { start: START } : {}), ...(BOOT ? { boot: BOOT } : {}) }
}

/**
 * Whether the process an identity names still runs. Another host's process
 * (a vault on a shared disk) cannot be judged: `other-host`. A different
 * boot id, or the same pid with another start time (the pid was reused),
 * is `dead`.
 */
export function processState(who: ProcessIdentity): ProcessState {
  if (who.host !== HOST) return 'other-host'
  if (who.boot && BOOT && who.boot !== BOOT) return 'dead'
  if (who.pid === process.pid && (!who.start || who.start === START)) return 'this-process'
  try {
    process.kill(who.pid, 0)
  } catch (error) {
    // EPERM: alive but not ours to signal.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return 'dead'
  }
  const stat = readProcStat(who.pid)
  // A killed process its parent has not reaped yet (a zombie) holds nothing any more.
  if (stat && /^[ZX]$/.test(stat.state)) return 'dead'
  if (who.start && stat?.start !== undefined && stat.start !== who.start) return 'dead'
  return 'alive'
}
