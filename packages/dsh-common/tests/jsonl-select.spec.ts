import { writeFileSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parseJsonl, skippableJsonLine, streamJsonlOfTypes } from 'dsh-common'

const dir = mkdtempSync(join(tmpdir(), 'dsh-jsonl-select-'))
const WANT = new Set(['tool/call', 'verify/run'])

async function collect(text: string, types: ReadonlySet<string> = WANT) {
  const file = join(dir, `f${Math.random().toString(36).slice(2)}.jsonl`)
  writeFileSync(file, text)
  const out: [unknown, number][] = []
  for await (const entry of streamJsonlOfTypes(file, types)) out.push(entry)
  return out
}

describe('streamJsonlOfTypes', () => {
  it('yields only records of the wanted types, with their line numbers', async () => {
    const text = [
      { seq: 0, type: 'assistant/chunk', data: { text: 'a' } },
      { seq: 1, type: 'tool/call', data: { name: 'bash' } },
      { seq: 2, type: 'usage', data: {} },
      { seq: 3, type: 'verify/run', data: { argv: ['tsc'] } },
    ].map(r => JSON.stringify(r)).join('\n') + '\n'
    expect(await collect(text)).toEqual([[{ seq: 1, type: 'tool/call', data: { name: 'bash' } }, 2], [{ seq: 3, type: 'verify/run', data: { argv: ['tsc'] } }, 4]])
  })

  it('parses lines it cannot judge by text: a nested type, spaced JSON, escapes', async () => {
    const lines = [
      '{"data":{"type":"usage"},"type":"tool/call"}',
      '{"seq": 1, "type": "verify/run"}',
      '{"type":"tool\\/call"}',
      '{"type":"usage","data":{"text":"\\"type\\":\\"tool/call\\""}}',
    ]
    expect((await collect(lines.join('\n') + '\n')).map(([, no]) => no)).toEqual([1, 2, 3])
    expect(skippableJsonLine(lines[3]!, WANT)).toBe(true)
    expect(skippableJsonLine(lines[0]!, WANT)).toBe(false)
  })

  it('drops a torn last line, names a corrupt parsed line, and does not judge skipped ones', async () => {
    expect(await collect('{"type":"tool/call"}\n{"type":"tool/ca')).toHaveLength(1)
    await expect(collect('{"type":"tool/call"}\n{"type":"tool/ca\n{"type":"tool/call"}\n')).rejects.toMatchObject({ code: 'JSONL_CORRUPT', line: 2 })
    await expect(collect('{"type":"tool/call"}\n{"type":"tool/ca\n{"type":"tool/call"}')).rejects.toMatchObject({ code: 'JSONL_CORRUPT', line: 2 })
    await expect(collect('{"type":"tool/call"}\n{"type":"tool/ca\n')).rejects.toMatchObject({ code: 'JSONL_CORRUPT', line: 2 })
    expect(await collect('{"type":"usage", broken\n{"type":"tool/call"}\r\n')).toEqual([[{ type: 'tool/call' }, 2]])
  })

  it('reads across chunk boundaries (multi-byte text included) like parsing the whole file', async () => {
    const types = ['tool/call', 'usage', 'verify/run', 'assistant/chunk']
    const lines = Array.from({ length: 6000 }, (_, i) => JSON.stringify({ seq: i, type: types[i % 4], data: { text: `ünïcødé ✓ ${'x'.repeat(i % 97)}` } }))
    const text = lines.join('\r\n') + '\n'
    const expected = parseJsonl<{ type: string }>(text.replace(/\r\n/g, '\n')).records.filter(r => WANT.has(r.type))
    const got = await collect(text)
    expect(got.map(([r]) => r)).toEqual(expected)
    expect(got.at(-1)![1]).toBe(5999)
  })

  it('yields exactly what parsing every line and filtering by type yields (property)', async () => {
    const value = fc.oneof(fc.string(), fc.integer(), fc.constantFrom('"type":"tool/call"', 'tool/call', '\\', '\n'))
    const record = fc.record({
      type: fc.constantFrom('tool/call', 'verify/run', 'usage', 'assistant/chunk', 'tool\\/call'),
      data: fc.dictionary(fc.constantFrom('type', 'text', 'argv'), value),
    }, { requiredKeys: [] })
    await fc.assert(fc.asyncProperty(fc.array(record, { maxLength: 20 }), async (records) => {
      const text = records.map(r => JSON.stringify(r)).join('\n') + '\n'
      const expected = parseJsonl<{ type?: unknown }>(text).records.filter(r => typeof r.type === 'string' && WANT.has(r.type))
      expect((await collect(text)).map(([r]) => r)).toEqual(expected)
    }), { numRuns: 200 })
  })
})
