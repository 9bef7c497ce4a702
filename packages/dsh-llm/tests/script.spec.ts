import { writeFileSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createScriptedAdapter, loadScript, parseScript, SCRIPT_EXHAUSTED, type ModelChunk } from 'dsh-llm'

describe('script parsing', () => {
  it('reads one step per line and ignores blank lines', () => {
    const steps = parseScript('{"text":"a"}\n\n{"toolCalls":[{"name":"bash","arguments":{"command":"ls"}}]}\n')
    expect(steps).toEqual([{ text: 'a' }, { toolCalls: [{ name: 'bash', arguments: { command: 'ls' } }] }])
  })

  it('names the file and line of a malformed line', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'dsh-llm-')), 's.jsonl')
    writeFileSync(file, '{"text":"ok"}\n\n{"text": nope}\n')
    expect(() => loadScript(file)).toThrow(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:3: not valid JSON`))
    expect(() => parseScript('{"toolCalls":[{"arguments":{}}]}', 'x.jsonl')).toThrow('x.jsonl:1: toolCalls[0].name must be a non-empty string')
    expect(() => parseScript('{"txt":"typo"}', 'x.jsonl')).toThrow('x.jsonl:1: unknown field "txt" (expected text, toolCalls)')
    expect(() => parseScript('[1]', 'x.jsonl')).toThrow('x.jsonl:1: expected a JSON object')
    expect(() => loadScript(join(tmpdir(), 'does-not-exist.jsonl'))).toThrow(/cannot read script \(ENOENT\)/)
  })
})

describe('scripted adapter', () => {
  const collect = async (it: AsyncIterable<ModelChunk>) => { const out: ModelChunk[] = []; for await (const c of it) out.push(c); return out }
  const req = (requestIndex: number) => ({ session: undefined as never, messages: [], tools: [], requestIndex })

  it('gives the N-th request line N, then a final text once exhausted', async () => {
    const adapter = createScriptedAdapter(parseScript('{"text":"first","toolCalls":[{"id":"x","name":"t","arguments":{}}]}\n{"text":"second"}'))
    const signal = new AbortController().signal
    const first = await collect(adapter.stream(req(0), signal))
    expect(first.filter(c => c.type !== 'usage')).toEqual([
      { type: 'text', text: 'first' },
      { type: 'tool-call', id: 'x', name: 't', arguments: {} },
      { type: 'finish', reason: 'tool_calls' },
    ])
    const second = await collect(adapter.stream(req(1), signal))
    expect(second.at(-1)).toEqual({ type: 'finish', reason: 'stop' })
    const third = await collect(adapter.stream(req(2), signal))
    expect(third).toEqual([{ type: 'text', text: SCRIPT_EXHAUSTED }, { type: 'finish', reason: 'stop' }])
  })
})
