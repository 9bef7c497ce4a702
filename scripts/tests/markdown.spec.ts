import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { codeSpans, findFencedBlocks, findHeadings, findMarkers, findTables, plainText } from '../lib/markdown.ts'

describe('findFencedBlocks', () => {
  it('reads the language, the flags and the line of each fence', () => {
    const text = ['# t', '', '```ts ignore-check', 'a', '```', '', '~~~yaml', 'b: 1', '~~~'].join('\n')
    expect(findFencedBlocks(text)).toEqual([
      { lang: 'ts', flags: ['ignore-check'], fenceLine: 3, startLine: 4, content: 'a', closed: true },
      { lang: 'yaml', flags: [], fenceLine: 7, startLine: 8, content: 'b: 1', closed: true },
    ])
  })

  it('keeps a shorter fence inside a longer one as content', () => {
    const text = ['````md', '```ts', 'x', '```', '````', '```ts', 'y', '```'].join('\n')
    const blocks = findFencedBlocks(text)
    expect(blocks.map(b => [b.lang, b.fenceLine, b.content])).toEqual([
      ['md', 1, '```ts\nx\n```'],
      ['ts', 6, 'y'],
    ])
  })

  it('strips the indentation of an indented fence and reports an unclosed one', () => {
    const text = ['1. item', '', '   ```ts', '   const a = 1', '     nested()', '   ```', '```ts', 'open'].join('\n')
    const blocks = findFencedBlocks(text)
    expect(blocks[0]).toMatchObject({ fenceLine: 3, content: 'const a = 1\n  nested()', closed: true })
    expect(blocks[1]).toMatchObject({ fenceLine: 7, content: 'open', closed: false })
  })

  it('finds every block of a generated document at the line it was written', () => {
    const part = fc.oneof(
      fc.record({ kind: fc.constant('prose' as const), lines: fc.array(fc.stringMatching(/^[a-z |#`]{0,12}$/), { maxLength: 3 }) }),
      fc.record({ kind: fc.constant('block' as const), lang: fc.constantFrom('ts', 'yaml', ''), lines: fc.array(fc.stringMatching(/^[a-z =;#|]{0,12}$/), { maxLength: 4 }) }),
    )
    fc.assert(fc.property(fc.array(part, { maxLength: 8 }), parts => {
      const lines: string[] = []
      const expected: Array<{ lang: string; fenceLine: number; content: string }> = []
      for (const p of parts) {
        if (p.kind === 'prose') {
          // Prose that could open a fence is kept out by the generator (no backtick runs of 3).
          lines.push(...p.lines.map(l => l.replace(/`{3,}/g, '`')), '')
        } else {
          expected.push({ lang: p.lang, fenceLine: lines.length + 1, content: p.lines.join('\n') })
          lines.push('```' + p.lang, ...p.lines, '```', '')
        }
      }
      const found = findFencedBlocks(lines.join('\n')).map(b => ({ lang: b.lang, fenceLine: b.fenceLine, content: b.content }))
      expect(found).toEqual(expected)
    }), { numRuns: 200 })
  })
})

describe('findHeadings and findTables', () => {
  const text = [
    '# Title',
    '',
    '## Events ##',
    '',
    '| event | mode | purpose |',
    '|---|:---:|---|',
    '| `a/b` | emit | uses \\| a pipe |',
    'c | d | e',
    '',
    '```md',
    '## not a heading',
    '| x | y |',
    '|---|---|',
    '```',
    'key | value',
    '--- | ---',
    '`k` | `v`',
  ].join('\n')

  it('sees headings outside code blocks only', () => {
    expect(findHeadings(text)).toEqual([
      { level: 1, text: 'Title', line: 1 },
      { level: 2, text: 'Events', line: 3 },
    ])
  })

  it('splits rows on unescaped pipes, with or without outer pipes', () => {
    const tables = findTables(text)
    expect(tables).toEqual([
      { line: 5, endLine: 8, header: ['event', 'mode', 'purpose'], rows: [{ line: 7, cells: ['`a/b`', 'emit', 'uses \\| a pipe'] }, { line: 8, cells: ['c', 'd', 'e'] }] },
      { line: 15, endLine: 17, header: ['key', 'value'], rows: [{ line: 17, cells: ['`k`', '`v`'] }] },
    ])
  })
})

describe('structures a line scanner misses', () => {
  it('finds fences inside list items and blockquotes, and no heading or table inside them', () => {
    const text = [
      '- an item',
      '',
      '  ```ts',
      '  # not a heading',
      '  const a = 1',
      '  ```',
      '',
      '> ```yaml',
      '> | x | y |',
      '> |---|---|',
      '> ```',
    ].join('\n')
    expect(findFencedBlocks(text).map(b => [b.lang, b.fenceLine, b.content, b.closed])).toEqual([
      ['ts', 3, '# not a heading\nconst a = 1', true],
      ['yaml', 8, '| x | y |\n|---|---|', true],
    ])
    expect(findHeadings(text)).toEqual([])
    expect(findTables(text)).toEqual([])
  })

  it('reads standalone HTML comment markers, not ones inside code', () => {
    const text = ['<!-- config:dsh-llm -->', '| a | b |', '|---|---|', '<!-- /config -->', '', '```md', '<!-- events -->', '```'].join('\n')
    expect(findMarkers(text)).toEqual([{ line: 1, words: ['config:dsh-llm'] }, { line: 4, words: ['/config'] }])
  })
})

describe('inline text', () => {
  it('extracts code spans and reduces a cell to comparable text', () => {
    expect(codeSpans('`a/b`, `c/d` and ``e`f``')).toEqual(['a/b', 'c/d', 'e`f'])
    expect(plainText('  `"a" \\| "b"`   or\n `c` ')).toBe('"a" | "b" or c')
  })
})
