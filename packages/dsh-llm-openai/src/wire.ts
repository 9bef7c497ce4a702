import type { ModelMessage } from 'dsh-llm'
import type { ToolSchema } from 'dsh-tools'

/** A message in the chat-completions wire format. */
export type WireMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: WireToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string }

export interface WireToolCall {
  id: string
  type: 'function'
  function: { name: string; arguments: string }
}

export interface WireTool {
  type: 'function'
  function: { name: string; description: string; parameters: object }
}

/** The body of a streaming `POST …/chat/completions`. */
export interface WireRequest {
  model: string
  messages: WireMessage[]
  stream: true
  stream_options?: { include_usage: true }
  tools?: WireTool[]
  temperature?: number
  max_tokens?: number
}

export interface RequestSettings {
  model: string
  includeUsage: boolean
  temperature?: number
  maxTokens?: number
}

/** Map the loop's messages to the wire format: tool-call arguments travel as JSON text. */
export function toWireMessages(messages: readonly ModelMessage[]): WireMessage[] {
  return messages.map((m): WireMessage => {
    switch (m.role) {
      case 'system':
      case 'user':
        return { role: m.role, content: m.content }
      case 'assistant':
        if (!m.toolCalls?.length) return { role: 'assistant', content: m.content }
        return {
          role: 'assistant',
          // Several servers reject "" next to tool calls; null is what the protocol uses.
          content: m.content || null,
          tool_calls: m.toolCalls.map(c => ({
            id: c.id,
            type: 'function',
            function: { name: c.name, arguments: wireArguments(c.arguments) },
          })),
        }
      case 'tool':
        return { role: 'tool', tool_call_id: m.toolCallId, content: m.content }
    }
  })
}

/**
 * A call's arguments as JSON text. Text that is not one JSON object (a call
 * the model sent malformed, answered with a tool error) travels as `{}`:
 * servers such as vLLM parse the arguments of earlier calls to render the
 * chat template and reject the whole request otherwise; the tool error
 * quotes what was sent.
 */
function wireArguments(args: unknown): string {
  if (typeof args !== 'string') return JSON.stringify(args ?? {})
  try {
    const parsed: unknown = JSON.parse(args)
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? args : '{}'
  } catch {
    return '{}'
  }
}

/** Tool definitions as function tools. */
export function toWireTools(tools: readonly ToolSchema[]): WireTool[] {
  return tools.map(t => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } }))
}

/** The whole request body. An empty tool list is left out (some servers reject `tools: []`). */
export function buildRequestBody(messages: readonly ModelMessage[], tools: readonly ToolSchema[], settings: RequestSettings): WireRequest {
  return {
    model: settings.model,
    messages: toWireMessages(messages),
    stream: true,
    ...(settings.includeUsage ? { stream_options: { include_usage: true as const } } : {}),
    ...(tools.length ? { tools: toWireTools(tools) } : {}),
    ...(settings.temperature !== undefined ? { temperature: settings.temperature } : {}),
    ...(settings.maxTokens !== undefined ? { max_tokens: settings.maxTokens } : {}),
  }
}

/** The endpoint for a base URL: `<base>/chat/completions`, unless the base already ends with it. */
export function completionsUrl(baseUrl: string): string {
  const base = baseUrl.replace(/\/+$/, '')
  return /\/chat\/completions$/.test(base) ? base : `${base}/chat/completions`
}
