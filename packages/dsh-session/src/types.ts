/** A tool call as the model asked for it. */
export interface ToolCallData {
  callId: string
  name: string
  arguments: unknown
}

export type TurnEndReason = 'completed' | 'aborted' | 'error' | 'disposed'

/**
 * Payloads of session-log events, by type. Merge-extensible: a plugin adds
 * its own log events with
 * `declare module 'dsh-session' { interface SessionEventMap { 'x/y': {...} } }`.
 */
export interface SessionEventMap {
  /** A message from the user, queued for the next turn. */
  'user/message': { text: string }
  /** Context injected for the model by a plugin (proof summary, handoff, …). */
  'context/message': { source: string; text: string }
  'turn/start': { turn: number }
  'turn/end': { turn: number; reason: TurnEndReason }
  'step/start': { turn: number; step: number }
  'step/end': { turn: number; step: number }
  /** A streamed piece of assistant text. */
  'assistant/chunk': { text: string }
  /** The complete assistant message of a step, with the tool calls it asked for. */
  'assistant/message': { text: string; toolCalls: ToolCallData[] }
  'tool/call': ToolCallData
  /** What the `tools/execute` waterfall returned, possibly rewritten by plugins. */
  'tool/result': { callId: string; name: string; content: string; isError: boolean; exitCode?: number | null }
  'usage': { inputTokens: number; outputTokens: number }
  /** A failure that ended a turn (a throwing plugin, a model error). */
  'error': { message: string; source?: string }
}

export type SessionEventType = keyof SessionEventMap & string

/** One logged event. `seq` is 0-based and strictly increasing per session. */
export type SessionEvent<K extends SessionEventType = SessionEventType> = {
  [P in K]: { seq: number; time: number; type: P; data: SessionEventMap[P] }
}[K]

/** A stored event whose type this build may not know (seeds, logs from elsewhere). */
export interface RawSessionEvent {
  seq: number
  time: number
  type: string
  data: unknown
}

export interface CreateSessionOptions {
  /** Events already in the log (a resumed or replayed session); no `session/event` fires for them. */
  seed?: readonly RawSessionEvent[]
  /** The workspace root the session's tools act on. Defaults to `process.cwd()`. */
  cwd?: string
  /** On-disk state of the suite. Defaults to `<cwd>/.dsh`. */
  vault?: string
}
