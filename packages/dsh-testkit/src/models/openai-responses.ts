/**
 * A scripted model speaking the OpenAI Responses API as Codex CLI streams it
 * (`wire_api = "responses"`): each `POST …/responses` gets the next step as
 * `response.created`, one `output_item.added`/`output_item.done` pair per
 * item (a message, a `function_call`, or a `custom_tool_call` for a freeform
 * tool such as `apply_patch`), and `response.completed` with usage. Past the
 * script's end it answers "Script finished.".
 */
import { notFound, type AgentStep, type ModelReply, type ModelRequest, type SseEvent } from './server.ts'

function items(step: AgentStep, n: number): object[] {
  const out: object[] = []
  if (step.text) out.push({ type: 'message', role: 'assistant', id: `msg_${n}`, status: 'completed', content: [{ type: 'output_text', text: step.text, annotations: [] }] })
  for (const [i, call] of (step.toolCalls ?? []).entries()) {
    const callId = `call_${n}_${i}`
    out.push(typeof call.arguments === 'string'
      ? { type: 'custom_tool_call', id: `ctc_${n}_${i}`, call_id: callId, name: call.name, input: call.arguments, status: 'completed' }
      : { type: 'function_call', id: `fc_${n}_${i}`, call_id: callId, name: call.name, arguments: JSON.stringify(call.arguments), status: 'completed' })
  }
  return out
}

/** Answer Responses API requests from `steps`, one step per request. */
export function responsesModel(steps: readonly AgentStep[]): (request: ModelRequest) => ModelReply {
  let n = 0
  return request => {
    if (request.method !== 'POST' || !request.path.split('?')[0]!.endsWith('/responses')) return notFound(request)
    const index = n++
    const step = steps[index] ?? { text: 'Script finished.' }
    const id = `resp_${index}`
    const events: SseEvent[] = [{ event: 'response.created', data: { type: 'response.created', response: { id } } }]
    items(step, index).forEach((item, i) => {
      events.push({ event: 'response.output_item.added', data: { type: 'response.output_item.added', output_index: i, item } })
      events.push({ event: 'response.output_item.done', data: { type: 'response.output_item.done', output_index: i, item } })
    })
    const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 }
    events.push({ event: 'response.completed', data: { type: 'response.completed', response: { id, usage } } })
    return { sse: events }
  }
}

interface InputItem {
  type?: string
  role?: string
  call_id?: string
  output?: unknown
  content?: unknown
}

function inputItems(request: ModelRequest): InputItem[] {
  const input = (request.body as { input?: unknown } | undefined)?.input
  return Array.isArray(input) ? (input as InputItem[]) : []
}

function text(value: unknown): string {
  if (typeof value === 'string') return value
  if (Array.isArray(value)) return value.map(part => (part as { text?: string }).text ?? '').join('')
  return ''
}

/** The tool results a Responses request carries (`function_call_output` and `custom_tool_call_output`), by call id. */
export function responsesToolOutputs(request: ModelRequest): { callId: string; output: string }[] {
  return inputItems(request)
    .filter(item => item.type === 'function_call_output' || item.type === 'custom_tool_call_output')
    .map(item => ({ callId: item.call_id ?? '', output: text(item.output) }))
}

/** The texts of a Responses request's messages of `role` (`developer` carries hooks' additional context). */
export function responsesMessages(request: ModelRequest, role: 'user' | 'developer' | 'assistant'): string[] {
  return inputItems(request).filter(item => item.type === 'message' && item.role === role).map(item => text(item.content))
}
