import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { checkProseWidth, wrapProse } from '../lib/prose-wrap.ts'

const long = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(' ')

describe('wrapProse', () => {
  it('re-wraps a paragraph with a line over 100 characters at 80, and leaves a shorter one as written', () => {
    const short = 'A short paragraph\nwrapped by hand at\nodd places.'
    const { text, changed } = wrapProse(`# Title\n\n${long(30)}\n\n${short}\n`)
    expect(changed).toBe(1)
    expect(text).toBe([
      '# Title',
      '',
      'word0 word1 word2 word3 word4 word5 word6 word7 word8 word9 word10 word11 word12',
      'word13 word14 word15 word16 word17 word18 word19 word20 word21 word22 word23',
      'word24 word25 word26 word27 word28 word29',
      '',
      short,
      '',
    ].join('\n'))
    expect(wrapProse(text)).toEqual({ text, changed: 0 })
  })

  it('indents list items and quotes their continuation lines, and keeps hard line breaks', () => {
    const { text } = wrapProse(`- ${long(16)}\n\n> ${long(16)}  \n> after the break\n`)
    expect(text).toBe([
      '- word0 word1 word2 word3 word4 word5 word6 word7 word8 word9 word10 word11',
      '  word12 word13 word14 word15',
      '',
      '> word0 word1 word2 word3 word4 word5 word6 word7 word8 word9 word10 word11',
      '> word12 word13 word14 word15  ',
      '> after the break',
      '',
    ].join('\n'))
  })

  it('never splits a code span and never starts a line with a block marker', () => {
    const para = `${'x'.repeat(66)} then \`a code span\` and then ${'y'.repeat(72)} - a dash, and ${'z'.repeat(70)} # a hash.`
    expect(wrapProse(para).text.split('\n')).toEqual([
      `${'x'.repeat(66)} then`,
      '`a code span` and then',
      `${'y'.repeat(72)} - a`,
      `dash, and ${'z'.repeat(70)} #`,
      'a hash.',
    ])
  })

  it('leaves tables, code blocks and generated markers alone', () => {
    const table = `| key | description |\n|---|---|\n| \`a\` | ${long(30)} |`
    const code = '```ts\n' + `const s = '${long(30)}'\n` + '```'
    const doc = `<!-- config:x -->\n${table}\n<!-- /config -->\n\n${code}\n`
    expect(wrapProse(doc)).toEqual({ text: doc, changed: 0 })
  })
})

describe('checkProseWidth', () => {
  let root: string | undefined
  afterEach(() => { if (root) rmSync(root, { recursive: true, force: true }) })

  it('names each over-long line, and with write re-wraps the file in place', () => {
    root = mkdtempSync(join(tmpdir(), 'prose-width-'))
    writeFileSync(join(root, 'README.md'), `# r\n\n${long(30)}\n`)
    const found = checkProseWidth({ root })
    expect(found.ok).toBe(false)
    expect(found.lines).toContain('README.md:3: a prose line of 199 characters (over 100); `pnpm docs:check --write` re-wraps its paragraph at 80')
    const fixed = checkProseWidth({ root, write: true })
    expect(fixed.lines).toContain('prose width: re-wrapped 1 paragraph(s) of README.md')
    expect(readFileSync(join(root, 'README.md'), 'utf8').split('\n').every(l => l.length <= 80)).toBe(true)
    expect(checkProseWidth({ root }).ok).toBe(true)
  })
})
