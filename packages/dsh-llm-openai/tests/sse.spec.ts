import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { SseParser, type SseEvent } from 'dsh-llm-openai'

const enc = new TextEncoder()

function parseAll(parts: Uint8Array[]): SseEvent[] {
  const parser = new SseParser()
  const out: SseEvent[] = []
  for (const p of parts) out.push(...parser.push(p))
  out.push(...parser.end())
  return out
}

function splitAt(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts.map(c => c % (bytes.length + 1)))].sort((a, b) => a - b)
  const out: Uint8Array[] = []
  let last = 0
  for (const p of [...points, bytes.length]) {
    out.push(bytes.subarray(last, p))
    last = p
  }
  return out
}

const lineText = fc.string({ unit: 'grapheme', maxLength: 12 }).filter(s => !/[\r\n]/.test(s))

describe('SseParser', () => {
  it('handles LF, CRLF and CR, comments, multi-line data, named events and a BOM', () => {
    const text = '\uFEFF: hello\r\ndata: one\r\n\r\nevent: error\rdata: a\rdata:  b\r\rdata:no-space\n\n'
    expect(parseAll([enc.encode(text)])).toEqual([
      { data: 'one', line: 2 },
      { event: 'error', data: 'a\n b', line: 4 },
      { data: 'no-space', line: 8 },
    ])
  })

  it('dispatches a last event that lacks the blank line, and a last line that lacks its terminator', () => {
    expect(parseAll([enc.encode('data: a\n\ndata: b\n')])).toEqual([{ data: 'a', line: 1 }, { data: 'b', line: 3 }])
    expect(parseAll([enc.encode('data: [DONE]')])).toEqual([{ data: '[DONE]', line: 1 }])
  })

  it('a CR at the end of one chunk and an LF at the start of the next are one line end', () => {
    expect(parseAll([enc.encode('data: x\r'), enc.encode('\n\r'), enc.encode('\ndata: y\n\n')])).toEqual([{ data: 'x', line: 1 }, { data: 'y', line: 3 }])
  })

  it('property: however the bytes are split, the events (and their line numbers) are the same', () => {
    const event = fc.record({
      name: fc.option(lineText, { nil: undefined }),
      data: fc.array(lineText, { minLength: 1, maxLength: 3 }),
      comment: fc.option(lineText, { nil: undefined }),
    })
    fc.assert(fc.property(
      fc.array(event, { maxLength: 6 }), fc.constantFrom('\n', '\r\n', '\r'), fc.boolean(), fc.array(fc.nat(), { maxLength: 40 }),
      (events, eol, bom, cuts) => {
        let text = bom ? '\uFEFF' : ''
        let line = 0
        const expected: SseEvent[] = []
        for (const e of events) {
          if (e.comment !== undefined) { text += `:${e.comment}${eol}`; line++ }
          const first = line + 1
          if (e.name !== undefined) { text += `event: ${e.name}${eol}`; line++ }
          for (const d of e.data) { text += `data: ${d}${eol}`; line++ }
          text += eol
          line++
          expected.push({ ...(e.name !== undefined ? { event: e.name } : {}), data: e.data.join('\n'), line: first })
        }
        const bytes = enc.encode(text)
        expect(parseAll(splitAt(bytes, cuts))).toEqual(expected)
      },
    ), { numRuns: 300 })
  })
})
