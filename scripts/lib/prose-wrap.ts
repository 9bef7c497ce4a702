/**
 * Prose line width for the repository's Markdown: a paragraph with a line
 * longer than `LIMIT` is re-wrapped at `WIDTH`. Only paragraphs are touched
 * (also inside lists and blockquotes); headings, tables, code, HTML and the
 * generated blocks are left as written. A re-wrap never changes what the
 * Markdown means: the parsed tree before and after must be equal (text
 * compared with whitespace collapsed), or the file is left alone and named.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { Nodes, Paragraph, Root } from 'mdast'
import { fromMarkdown } from 'mdast-util-from-markdown'
import { gfmFromMarkdown } from 'mdast-util-gfm'
import { gfm } from 'micromark-extension-gfm'
import { listDocFiles, relPath } from './workspace.ts'

/** A prose line longer than this is a finding. */
const LIMIT = 100
/** Paragraphs with a finding are re-wrapped to this width. */
const WIDTH = 80

interface LongLine {
  line: number
  length: number
}

function parse(text: string): Root {
  return fromMarkdown(text, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] })
}

function paragraphs(node: Nodes, found: Paragraph[] = []): Paragraph[] {
  if (node.type === 'paragraph') found.push(node)
  else if ('children' in node) for (const child of node.children) paragraphs(child as Nodes, found)
  return found
}

/** Lines of paragraphs longer than `LIMIT` characters (1-based line numbers). */
function longProseLines(text: string): LongLine[] {
  const lines = text.split('\n')
  return paragraphs(parse(text)).flatMap(p => {
    const out: LongLine[] = []
    for (let line = p.position!.start.line; line <= p.position!.end.line; line++) {
      const length = [...lines[line - 1]!].length
      if (length > LIMIT) out.push({ line, length })
    }
    return out
  })
}

/** Words of a paragraph's text; a code span is one word even when it holds spaces. */
function words(text: string): string[] {
  const out: string[] = []
  let word = ''
  for (let i = 0; i < text.length;) {
    const ticks = /^`+/.exec(text.slice(i))?.[0]
    if (ticks && (i === 0 || text[i - 1] !== '\\')) {
      const close = new RegExp(`(?<!\`)${ticks}(?!\`)`, 'g')
      close.lastIndex = i + ticks.length
      const end = close.exec(text)
      const stop = end ? end.index + ticks.length : i + ticks.length
      word += text.slice(i, stop).replace(/\s+/g, ' ')
      i = stop
    } else if (/\s/.test(text[i]!)) {
      if (word) out.push(word)
      word = ''
      i++
    } else {
      word += text[i]
      i++
    }
  }
  if (word) out.push(word)
  return out
}

