/**
 * The process groups this process started and that may still be alive, in
 * one place, so that nothing survives us: `runCommand` starts every child
 * in its own group (for a whole-tree kill on timeout), which also means a
 * Ctrl-C at the terminal never reaches it and execa's kill-on-exit is off.
 * A group is tracked from spawn until it is known to be empty; the
 * `exit` hook (installed with the first group) SIGKILLs what is left, and
 * signal handlers (the CLI's) call {@link killProcessGroups} first.
 */
interface GroupRegistry {
  groups: Set<number>
  exitHook: boolean
}

// One registry per process, even if two copies of this module are loaded (hot reload imports fresh URLs).
const KEY = Symbol.for('dsh-common/process-groups')
const holder = globalThis as { [KEY]?: GroupRegistry }
const registry: GroupRegistry = (holder[KEY] ??= { groups: new Set(), exitHook: false })

function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal)
    return true
  } catch {
    // ESRCH: no process is left in the group.
    return false
  }
}

/**
 * Track a process group (its leader's pid) until the returned release is
 * called. Release drops it only once the group is empty: a leader that
 * exited leaving background jobs keeps its group tracked, so they are
 * killed when this process exits.
 */
export function trackProcessGroup(pgid: number): () => void {
  registry.groups.add(pgid)
  if (!registry.exitHook) {
    registry.exitHook = true
    process.on('exit', () => { killProcessGroups('SIGKILL') })
  }
  return () => {
    if (!signalGroup(pgid, 0)) registry.groups.delete(pgid)
  }
}

/** The tracked groups that still have a process in them. */
export function liveProcessGroups(): number[] {
  for (const pgid of registry.groups) if (!signalGroup(pgid, 0)) registry.groups.delete(pgid)
  return [...registry.groups]
}

/**
 * Send `signal` to every tracked group (synchronous, safe in an `exit`
 * handler); a SIGKILL also stops tracking them. Returns how many groups
 * were signalled.
 */
export function killProcessGroups(signal: NodeJS.Signals = 'SIGKILL'): number {
  let n = 0
  for (const pgid of registry.groups) {
    if (signalGroup(pgid, signal)) n++
    if (signal === 'SIGKILL') registry.groups.delete(pgid)
  }
  return n
}
