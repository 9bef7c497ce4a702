import { randomBytes } from 'node:crypto'
import { currentProcess, processState, type ProcessIdentity, type ProcessState } from 'dsh-common'

/**
 * Who writes a journal: the writing process (pid, host, start time, boot
 * id: see dsh-common's liveness) and the Snapshots instance inside it.
 */
export interface JournalOwner extends ProcessIdentity {
  /** Unique per Snapshots instance; several live in one process (tests, hot reload). */
  instance: string
}

/** A fresh owner identity for a journal written by this process. */
export function currentOwner(): JournalOwner {
  const me = currentProcess()
  return { ...me, instance: `${me.pid}-${randomBytes(4).toString('hex')}` }
}

export type OwnerState = ProcessState

/**
 * Whether the writer of a journal is still running. A journal from another
 * host (a vault on a shared disk) cannot be judged and is left alone.
 */
export function ownerState(owner: JournalOwner): OwnerState {
  return processState(owner)
}

/**
 * Instances of this plugin alive in this process, shared across module
 * copies (a hot reload re-imports the module) so a journal of a disposed
 * instance can be told from one still in use.
 */
const LIVE_KEY = Symbol.for('dsh-snapshot.live-instances')
const registry = globalThis as { [LIVE_KEY]?: Set<string> }
export const liveInstances: Set<string> = registry[LIVE_KEY] ??= new Set()
