import type { Session } from 'dsh-session'
import type { ToolSchema } from 'dsh-tools'

/** A message of the conversation as the model sees it. */
export type ModelMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: { id: string; name: string; arguments: unknown }[] }
  | { role: 'tool'; toolCallId: string; name: string; content: string }

export interface ModelRequest {
  session: Session
  messages: ModelMessage[]
  tools: ToolSchema[]
  /** 0-based index of this model request within the session. */
  requestIndex: number
}

export type FinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter' | 'error' | (string & {})

/** What an adapter streams: text deltas, complete tool calls, usage, and one finish. */
export type ModelChunk =
  | { type: 'text'; text: string }
  | {
    type: 'tool-call'; id: string; name: string; arguments: unknown
    /**
     * Set when the model's arguments could not be read as one JSON object:
     * why, in words for the model (`arguments` is then the text as sent). The
     * call is not run; the agent answers it with this as a tool error.
     */
    invalid?: string
  }
  | { type: 'usage'; inputTokens: number; outputTokens: number }
  | { type: 'finish'; reason: FinishReason }

/**
 * A model adapter. `stream` yields chunks for one request and must stop
 * promptly when `signal` aborts. A failure is thrown (the agent turns it
 * into an `error` event and ends the turn).
 */
export interface ModelAdapter {
  name: string
  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelChunk>
}
