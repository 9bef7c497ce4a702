import type { SessionEvent } from 'dsh-session'
import type { ModelMessage } from 'dsh-llm'

/** How a harness notice (`context/message`) reads in the conversation: `[harness: <source>] <text>`. */
function harnessNotice(source: string, text: string): string {
  return `[harness: ${source}] ${text}`
}

/**
 * The conversation as the model sees it, derived from the session log:
 * user and context messages, assistant messages with their tool calls, and
 * tool results. A call whose result never arrived (the turn ended with an
 * error) gets a placeholder result so the protocol stays well-formed.
 *
 * Harness notices (`context/message`) are sent as `user` messages reading
 * `[harness: <source>] <text>`, never as `system` messages: the chat
 * templates of vLLM and llama.cpp reject a system message that is not first.
 * Adjacent user-role messages (notices and the user's own text)
 * are merged into one, parts separated by a blank line, so user and
 * assistant turns still alternate for templates that insist on it.
 */
export function buildMessages(events: readonly SessionEvent[], system?: string): ModelMessage[] {
  const out: ModelMessage[] = system ? [{ role: 'system', content: system }] : []
  const pushUser = (content: string) => {
    const last = out.at(-1)
    if (last?.role === 'user') last.content = `${last.content}\n\n${content}`
    else out.push({ role: 'user', content })
  }
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
        pushUser(event.data.text)
        break
      case 'context/message':
        closeOpen()
        pushUser(harnessNotice(event.data.source, event.data.text))
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
