import { describe, expect, it } from 'vitest'
import { MirrorState, translateEvent } from 'dsh-host-deepseek'

// Events as the DeepSeek Harness 0.1.0-rc.8 logs them (shapes taken from a real session log).
const call = { seq: 21, type: 'tool/call', data: { turn: 1, step: 1, callId: 'call_1_0', name: 'write', arguments: '{"file_path":"b.ts","content":"x"}' } }
const result = {
  seq: 22,
  type: 'tool/result',
  data: {
    turn: 1, step: 1,
    message: { role: 'user', source: { kind: 'tool', callId: 'call_1_0' }, content: [{ type: 'tool-result', toolCallId: 'call_1_0', content: [{ type: 'text', text: 'Error: read it first' }], isError: true }] },
  },
}

describe('translating the harness\'s session events for the suite', () => {
  it('maps turns, steps, user text, assistant messages, and tool calls with their results', () => {
    const state = new MirrorState()
    expect(translateEvent({ seq: 4, type: 'turn/start', data: { turn: 1 } }, state)).toEqual({ type: 'turn/start', data: { turn: 1 } })
    expect(translateEvent({ seq: 6, type: 'step/start', data: { turn: 1, step: 1 } }, state)).toEqual({ type: 'step/start', data: { turn: 1, step: 1 } })
    expect(translateEvent({ seq: 7, type: 'user/message', data: { role: 'user', source: { kind: 'user' }, content: [{ type: 'text', text: 'write b' }] } }, state))
      .toEqual({ type: 'user/message', data: { text: 'write b' } })
    expect(translateEvent({
      seq: 20, type: 'assistant/message',
      data: { turn: 1, step: 1, message: { role: 'assistant', content: [{ type: 'text', text: 'writing' }, { type: 'tool-call', id: 'call_1_0', name: 'write', arguments: '{"file_path":"b.ts","content":"x"}' }] } },
    }, state)).toEqual({ type: 'assistant/message', data: { text: 'writing', toolCalls: [{ callId: 'call_1_0', name: 'write', arguments: { file_path: 'b.ts', content: 'x' } }] } })
    expect(translateEvent(call, state)).toEqual({ type: 'tool/call', data: { callId: 'call_1_0', name: 'write', arguments: { file_path: 'b.ts', content: 'x' } } })
    expect(translateEvent(result, state)).toEqual({ type: 'tool/result', data: { callId: 'call_1_0', name: 'write', content: 'Error: read it first', isError: true } })
    expect(translateEvent({ seq: 32, type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } }, state)).toEqual({ type: 'turn/end', data: { turn: 1, reason: 'completed' } })
  })

  it('leaves out what the suite has no use for, including plugin context coming back', () => {
    const state = new MirrorState()
    for (const event of [
      { seq: 0, type: 'permission/preset', data: { preset: 'workspace-write' } },
      { seq: 10, type: 'request/header', data: {} },
      { seq: 12, type: 'assistant/chunk', data: {} },
      { seq: 8, type: 'user/message', data: { role: 'user', source: { kind: 'plugin', plugin: 'dsh-suite/proofchain' }, content: [{ type: 'text', text: 'Proof chain …' }] } },
    ]) expect(translateEvent(event, state)).toBeUndefined()
  })

  it('an unfinished turn maps its end reason to error, and unparsable arguments stay as given', () => {
    const state = new MirrorState()
    expect(translateEvent({ seq: 1, type: 'turn/end', data: { turn: 2, reason: { kind: 'interrupted' } } }, state)).toEqual({ type: 'turn/end', data: { turn: 2, reason: 'error' } })
    expect(translateEvent({ ...call, data: { ...call.data, arguments: '{not json' } }, state)).toMatchObject({ data: { arguments: '{not json' } })
  })
})
