import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { chunk, textStream, toolCallStream, usageChunk } from 'dsh-llm-openai/test-server'
import { cleanUp, collect, harness, server } from './helpers.ts'

afterEach(cleanUp)

describe('streaming through the agent loop', () => {
  it('passes text on as it arrives, before the answer is complete', async () => {
    let release!: () => void
    const released = new Promise<void>(r => { release = r })
    const s = await server([{ stream: [...textStream('Hello, wörld! 👋', 3), usageChunk(12, 7)], gate: { before: 3, until: released } }])
    const h = await harness(s.baseUrl)
    const seenBeforeEnd: string[] = []
    h.ctx.on('session/event', (_session, event) => {
      if (event.type !== 'assistant/chunk') return
      seenBeforeEnd.push(event.data.text)
      // The server holds the rest back until the first pieces were seen here.
      if (seenBeforeEnd.length === 2) release()
    })
    expect(await h.agent.send('say hello')).toBe('completed')
    expect(seenBeforeEnd.slice(0, 2)).toEqual(['Hel', 'lo,'])
    expect(h.session.ofType('assistant/chunk').map(e => e.data.text).join('')).toBe('Hello, wörld! 👋')
    expect(h.session.ofType('assistant/message')[0]!.data).toEqual({ text: 'Hello, wörld! 👋', toolCalls: [] })
    expect(h.session.ofType('usage')[0]!.data).toEqual({ inputTokens: 12, outputTokens: 7 })
    expect(h.types().filter(t => t !== 'assistant/chunk')).toEqual(['user/message', 'turn/start', 'step/start', 'usage', 'assistant/message', 'step/end', 'turn/end'])
  })

  it('sends the model, messages, tool definitions and key the way the protocol expects', async () => {
    const s = await server([{ stream: textStream('ok') }])
    const h = await harness(s.baseUrl, { temperature: 0.2, maxTokens: 256 })
    await h.agent.send('hello')
    const [request] = s.requests
    expect(request!.headers.authorization).toBe('Bearer test-key')
    expect(request!.headers['content-type']).toBe('application/json')
    const { messages, tools, ...rest } = request!.body!
    expect(rest).toEqual({ model: 'test-model', stream: true, stream_options: { include_usage: true }, temperature: 0.2, max_tokens: 256 })
    expect(messages).toEqual([{ role: 'system', content: 'You are a test.' }, { role: 'user', content: 'hello' }])
    expect(tools!.map(t => [t.type, t.function.name])).toEqual([
      ['function', 'bash'], ['function', 'edit_file'], ['function', 'multi_edit'], ['function', 'read_file'], ['function', 'write_file'],
    ])
    expect(tools!.find(t => t.function.name === 'write_file')!.function.parameters).toMatchObject({ type: 'object', required: ['path', 'content'] })
  })

  it('assembles two tool calls from interleaved argument deltas split mid-token and mid-character; the tools really run', async () => {
    const first = { path: 'dir/ü.txt', content: 'π ≈ 3.14 — "quoted"\n\ttab\\slash\n' }
    const second = { path: 'b.json', content: '{"json": [1, 2]}' }
    const s = await server([
      // 3-character deltas, written 7 bytes at a time: lines, JSON escapes and UTF-8 sequences all split.
      { stream: [...toolCallStream([{ id: 'call_a', name: 'write_file', arguments: first }, { id: 'call_b', name: 'write_file', arguments: second }], { size: 3, text: 'Writing two files.' }), usageChunk(40, 30)], sliceBytes: 7, pauseMs: 1 },
      { stream: textStream('Both written.') },
    ])
    const h = await harness(s.baseUrl)
    expect(await h.agent.send('write them')).toBe('completed')
    expect(h.session.ofType('tool/call').map(e => e.data)).toEqual([
      { callId: 'call_a', name: 'write_file', arguments: first },
      { callId: 'call_b', name: 'write_file', arguments: second },
    ])
    expect(h.session.ofType('tool/result').map(e => [e.data.callId, e.data.isError])).toEqual([['call_a', false], ['call_b', false]])
    expect(readFileSync(join(h.workspace, 'dir/ü.txt'), 'utf8')).toBe(first.content)
    expect(readFileSync(join(h.workspace, 'b.json'), 'utf8')).toBe(second.content)
    expect(h.session.ofType('assistant/message')[0]!.data.text).toBe('Writing two files.')
    expect(h.session.ofType('usage').map(e => e.data)).toEqual([{ inputTokens: 40, outputTokens: 30 }])
    // The second request carries the calls (arguments as JSON text) and their results.
    const messages = s.requests[1]!.body!.messages
    expect(messages.slice(2)).toEqual([
      {
        role: 'assistant', content: 'Writing two files.', tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'write_file', arguments: JSON.stringify(first) } },
          { id: 'call_b', type: 'function', function: { name: 'write_file', arguments: JSON.stringify(second) } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: h.session.ofType('tool/result')[0]!.data.content },
      { role: 'tool', tool_call_id: 'call_b', content: h.session.ofType('tool/result')[1]!.data.content },
    ])
  })
})

