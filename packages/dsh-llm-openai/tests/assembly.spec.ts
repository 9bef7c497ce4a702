import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { ModelChunk } from 'dsh-llm'
import { AnswerAssembler } from 'dsh-llm-openai'
import { chunk } from 'dsh-llm-openai/test-server'

function feed(assembler: AnswerAssembler, chunks: object[]): ModelChunk[] {
  const out: ModelChunk[] = []
  chunks.forEach((c, i) => out.push(...assembler.accept({ data: JSON.stringify(c), line: i * 2 + 1 })))
  return [...out, ...assembler.complete()]
}

describe('tool-call assembly', () => {
  it('property: calls split into deltas of any size, interleaved in any order, come out whole and in index order', () => {
    const call = fc.record({
      name: fc.stringMatching(/^[a-z_]{1,12}$/),
      args: fc.dictionary(fc.string({ unit: 'binary', maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
    })
    fc.assert(fc.property(
      fc.array(call, { minLength: 1, maxLength: 4 }), fc.integer({ min: 1, max: 9 }), fc.array(fc.nat(), { maxLength: 200 }),
      (calls, size, choices) => {
        // Each call: a head delta (id, name) then its JSON arguments in pieces of `size` UTF-16 units.
        const queues = calls.map((c, index) => {
          const text = JSON.stringify(c.args)
          const deltas: object[] = [{ index, id: `id${index}`, type: 'function', function: { name: c.name, arguments: '' } }]
          for (let i = 0; i < text.length; i += size) deltas.push({ index, function: { arguments: text.slice(i, i + size) } })
          return deltas
        })
        const chunks: object[] = []
        let k = 0
        while (queues.some(q => q.length)) {
          const open = queues.filter(q => q.length)
          chunks.push(chunk({ tool_calls: [open[(choices[k++] ?? 0) % open.length]!.shift()] }))
        }
        chunks.push(chunk({}, 'tool_calls'))
        const out = feed(new AnswerAssembler('test', 0), chunks)
        expect(out).toEqual([
          ...calls.map((c, index) => ({ type: 'tool-call', id: `id${index}`, name: c.name, arguments: JSON.parse(JSON.stringify(c.args)) })),
          { type: 'finish', reason: 'tool_calls' },
        ])
      },
    ), { numRuns: 300 })
  })

  it('without an index, a new id starts a new call and a delta without id continues the last one', () => {
    const out = feed(new AnswerAssembler('test', 2), [
      chunk({ tool_calls: [{ id: 'a', function: { name: 'one', arguments: '{"x":' } }] }),
      chunk({ tool_calls: [{ function: { arguments: '1}' } }] }),
      chunk({ tool_calls: [{ id: 'b', function: { name: 'two', arguments: { y: 2 } } }] }),
      chunk({}, 'stop'),
    ])
    expect(out).toEqual([
      { type: 'tool-call', id: 'a', name: 'one', arguments: { x: 1 } },
      { type: 'tool-call', id: 'b', name: 'two', arguments: { y: 2 } },
      { type: 'finish', reason: 'tool_calls' },
    ])
  })

  it('a repeated name is not doubled, reasoning is not text, data after [DONE] is ignored, the last usage wins', () => {
    const a = new AnswerAssembler('test', 0)
    const out = feed(a, [
      chunk({ reasoning_content: 'thinking…' }),
      chunk({ tool_calls: [{ index: 0, id: 'c', function: { name: 'bash', arguments: '{"command":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { name: 'bash', arguments: '"ls"}' } }] }),
      { choices: [], usage: { prompt_tokens: 1, completion_tokens: 1 } },
      { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 9, completion_tokens: 4 } },
    ])
    expect(a.tokens).toBe(3)
    expect(out).toEqual([
      { type: 'tool-call', id: 'c', name: 'bash', arguments: { command: 'ls' } },
      { type: 'usage', inputTokens: 9, outputTokens: 4 },
      { type: 'finish', reason: 'tool_calls' },
    ])
    const b = new AnswerAssembler('test', 0)
    b.accept({ data: '[DONE]', line: 1 })
    expect(b.accept({ data: 'not json at all', line: 3 })).toEqual([])
    expect(b.complete()).toEqual([{ type: 'finish', reason: 'stop' }])
  })
})
