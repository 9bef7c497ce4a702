import type { HookAnswer } from '../adapter.ts'

/**
 * The `reply` of an agent that reads Claude Code's hook output (Claude Code,
 * Codex CLI): `deny` as `permissionDecision`, `block` as `decision` with its
 * reason, context as `hookSpecificOutput.additionalContext` on the events in
 * `contextEvents` (nothing on the others).
 */
export function hookSpecificReply(contextEvents: ReadonlySet<string>): (event: string, answer: HookAnswer) => unknown {
  return (event, answer) => {
    switch (answer.kind) {
      case 'deny':
        return { hookSpecificOutput: { hookEventName: event, permissionDecision: 'deny', permissionDecisionReason: answer.reason } }
      case 'block':
        return { decision: 'block', reason: answer.reason }
      case 'continue':
        return answer.context && contextEvents.has(event) ? { hookSpecificOutput: { hookEventName: event, additionalContext: answer.context } } : undefined
    }
  }
}
