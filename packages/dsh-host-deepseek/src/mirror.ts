import type { SessionEventMap, TurnEndReason } from 'dsh-session'
import { textOf, type DsBlock, type DsSessionEvent, type DsToolCallBlock, type DsToolResultBlock } from './deepseek-types.ts'

/** One event for the suite's mirror of a harness session. */
export type MirrorEvent = { [K in keyof SessionEventMap]: { type: K; data: SessionEventMap[K] } }[keyof SessionEventMap]

/** Per-session state the translation needs: the tool name of each open call. */
export class MirrorState {
  readonly calls = new Map<string, string>()
}

function parseArguments(raw: unknown): unknown {
  if (typeof raw !== 'string') return raw
  try {
    return JSON.parse(raw) as unknown
  } catch {
    // A model may send arguments that are not JSON; the suite sees them as given.
    return raw
  }
}

function turnEndReason(kind: unknown): TurnEndReason {
  return kind === 'completed' || kind === 'aborted' || kind === 'error' ? kind : 'error'
}

type Data = Record<string, unknown>

/**
 * Translate one event of the harness's session log into the suite's event
 * vocabulary (`docs/architecture.md`), or `undefined` for an event the suite
 * has no use for (request headers, chunks, inbox splices, the harness's own
 * plugin context, the host's own context coming back). Pure but for `state`.
 */
export function translateEvent(event: DsSessionEvent, state: MirrorState): MirrorEvent | undefined {
  const data = (event.data ?? {}) as Data
  switch (event.type) {
    case 'turn/start':
      return { type: 'turn/start', data: { turn: Number(data.turn) } }
    case 'turn/end':
      return { type: 'turn/end', data: { turn: Number(data.turn), reason: turnEndReason((data.reason as Data | undefined)?.kind) } }
    case 'step/start':
    case 'step/end':
      return { type: event.type, data: { turn: Number(data.turn), step: Number(data.step) } }
    case 'user/message': {
      const source = data.source as { kind?: string; plugin?: string } | undefined
      if (source?.kind === 'user') return { type: 'user/message', data: { text: textOf(data.content as DsBlock[]) } }
      return undefined
    }
    case 'assistant/message': {
      const content = ((data.message as Data | undefined)?.content ?? []) as DsBlock[]
      const calls = content.filter((b): b is DsToolCallBlock => b.type === 'tool-call')
      return {
        type: 'assistant/message',
        data: { text: textOf(content), toolCalls: calls.map(c => ({ callId: c.id, name: c.name, arguments: parseArguments(c.arguments) })) },
      }
    }
    case 'tool/call': {
      const callId = String(data.callId)
      const name = String(data.name)
      state.calls.set(callId, name)
      return { type: 'tool/call', data: { callId, name, arguments: parseArguments(data.arguments) } }
    }
    case 'tool/result': {
      const blocks = ((data.message as Data | undefined)?.content ?? []) as DsBlock[]
      const result = blocks.find((b): b is DsToolResultBlock => b.type === 'tool-result')
      if (!result) return undefined
      const name = state.calls.get(result.toolCallId) ?? 'unknown'
      state.calls.delete(result.toolCallId)
      return { type: 'tool/result', data: { callId: result.toolCallId, name, content: textOf(result.content), isError: result.isError === true } }
    }
    default:
      return undefined
  }
}
