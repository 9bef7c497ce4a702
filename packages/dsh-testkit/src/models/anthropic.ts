/**
 * A scripted model speaking the Anthropic Messages API as Claude Code
 * streams it (`ANTHROPIC_BASE_URL`): each `POST /v1/messages` of the agent's
 * loop (a request offering tools) gets the next step as `message_start`,
 * one content block per text and per `tool_use` (its input as one
 * `input_json_delta`), `message_delta` with the stop reason and
 * `message_stop`. The CLI's side requests (no tools: titles, summaries)
 * get a fixed short answer and consume no step; `count_tokens` a count.
 * Past the script's end it answers "Script finished.".
 */
import { notFound, type AgentStep, type ModelReply, type ModelRequest, type SseEvent } from './server.ts'

interface MessagesBody {
  model?: string
  stream?: boolean
  tools?: { name?: string }[]
  messages?: { role?: string; content?: unknown }[]
  system?: unknown
}

function body(request: ModelRequest): MessagesBody {
  return (request.body ?? {}) as MessagesBody
}

/** Whether a request is a step of the agent's loop (it offers tools), not a side request. */
export function isClaudeTurnRequest(request: ModelRequest): boolean {
  return request.method === 'POST' && request.path.split('?')[0]!.endsWith('/v1/messages') && (body(request).tools?.length ?? 0) > 0
}

function stream(step: AgentStep, n: number, model: string): SseEvent[] {
  const id = `msg_${n}`
  const events: SseEvent[] = [{
    event: 'message_start',
    data: { type: 'message_start', message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } },
  }]
  let index = 0
  if (step.text) {
    events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } } })
    events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text: step.text } } })
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } })
    index++
  }
  for (const [i, call] of (step.toolCalls ?? []).entries()) {
    events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'tool_use', id: `toolu_${n}_${i}`, name: call.name, input: {} } } })
    events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(call.arguments) } } })
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } })
    index++
  }
  const stop = step.toolCalls?.length ? 'tool_use' : 'end_turn'
  events.push({ event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } } })
  events.push({ event: 'message_stop', data: { type: 'message_stop' } })
  return events
}

function whole(text: string, model: string): object {
  return { id: 'msg_side', type: 'message', role: 'assistant', model, content: [{ type: 'text', text }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 10, output_tokens: 5 } }
}

/** Answer Anthropic Messages requests from `steps`, one step per request of the agent's loop. */
export function anthropicModel(steps: readonly AgentStep[]): (request: ModelRequest) => ModelReply {
  let n = 0
  return request => {
    const path = request.path.split('?')[0]!
    const model = body(request).model ?? 'claude-scripted'
    if (request.method === 'POST' && path.endsWith('/v1/messages/count_tokens')) return { status: 200, json: { input_tokens: 10 } }
    if (request.method !== 'POST' || !path.endsWith('/v1/messages')) return notFound(request)
    if (!isClaudeTurnRequest(request)) {
      const side = '{"isNewTopic": false, "title": null}'
      return body(request).stream ? { sse: stream({ text: side }, -1, model) } : { status: 200, json: whole(side, model) }
    }
    const index = n++
    return { sse: stream(steps[index] ?? { text: 'Script finished.' }, index, model) }
  }
}

interface Block {
  type?: string
  text?: string
  tool_use_id?: string
  content?: unknown
  is_error?: boolean
}

function blocks(content: unknown): Block[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }]
  return Array.isArray(content) ? (content as Block[]) : []
}

function text(content: unknown): string {
  return blocks(content).map(b => b.text ?? '').join('')
}

/** The tool results a Messages request carries, by tool_use id (a hook's block reason arrives in one). */
export function anthropicToolResults(request: ModelRequest): { toolUseId: string; content: string; isError: boolean }[] {
  return (body(request).messages ?? []).filter(m => m.role === 'user').flatMap(m => blocks(m.content))
    .filter(b => b.type === 'tool_result')
    .map(b => ({ toolUseId: b.tool_use_id ?? '', content: text(b.content), isError: !!b.is_error }))
}

/** The text blocks of a Messages request's user messages (hooks' additional context arrives among them). */
export function anthropicUserTexts(request: ModelRequest): string[] {
  return (body(request).messages ?? []).filter(m => m.role === 'user').flatMap(m => blocks(m.content))
    .flatMap(b => (b.type === 'text' && typeof b.text === 'string' ? [b.text] : b.type === 'tool_result' ? [text(b.content)] : []))
}
