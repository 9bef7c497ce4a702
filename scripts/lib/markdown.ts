/**
 * Markdown for the docs checks, parsed by a real CommonMark + GFM parser
 * (mdast): fenced code blocks (also inside lists and blockquotes), headings
 * and pipe tables, each with the 1-based line it starts on, and the HTML
 * comment markers that delimit generated sections.
 */
import type { Code, Heading as MdHeading, Html, Nodes, Root, Table } from 'mdast'
import { fromMarkdown } from 'mdast-util-from-markdown'
import { gfmFromMarkdown } from 'mdast-util-gfm'
import { gfm } from 'micromark-extension-gfm'

export interface FencedBlock {
  /** First word of the info string, lower-cased (`ts`, `yaml`, …); '' when none. */
  lang: string
  /** The other words of the info string (`ignore-check`, …). */
  flags: string[]
  /** Line of the opening fence. */
  fenceLine: number
  /** Line of the first content line (`fenceLine + 1`). */
  startLine: number
  /** Content with the fence's indentation (and any list/quote prefix) removed. */
  content: string
  /** False when the file ended before a closing fence. */
  closed: boolean
}

export interface Heading {
  level: number
  /** Heading text as written (inline Markdown), without the `#` marks. */
  text: string
  line: number
}

export interface TableRow {
  line: number
  /** Each cell's inline Markdown as written (`\|` kept). */
  cells: string[]
}

export interface MarkdownTable {
  /** Line of the header row. */
  line: number
  /** Line of the last row. */
  endLine: number
  header: string[]
  rows: TableRow[]
}

/** An HTML comment on a line of its own (`<!-- name arg -->`), outside code. */
export interface Marker {
  line: number
  /** The comment's words, e.g. `['config:dsh-llm']`. */
  words: string[]
}

interface Parsed {
  text: string
  tree: Root
}

let last: Parsed | undefined

/** Parse once per text (the checks ask several questions of the same README). */
function parse(text: string): Root {
  if (last?.text === text) return last.tree
  const tree = fromMarkdown(text, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] })
  last = { text, tree }
  return tree
}

function walk(node: Nodes, visit: (node: Nodes) => void): void {
  visit(node)
  if ('children' in node) for (const child of node.children) walk(child as Nodes, visit)
}

function nodesOf<T extends Nodes['type']>(text: string, type: T): Extract<Nodes, { type: T }>[] {
  const found: Extract<Nodes, { type: T }>[] = []
  walk(parse(text), node => { if (node.type === type) found.push(node as Extract<Nodes, { type: T }>) })
  return found
}

/** The source text spanned by a node's children ('' when it has none). */
function innerSource(text: string, children: readonly Nodes[]): string {
  const start = children[0]?.position?.start.offset
  const end = children[children.length - 1]?.position?.end.offset
  return start === undefined || end === undefined ? '' : text.slice(start, end)
}

/** Fenced code blocks in document order (indented code blocks are not fenced). */
export function findFencedBlocks(text: string): FencedBlock[] {
  const lines = splitLines(text)
  return nodesOf(text, 'code').filter(code => /^\s*(?:[>*+-]\s*|\d+[.)]\s*)*(`{3,}|~{3,})/.test(lines[(code.position?.start.line ?? 1) - 1] ?? '')).map((code: Code) => {
    const fenceLine = code.position?.start.line ?? 1
    const endLine = code.position?.end.line ?? fenceLine
    const fence = /(`{3,}|~{3,})/.exec(lines[fenceLine - 1] ?? '')?.[1] ?? '```'
    const closing = lines[endLine - 1] ?? ''
    const words = [code.lang ?? '', ...(code.meta ?? '').split(/\s+/)].filter(Boolean)
    return {
      lang: (words[0] ?? '').toLowerCase(),
      flags: words.slice(1),
      fenceLine,
      startLine: fenceLine + 1,
      content: code.value,
      closed: endLine > fenceLine && closing.trim().replace(/^(?:[>*+-]\s*|\d+[.)]\s*)*/, '').startsWith(fence[0].repeat(fence.length)),
    }
  })
}

/** Headings (ATX and setext) outside code blocks. */
export function findHeadings(text: string): Heading[] {
  return nodesOf(text, 'heading').map((h: MdHeading) => {
    return { level: h.depth, text: innerSource(text, h.children).trim(), line: h.position?.start.line ?? 1 }
  })
}

/** GFM pipe tables outside code blocks. */
export function findTables(text: string): MarkdownTable[] {
  return nodesOf(text, 'table').map((table: Table) => {
    const [head, ...body] = table.children
    const cells = (row: Table['children'][number]) => row.children.map(cell => innerSource(text, cell.children).trim())
    return {
      line: table.position?.start.line ?? 1,
      endLine: table.position?.end.line ?? 1,
      header: head ? cells(head) : [],
      rows: body.map(row => ({ line: row.position?.start.line ?? 1, cells: cells(row) })),
    }
  })
}

/** HTML comments that stand alone as a block (`<!-- config:dsh-llm -->`). */
export function findMarkers(text: string): Marker[] {
  return nodesOf(text, 'html').flatMap((html: Html) => {
    const m = /^<!--\s*([\s\S]*?)\s*-->$/.exec(html.value.trim())
    return m ? [{ line: html.position?.start.line ?? 1, words: m[1].split(/\s+/).filter(Boolean) }] : []
  })
}

/** Lower-cased, trimmed header cells, for matching a table by its columns. */
export function headerKey(table: MarkdownTable): string {
  return table.header.map(cell => plainText(cell).toLowerCase()).join(' | ')
}

/** The contents of the code spans in a piece of inline Markdown. */
export function codeSpans(inline: string): string[] {
  return nodesOf(inline.replace(/\\\|/g, '|'), 'inlineCode').map(c => c.value.trim())
}

/**
 * Inline Markdown reduced to comparable text: code-span backticks removed,
 * `\|` unescaped, whitespace collapsed.
 */
export function plainText(inline: string): string {
  return inline
    .replace(/\\\|/g, '|')
    .replace(/(`+)([\s\S]*?[^`])\1(?!`)/g, (_, _ticks: string, body: string) => body.trim())
    .replace(/\s+/g, ' ')
    .trim()
}

/** Escape a value for a pipe-table cell. */
export function escapeCell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ')
}

export function splitLines(text: string): string[] {
  return text.split(/\r?\n/)
}