describe('answer shapes', () => {
  it('yields text, then tool calls in index order, usage and the finish reason', async () => {
    const s = await server([{
      stream: [
        chunk({ role: 'assistant', content: 'a' }),
        chunk({ tool_calls: [{ index: 1, id: 'second', type: 'function', function: { name: 'read_file', arguments: '{"path":' } }] }),
        chunk({ tool_calls: [{ index: 0, id: 'first', type: 'function', function: { name: 'bash', arguments: '' } }] }),
        chunk({ content: 'b' }),
        chunk({ tool_calls: [{ index: 1, function: { arguments: '"x"}' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"command":"ls"}' } }] }),
        chunk({}, 'tool_calls'),
        usageChunk(5, 6),
      ],
    }])
    expect(await collect({ baseUrl: s.baseUrl, model: 'm' })).toEqual([
      { type: 'text', text: 'a' },
      { type: 'text', text: 'b' },
      { type: 'tool-call', id: 'first', name: 'bash', arguments: { command: 'ls' } },
      { type: 'tool-call', id: 'second', name: 'read_file', arguments: { path: 'x' } },
      { type: 'usage', inputTokens: 5, outputTokens: 6 },
      { type: 'finish', reason: 'tool_calls' },
    ])
  })

  it('accepts servers that omit ids, empty arguments, a finish without [DONE], and comments', async () => {
    const s = await server([{
      stream: [
        ': keep-alive\n\n',
        chunk({ tool_calls: [{ index: 0, function: { name: 'list', arguments: '' } }] }),
        chunk({}, 'stop'),
      ],
      done: false,
    }])
    expect(await collect({ baseUrl: s.baseUrl, model: 'm' })).toEqual([
      { type: 'tool-call', id: 'call_0_0', name: 'list', arguments: {} },
      { type: 'finish', reason: 'tool_calls' },
    ])
  })

  it('accepts a whole JSON completion from a server that ignores stream: true', async () => {
    const s = await server([{
      status: 200,
      json: {
        choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: 'whole', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '{"command":"pwd"}' } }] } }],
        usage: { prompt_tokens: 3, completion_tokens: 4 },
      },
    }])
    expect(await collect({ baseUrl: s.baseUrl, model: 'm' })).toEqual([
      { type: 'text', text: 'whole' },
      { type: 'tool-call', id: 'c1', name: 'bash', arguments: { command: 'pwd' } },
      { type: 'usage', inputTokens: 3, outputTokens: 4 },
      { type: 'finish', reason: 'tool_calls' },
    ])
  })

  it('sends no Authorization header without a key and leaves out usage when includeUsage is off', async () => {
    const s = await server([{ stream: textStream('x') }])
    await collect({ baseUrl: s.baseUrl, model: 'm', apiKey: undefined, includeUsage: false })
    expect(s.requests[0]!.headers.authorization).toBeUndefined()
    expect(s.requests[0]!.body!.stream_options).toBeUndefined()
    expect(s.requests[0]!.body!.tools).toBeUndefined()
  })
})
