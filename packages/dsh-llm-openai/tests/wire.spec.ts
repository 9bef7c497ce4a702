import { describe, expect, it } from 'vitest'
import { backoffDelay, completionsUrl, parseRetryAfter, toWireMessages } from 'dsh-llm-openai'

describe('wire format', () => {
  it('maps every message role; arguments travel as JSON text; content is null next to tool calls', () => {
    expect(toWireMessages([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'u' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'bash', arguments: { command: 'ls' } }, { id: 'c2', name: 'noop', arguments: undefined }] },
      { role: 'tool', toolCallId: 'c1', name: 'bash', content: 'a.txt' },
      { role: 'tool', toolCallId: 'c2', name: 'noop', content: '' },
      { role: 'assistant', content: 'done' },
    ])).toEqual([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'u' },
      { role: 'assistant', content: null, tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'bash', arguments: '{"command":"ls"}' } },
        { id: 'c2', type: 'function', function: { name: 'noop', arguments: '{}' } },
      ] },
      { role: 'tool', tool_call_id: 'c1', content: 'a.txt' },
      { role: 'tool', tool_call_id: 'c2', content: '' },
      { role: 'assistant', content: 'done' },
    ])
  })

  it('completionsUrl appends /chat/completions once', () => {
    expect(completionsUrl('https://api.deepseek.com')).toBe('https://api.deepseek.com/chat/completions')
    expect(completionsUrl('http://127.0.0.1:8000/v1/')).toBe('http://127.0.0.1:8000/v1/chat/completions')
    expect(completionsUrl('http://h/v1/chat/completions')).toBe('http://h/v1/chat/completions')
  })
})

describe('backoff', () => {
  const settings = { retryDelayMs: 1000, maxRetryDelayMs: 20_000 }

  it('doubles per attempt with ±25 % jitter, capped; a Retry-After wins but is capped too', () => {
    expect([1, 2, 3, 4, 5, 6].map(a => backoffDelay(a, settings, undefined, () => 0.5))).toEqual([1000, 2000, 4000, 8000, 16_000, 20_000])
    expect(backoffDelay(1, settings, undefined, () => 0)).toBe(750)
    expect(backoffDelay(1, settings, undefined, () => 1)).toBe(1250)
    expect(backoffDelay(3, settings, 2500)).toBe(2500)
    // A server's wait is honoured in full (the adapter's maxRetryWaitMs budget decides).
    expect(backoffDelay(1, settings, 3_600_000)).toBe(3_600_000)
  })

  it('reads retry-after-ms, Retry-After seconds and an HTTP date', () => {
    const now = Date.parse('2025-01-01T00:00:00Z')
    expect(parseRetryAfter(new Headers({ 'retry-after-ms': '150', 'retry-after': '9' }), now)).toBe(150)
    expect(parseRetryAfter(new Headers({ 'retry-after': '2' }), now)).toBe(2000)
    expect(parseRetryAfter(new Headers({ 'retry-after': '0.5' }), now)).toBe(500)
    expect(parseRetryAfter(new Headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:03 GMT' }), now)).toBe(3000)
    expect(parseRetryAfter(new Headers({ 'retry-after': 'soon' }), now)).toBeUndefined()
    expect(parseRetryAfter(new Headers(), now)).toBeUndefined()
  })
})
