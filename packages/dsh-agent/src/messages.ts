import type { SessionEvent } from 'dsh-session'
import type { ModelMessage } from 'dsh-llm'

/**
 * The conversation as the model sees it, derived from the session log:
 * user and context messages, assistant messages with their tool calls, and
 * tool results. A call whose result never arrived (the turn ended with an
 * error) gets a placeholder result so the protocol stays well-formed.
 */
export function buildMessages(events: readonly SessionEvent[], system?: string): ModelMessage[] {
  const out: ModelMessage[] = system ? [{ role: 'system', content: system }] : []
  let open: { ids: string[]; answered: Set<string>; names: Map<string, string> } | undefined
  const closeOpen = () => {
    if (!open) return
    for (const id of open.ids) {
      if (!open.answered.has(id)) out.push({ role: 'tool', toolCallId: id, name: open.names.get(id) ?? '', content: '(no result: the turn ended before this call returned)' })
    }
    open = undefined
  }
  for (const event of events) {
    switch (event.type) {
      case 'user/message':
        closeOpen()
        out.push({ role: 'user', content: event.data.text })
        break
      case 'context/message':
        closeOpen()
        out.push({ role: 'system', content: `[${event.data.source}] ${event.data.text}` })
        break
      case 'assistant/message': {
        closeOpen()
        const toolCalls = event.data.toolCalls.map(c => ({ id: c.callId, name: c.name, arguments: c.arguments }))
        out.push({ role: 'assistant', content: event.data.text, ...(toolCalls.length ? { toolCalls } : {}) })
        if (toolCalls.length) open = { ids: toolCalls.map(c => c.id), answered: new Set(), names: new Map(toolCalls.map(c => [c.id, c.name])) }
        break
      }
      case 'tool/result':
        out.push({ role: 'tool', toolCallId: event.data.callId, name: event.data.name, content: event.data.content })
        open?.answered.add(event.data.callId)
        break
    }
  }
  closeOpen()
  return out
}
