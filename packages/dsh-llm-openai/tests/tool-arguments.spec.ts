import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { chunk, textStream, toolCallStream } from 'dsh-llm-openai/test-server'
import { cleanUp, collect, harness, server } from './helpers.ts'

afterEach(cleanUp)

/** What this runtime's JSON.parse says about `text` (the model is told exactly that). */
function parseError(text: string): string {
  try {
    JSON.parse(text)
  } catch (error) {
    return (error as Error).message
  }
  throw new Error(`${text} parses`)
}

/** One streamed tool call whose argument text is sent exactly as given. */
const rawCall = (id: string, name: string, args: string, finish = 'tool_calls') => [
  chunk({ role: 'assistant', content: null }),
  chunk({ tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: args } }] }),
  chunk({}, finish),
]

const retry = 'nothing was run. Send the call again with its arguments as one JSON object.'

describe('tool arguments that are not one JSON object go back to the model', () => {
  it('unparsable arguments: a tool error names the parse error, nothing is written, and the turn goes on', async () => {
    const broken = '{"path": "a.txt", "content": "one'
    const s = await server([
      { stream: rawCall('w1', 'write_file', broken) },
      { stream: toolCallStream([{ id: 'w2', name: 'write_file', arguments: { path: 'a.txt', content: 'one' } }]) },
      { stream: textStream('Written.') },
    ])
    const h = await harness(s.baseUrl)
    expect(await h.agent.send('write a.txt')).toBe('completed')
    const error = `invalid arguments for write_file: the arguments are not valid JSON (${parseError(broken)}): ${JSON.stringify(broken)}; ${retry}`
    expect(h.session.ofType('tool/call').map(e => e.data)).toEqual([
      { callId: 'w1', name: 'write_file', arguments: broken },
      { callId: 'w2', name: 'write_file', arguments: { path: 'a.txt', content: 'one' } },
    ])
    expect(h.session.ofType('tool/result').map(e => [e.data.callId, e.data.content, e.data.isError])).toEqual([
      ['w1', error, true],
      ['w2', 'created a.txt (3 bytes)', false],
    ])
    expect(h.errors()).toEqual([])
    expect(readFileSync(join(h.workspace, 'a.txt'), 'utf8')).toBe('one')
    // The next request carries the broken call as {} (servers parse earlier calls' arguments) and the error.
    expect(s.requests[1]!.body!.messages.slice(2)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'w1', type: 'function', function: { name: 'write_file', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'w1', content: error },
    ])
  })

  it('arguments that are JSON but not an object, and arguments cut off at the token limit', async () => {
    const s = await server([
      { stream: rawCall('b1', 'bash', '[1]') },
      { stream: rawCall('b2', 'bash', '{"command": "ec', 'length') },
      { stream: textStream('Giving up.') },
    ])
    const h = await harness(s.baseUrl)
    expect(await h.agent.send('go')).toBe('completed')
    expect(h.session.ofType('tool/result').map(e => [e.data.content, e.data.isError])).toEqual([
      [`invalid arguments for bash: the arguments are not a JSON object: "[1]"; ${retry}`, true],
      [`invalid arguments for bash: the arguments are not valid JSON (the answer was cut off at its token limit, finish_reason "length", before they were complete): "{\\"command\\": \\"ec"; ${retry}`, true],
    ])
    expect(h.reasons()).toEqual(['completed'])
  })

  it('the adapter yields such a call with the text as sent and why (no exception)', async () => {
    const s = await server([{ stream: rawCall('c', 'read_file', '{"path": a.txt}') }])
    const chunks = await collect({ baseUrl: s.baseUrl, model: 'm' })
    expect(chunks.filter(c => c.type === 'tool-call')).toEqual([{
      type: 'tool-call', id: 'c', name: 'read_file', arguments: '{"path": a.txt}',
      invalid: `the arguments are not valid JSON (${parseError('{"path": a.txt}')}): "{\\"path\\": a.txt}"`,
    }])
  })
})
