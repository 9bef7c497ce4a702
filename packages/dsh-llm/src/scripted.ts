import type { ModelAdapter, ModelChunk, ModelRequest } from './types.ts'
import type { ScriptStep } from './script.ts'

/** The text of the final step once a script has no more lines. */
export const SCRIPT_EXHAUSTED = 'Script finished.'

/**
 * The scripted adapter: the N-th model request of a session (its
 * `requestIndex`) gets step N of the script; past the end, a final text
 * with no tool calls ends the turn.
 */
export function createScriptedAdapter(steps: readonly ScriptStep[]): ModelAdapter {
  return {
    name: 'scripted',
    async *stream(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelChunk> {
      const step = steps[request.requestIndex]
      if (!step) {
        yield { type: 'text', text: SCRIPT_EXHAUSTED }
        yield { type: 'finish', reason: 'stop' }
        return
      }
      if (step.text) {
        // Stream in a few pieces so chunk handling is exercised like a real model.
        for (const piece of step.text.match(/[\s\S]{1,64}/g) ?? []) {
          if (signal.aborted) return
          yield { type: 'text', text: piece }
        }
      }
      const calls = step.toolCalls ?? []
      for (let i = 0; i < calls.length; i++) {
        const call = calls[i]!
        yield { type: 'tool-call', id: call.id ?? `call_${request.requestIndex}_${i}`, name: call.name, arguments: call.arguments }
      }
      yield { type: 'usage', inputTokens: JSON.stringify(request.messages).length >> 2, outputTokens: JSON.stringify(step).length >> 2 }
      yield { type: 'finish', reason: calls.length ? 'tool_calls' : 'stop' }
    },
  }
}
