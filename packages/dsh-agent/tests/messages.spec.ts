import { describe, expect, it } from 'vitest'
import type { SessionEvent } from 'dsh-session'
import { buildMessages } from 'dsh-agent'

let seq = 0
const ev = <E extends SessionEvent>(type: E['type'], data: E['data']) => ({ seq: seq++, time: 0, type, data }) as SessionEvent

describe('buildMessages', () => {
  it('harness notices are user messages marked [harness: <source>], merged with adjacent user text; only the system prompt is a system message', () => {
    const events = [
      ev('context/message', { source: 'claims', text: 'Checkpoint left by session s1.' }),
      ev('user/message', { text: 'Add double.' }),
      ev('assistant/message', { text: 'Adding.', toolCalls: [{ callId: 'c1', name: 'write_file', arguments: { path: 'a.ts' } }] }),
      ev('tool/result', { callId: 'c1', name: 'write_file', content: 'wrote a.ts', isError: false }),
      ev('context/message', { source: 'proofchain', text: 'Proofs: typecheck pass.' }),
      ev('assistant/message', { text: 'Done.', toolCalls: [] }),
    ]
    expect(buildMessages(events, 'You are dsh.')).toEqual([
      { role: 'system', content: 'You are dsh.' },
      { role: 'user', content: '[harness: claims] Checkpoint left by session s1.\n\nAdd double.' },
      { role: 'assistant', content: 'Adding.', toolCalls: [{ id: 'c1', name: 'write_file', arguments: { path: 'a.ts' } }] },
      { role: 'tool', toolCallId: 'c1', name: 'write_file', content: 'wrote a.ts' },
      { role: 'user', content: '[harness: proofchain] Proofs: typecheck pass.' },
      { role: 'assistant', content: 'Done.' },
    ])
  })
})
