import { definedOnly } from 'dsh-common'
import type { ParsedRecord, Verdict } from './journal-format.ts'
import type { CaptureEntry, ScopeSelector } from './types.ts'

/** A scope as memory and recovery see it: its captures in order (first capture of a path only) and its verdict. */
export interface ScopeState {
  id: string
  key: string
  callIds: string[]
  step?: number
  turn?: number
  time: number
  items: { entry: CaptureEntry; payloadOffset?: number }[]
  paths: Set<string>
  verdict?: Verdict
  reason?: string
  /** A rollback finished. */
  done: boolean
  /** A shell call's changes were measured (its `manifest` entry no longer restores anything). */
  measured?: boolean
  /** What the call left, by path (content hash, null: absent), once its tool returned. */
  post?: Map<string, string | null>
}

export function newScope(id: string, key: string, info: { callId?: string; step?: number; turn?: number }, time: number): ScopeState {
  return {
    id, key, time,
    callIds: info.callId === undefined ? [] : [info.callId],
    ...definedOnly({ step: info.step, turn: info.turn }),
    items: [], paths: new Set(), done: false,
  }
}

/** Rebuild scopes from journal records, in the order they were opened. */
export function replayScopes(records: readonly ParsedRecord[]): ScopeState[] {
  const scopes = new Map<string, ScopeState>()
  for (const { record, payloadOffset } of records) {
    if (record.t === 'open') {
      const scope = newScope(record.scope, record.key, { step: record.step, turn: record.turn }, record.time)
      scope.callIds = [...record.callIds]
      scopes.set(record.scope, scope)
      continue
    }
    const scope = scopes.get(record.scope)
    if (!scope) continue
    switch (record.t) {
      case 'join':
        if (!scope.callIds.includes(record.callId)) scope.callIds.push(record.callId)
        break
      case 'cap':
        if (scope.paths.has(record.entry.path)) break
        scope.paths.add(record.entry.path)
        scope.items.push(payloadOffset === undefined ? { entry: record.entry } : { entry: record.entry, payloadOffset })
        break
      case 'verdict':
        scope.verdict ??= record.verdict
        scope.reason ??= record.reason
        break
      case 'done':
        scope.done = true
        break
      case 'measured':
        scope.measured = true
        break
      case 'post':
        scope.post = new Map(record.items.map(i => [i.path, i.sha]))
        break
    }
  }
  return [...scopes.values()]
}

/**
 * The open scopes a selector means, newest first. `callIds` (a group)
 * wins over `callId`, which wins over
 * `step`; `step` means that step of the newest turn that has one open
 * (steps are numbered per turn); neither means every open scope.
 */
export function selectScopes(open: readonly ScopeState[], selector: ScopeSelector = {}): ScopeState[] {
  let chosen: ScopeState[]
  if (selector.callIds !== undefined) {
    const calls = new Set(selector.callIds)
    chosen = open.filter(s => s.callIds.some(c => calls.has(c)))
  } else if (selector.callId !== undefined) {
    chosen = open.filter(s => s.callIds.includes(selector.callId!))
  } else if (selector.step !== undefined) {
    const ofStep = open.filter(s => s.step === selector.step)
    const turn = Math.max(-1, ...ofStep.map(s => s.turn ?? -1))
    chosen = ofStep.filter(s => (s.turn ?? -1) === turn)
  } else {
    chosen = [...open]
  }
  return chosen.reverse()
}
