import type { SessionEvent } from 'dsh-session'

function oneLine(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > max ? flat.slice(0, max - 1) + '…' : flat
}

function describeArgs(name: string, args: unknown): string {
  const a = (args ?? {}) as Record<string, unknown>
  if (typeof a.command === 'string') return oneLine(a.command, 120)
  if (typeof a.path === 'string') return a.path
  if (Array.isArray(a.edits)) return [...new Set(a.edits.map(e => (e as { path?: string }).path))].join(', ')
  return oneLine(JSON.stringify(args), 120)
}

/**
 * Render one session event as transcript lines for a person (or nothing).
 * Assistant text, each tool call and its result, injected context, errors.
 */
export function renderEvent(event: SessionEvent | { type: string; data: unknown }): string | undefined {
  const e = event as SessionEvent
  switch (e.type) {
    case 'user/message':
      return `› ${e.data.text}`
    case 'assistant/message':
      return e.data.text.trim() ? `assistant: ${e.data.text.trim()}` : undefined
    case 'tool/call':
      return `  → ${e.data.name} ${describeArgs(e.data.name, e.data.arguments)}`
    case 'tool/result': {
      const lines = e.data.content.split('\n')
      const shown = lines.slice(0, e.data.isError ? 12 : 4).map(l => `      ${l}`)
      if (lines.length > shown.length) shown.push(`      … ${lines.length - shown.length} more lines`)
      return `  ${e.data.isError ? '✗' : '✓'} ${e.data.name}\n${shown.join('\n')}`
    }
    case 'context/message':
      return `  [${e.data.source}] ${e.data.text.split('\n').join('\n  ')}`
    case 'error':
      return `error: ${e.data.message}`
    case 'turn/end':
      return e.data.reason === 'completed' ? undefined : `turn ended: ${e.data.reason}`
    default:
      return undefined
  }
}