/** A word that would start a block (list, heading, quote, fence, HTML, setext underline) at the start of a line. */
function startsBlock(word: string, next: string | undefined): boolean {
  if (/^(?:#{1,6}|>|[-*+]|\d{1,9}[.)])$/.test(word) && next !== undefined) return true
  return /^(?:#{1,6}$|>|`{3,}|~{3,}|=+$|-+$|<|\|)/.test(word) || /^\d{1,9}[.)]$/.test(word)
}

function fill(text: string, first: string, rest: string): string[] {
  const ws = words(text)
  const lines: string[] = []
  let line = first
  let empty = true
  for (let i = 0; i < ws.length; i++) {
    const word = ws[i]!
    if (!empty && [...line].length + 1 + [...word].length > WIDTH && !startsBlock(word, ws[i + 1])) {
      lines.push(line)
      line = rest + word
    } else line += (empty ? '' : ' ') + word
    empty = false
  }
  lines.push(line)
  return lines
}

/** Re-wrap one paragraph given its source lines; hard line breaks are kept. */
function rewrap(lines: string[], startColumn: number): string[] {
  const first = lines[0]!.slice(0, startColumn - 1)
  const quoted = first.includes('>')
  const contPrefix = first.replace(/[^>\s]/g, ' ')
  const strip = (line: string, i: number) => i === 0 ? line.slice(startColumn - 1) : line.replace(quoted ? /^\s*(?:>\s?)*\s*/ : /^\s*/, '')
  const out: string[] = []
  let segment: string[] = []
  let prefix = first
  lines.forEach((line, i) => {
    const body = strip(line, i)
    const hard = i < lines.length - 1 && (/ {2,}$/.test(body) || /(?<!\\)\\$/.test(body))
    segment.push(hard ? body.replace(/ +$/, '') : body.trim())
    if (hard || i === lines.length - 1) {
      const filled = fill(segment.join(' '), prefix, contPrefix)
      if (hard) filled[filled.length - 1] += /\\$/.test(body) ? '' : '  '
      out.push(...filled)
      segment = []
      prefix = contPrefix
    }
  })
  return out
}

/** The tree without positions, text whitespace collapsed: what the Markdown means. */
function meaning(text: string): string {
  return JSON.stringify(parse(text), (key, value: unknown) => {
    if (key === 'position') return undefined
    if (typeof value === 'string' && key === 'value') return value.replace(/\s+/g, ' ')
    return value
  })
}

interface WrapResult {
  text: string
  /** Paragraphs re-wrapped. */
  changed: number
  /** Set when the re-wrap would have changed the document's meaning (the text is then returned as it was). */
  error?: string
}

/** Re-wrap every paragraph that has a line over `LIMIT`. */
export function wrapProse(text: string): WrapResult {
  const lines = text.split('\n')
  const long = new Set(longProseLines(text).map(l => l.line))
  const targets = paragraphs(parse(text)).filter(p => {
    for (let line = p.position!.start.line; line <= p.position!.end.line; line++) if (long.has(line)) return true
    return false
  })
  for (const p of [...targets].reverse()) {
    const start = p.position!.start.line
    const end = p.position!.end.line
    lines.splice(start - 1, end - start + 1, ...rewrap(lines.slice(start - 1, end), p.position!.start.column))
  }
  const wrapped = lines.join('\n')
  if (targets.length && meaning(wrapped) !== meaning(text)) {
    return { text, changed: 0, error: 're-wrapping would change the parsed Markdown' }
  }
  return { text: wrapped, changed: targets.length }
}

export interface ProseWidthOptions {
  root: string
  /** Re-wrap the paragraphs in place before checking. */
  write?: boolean
}

export interface ProseWidthReport {
  ok: boolean
  lines: string[]
}

/**
 * The prose of README.md, docs/**\/*.md, packages/*\/README.md and
 * scripts/README.md: a finding for each paragraph line over `LIMIT` that a
 * re-wrap would shorten (a line that is one long code span stays).
 */
export function checkProseWidth(options: ProseWidthOptions): ProseWidthReport {
  const root = resolve(options.root)
  const files = listDocFiles(root)
  if (existsSync(join(root, 'scripts', 'README.md'))) files.push(join(root, 'scripts', 'README.md'))
  const lines: string[] = []
  let bad = 0
  for (const file of files) {
    const rel = relPath(root, file)
    const text = readFileSync(file, 'utf8')
    const result = wrapProse(text)
    if (result.error) {
      bad++
      lines.push(`${rel}: ${result.error}; wrap its long paragraphs by hand`)
    } else if (result.text !== text && options.write) {
      writeFileSync(file, result.text)
      lines.push(`prose width: re-wrapped ${result.changed} paragraph(s) of ${rel}`)
    } else if (result.text !== text) {
      bad++
      const before = text.split('\n')
      const after = new Set(result.text.split('\n'))
      for (const long of longProseLines(text)) {
        if (!after.has(before[long.line - 1]!)) lines.push(`${rel}:${long.line}: a prose line of ${long.length} characters (over ${LIMIT}); \`pnpm docs:check --write\` re-wraps its paragraph at ${WIDTH}`)
      }
    }
  }
  lines.push(`prose width: ${files.length} Markdown files, ${bad} with lines over ${LIMIT} characters`)
  lines.push(bad === 0 ? 'prose width: ok' : 'prose width: FAILED')
  return { ok: bad === 0, lines }
}
