import type { RestoreOutcome } from './types.ts'
import type { ScopeState } from './scopes.ts'
import type { ScopeSelector } from './types.ts'

/**
 * The one-line texts dsh-snapshot produces. Other plugins pass them on to
 * the model, so they are API: short, specific, asserted in tests.
 */

const MAX_LISTED = 8

export function listPaths(paths: readonly string[]): string {
  if (paths.length <= MAX_LISTED) return paths.join(', ')
  return `${paths.slice(0, MAX_LISTED).join(', ')} and ${paths.length - MAX_LISTED} more`
}

/** `nothing to restore: no open snapshot for call c9` */
export function nothingToRestore(selector: ScopeSelector, sessionId: string): string {
  if (selector.callIds !== undefined) return `nothing to restore: no open snapshot for calls ${listPaths(selector.callIds)}`
  if (selector.callId !== undefined) return `nothing to restore: no open snapshot for call ${selector.callId}`
  if (selector.step !== undefined) return `nothing to restore: no open snapshot for step ${selector.step}`
  return `nothing to restore: no open snapshot in session ${sessionId}`
}

/** What a rollback covered: `call c1`, `step 2 (calls c1, c2)`, `session s (calls c1)`. */
export function describeScopes(selector: ScopeSelector, scopes: readonly ScopeState[], sessionId: string): string {
  const calls = [...new Set(scopes.slice().reverse().flatMap(s => s.callIds))]
  const withCalls = (what: string) => (calls.length ? `${what} (${calls.length === 1 ? 'call' : 'calls'} ${listPaths(calls)})` : what)
  if (selector.callIds !== undefined) return `${calls.length === 1 ? 'call' : 'calls'} ${listPaths(calls)}`
  if (selector.callId !== undefined) {
    const stepScope = scopes.find(s => s.key.startsWith('step:'))
    return stepScope ? withCalls(`step ${stepScope.step}`) : `call ${selector.callId}`
  }
  if (selector.step !== undefined) return withCalls(`step ${selector.step}`)
  return withCalls(`session ${sessionId}`)
}

/** `rolled back call c1: restored a.ts; deleted b.ts` */
export function rolledBack(what: string, outcome: RestoreOutcome): string {
  const parts: string[] = []
  if (outcome.restored.length) parts.push(`restored ${listPaths(outcome.restored)}`)
  if (outcome.deleted.length) parts.push(`deleted ${listPaths(outcome.deleted)}`)
  if (outcome.git?.length) parts.push(gitRestored(outcome.git))
  if (!parts.length && !outcome.failed.length) parts.push('nothing had changed')
  if (outcome.failed.length) parts.push(`could not restore ${listPaths(outcome.failed.map(f => `${f.path} (${f.error})`))}`)
  return `rolled back ${what}: ${parts.join('; ')}`
}

/** Why a call was not run: `snapshot failed: <why>; the write was not run` (`the command` for a shell call). */
export function captureRefused(why: string, what: 'write' | 'command' = 'write'): string {
  return `snapshot failed: ${why}; the ${what} was not run`
}

/** A path outside the workspace: `refused: path "../x" is outside the workspace /w; the write was not run` */
export function escapeRefused(why: string): string {
  return `refused: ${why}; the write was not run`
}

/** Appended to a call's result once: `note: files changed outside any tool call: a.ts, b.ts` */
export function outsideNote(paths: readonly string[]): string {
  return `note: files changed outside any tool call: ${listPaths(paths)}`
}

/** `git: main back to 1a2b3c4 (from 9f8e7d6), index restored (the undone commits stay in git reflog)` */
export function gitRestored(lines: readonly string[]): string {
  const moved = lines.some(l => l.includes(' back to ') || l.startsWith('removed '))
  return `git: ${lines.join(', ')}${moved ? ' (the undone commits stay in git reflog)' : ''}`
}

/** A kept shell call that put files back to their committed content: `note: this call discarded the uncommitted changes to a.ts (…)` */
export function discardedNote(paths: readonly string[], stashed: boolean): string {
  return `note: this call discarded the uncommitted changes to ${listPaths(paths)} (${stashed ? 'they are in the new stash entry: git stash list' : 'git kept no copy of them'}); kept, not a regression — if that was not intended, write them again`
}

/** Files another session's guarded calls wrote since this session last looked, by session. */
export function otherSessionNote(bySession: ReadonlyMap<string, readonly string[]>): string {
  return `note: written meanwhile by another session's checked calls: ${[...bySession].map(([s, paths]) => `${listPaths(paths)} (session ${s})`).join('; ')}`
}
