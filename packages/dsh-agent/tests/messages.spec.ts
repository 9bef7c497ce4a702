import { describe, expect, it } from 'vitest'
import type { SessionEvent } from 'dsh-session'
import AgentService, { buildMessages } from 'dsh-agent'

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

describe('the default system prompt', () => {
  it('says what the harness notices are', () => {
    expect(AgentService.Config({}).systemPrompt).toBe(
      'You are a coding agent working in a workspace. Use the tools to read, write and edit files and to run commands. '
      + 'Writes are verified after each change; a result that starts with "rolled back:" means your change was undone — read why and fix it. '
      + 'Text starting with "[harness: <name>]" is a notice from the harness (proofs, handoffs), not from the user.',
    )
  })
})
