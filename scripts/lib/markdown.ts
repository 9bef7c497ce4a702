/**
 * Just enough Markdown for the docs checks: fenced code blocks, headings and
 * pipe tables, each with the 1-based line it starts on. Headings and tables
 * inside fenced blocks are not seen.
 */

export interface FencedBlock {
  /** First word of the info string, lower-cased (`ts`, `yaml`, …); '' when none. */
  lang: string
  /** The other words of the info string (`ignore-check`, …). */
  flags: string[]
  /** Line of the opening fence. */
  fenceLine: number
  /** Line of the first content line (`fenceLine + 1`). */
  startLine: number
  /** Content with the opening fence's indentation removed. */
  content: string
  /** False when the file ended before a closing fence. */
  closed: boolean
}

export interface Heading {
  level: number
  /** Heading text with the `#` marks and trailing `#`s removed. */
  text: string
  line: number
}

export interface TableRow {
  line: number
  cells: string[]
}

export interface MarkdownTable {
  /** Line of the header row. */
  line: number
  header: string[]
  rows: TableRow[]
}

const FENCE_OPEN = /^( {0,3})(`{3,}|~{3,})(.*)$/

/** Fenced code blocks in document order. */
export function findFencedBlocks(text: string): FencedBlock[] {
  const lines = splitLines(text)
  const blocks: FencedBlock[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE_OPEN.exec(lines[i])
    if (!open) continue
    const [, indent, fence, infoRaw] = open
    // A backtick fence's info string may not contain a backtick (CommonMark).
    if (fence[0] === '`' && infoRaw.includes('`')) continue
    const words = infoRaw.trim().split(/\s+/).filter(Boolean)
    const content: string[] = []
    let j = i + 1
    let closed = false
    for (; j < lines.length; j++) {
      if (isClosingFence(lines[j], fence)) {
        closed = true
        break
      }
      content.push(stripIndent(lines[j], indent.length))
    }
    blocks.push({
      lang: (words[0] ?? '').toLowerCase(),
      flags: words.slice(1),
      fenceLine: i + 1,
      startLine: i + 2,
      content: content.join('\n'),
      closed,
    })
    i = j
  }
  return blocks
}

/** ATX headings (`## Title`) outside fenced blocks. */
export function findHeadings(text: string): Heading[] {
  const headings: Heading[] = []
  forEachProseLine(text, (line, n) => {
    const m = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/.exec(line)
    if (m) headings.push({ level: m[1].length, text: (m[2] ?? '').trim(), line: n })
  })
  return headings
}

/** Pipe tables (header row, delimiter row, body rows) outside fenced blocks. */
export function findTables(text: string): MarkdownTable[] {
  const prose: Array<{ line: string; n: number } | undefined> = []
  forEachProseLine(text, (line, n) => { prose[n] = { line, n } }, n => { prose[n] = undefined })
  const tables: MarkdownTable[] = []
  for (let n = 1; n < prose.length; n++) {
    const head = prose[n]
    const delim = prose[n + 1]
    if (!head || !delim || !head.line.includes('|') || !isDelimiterRow(delim.line)) continue
    const header = splitRow(head.line)
    if (header.length !== splitRow(delim.line).length) continue
    const rows: TableRow[] = []
    let k = n + 2
    for (; k < prose.length; k++) {
      const row = prose[k]
      if (!row || !row.line.includes('|') || row.line.trim() === '') break
      rows.push({ line: k, cells: splitRow(row.line) })
    }
    tables.push({ line: n, header, rows })
    n = k - 1
  }
  return tables
}

/** Lower-cased, trimmed header cells, for matching a table by its columns. */
export function headerKey(table: MarkdownTable): string {
  return table.header.map(cell => plainText(cell).toLowerCase()).join(' | ')
}

/** The contents of the backtick code spans in a piece of inline Markdown. */
export function codeSpans(inline: string): string[] {
  const spans: string[] = []
  const re = /(`+)([\s\S]*?[^`])\1(?!`)/g
  for (let m = re.exec(inline); m; m = re.exec(inline)) spans.push(m[2].trim())
  return spans
}

/**
 * Inline Markdown reduced to comparable text: code-span backticks removed,
 * `\|` unescaped, whitespace collapsed.
 */
export function plainText(inline: string): string {
  return inline
    .replace(/(`+)([\s\S]*?[^`])\1(?!`)/g, (_, _ticks: string, body: string) => body.trim())
    .replace(/\\\|/g, '|')
    .replace(/\s+/g, ' ')
    .trim()
}

/** Escape a value for a pipe-table cell. */
export function escapeCell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ')
}

function splitLines(text: string): string[] {
  return text.split(/\r?\n/)
}

function isClosingFence(line: string, fence: string): boolean {
  const m = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(line)
  return !!m && m[1][0] === fence[0] && m[1].length >= fence.length
}

function stripIndent(line: string, indent: number): string {
  let i = 0
  while (i < indent && line[i] === ' ') i++
  return line.slice(i)
}

/** Calls `visit` for each line outside fenced blocks, `skip` for lines inside (1-based numbers). */
function forEachProseLine(text: string, visit: (line: string, n: number) => void, skip?: (n: number) => void): void {
  const lines = splitLines(text)
  let fence: string | undefined
  lines.forEach((line, i) => {
    if (fence) {
      if (isClosingFence(line, fence)) fence = undefined
      skip?.(i + 1)
      return
    }
    const open = FENCE_OPEN.exec(line)
    if (open && !(open[2][0] === '`' && open[3].includes('`'))) {
      fence = open[2]
      skip?.(i + 1)
      return
    }
    visit(line, i + 1)
  })
}

function isDelimiterRow(line: string): boolean {
  return /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/.test(line) && line.includes('-')
}

/** Split a table row on unescaped pipes; outer pipes are optional. */
function splitRow(line: string): string[] {
  let body = line.trim()
  if (body.startsWith('|')) body = body.slice(1)
  if (body.endsWith('|') && !body.endsWith('\\|')) body = body.slice(0, -1)
  const cells: string[] = []
  let cell = ''
  for (let i = 0; i < body.length; i++) {
    if (body[i] === '\\' && body[i + 1] === '|') {
      cell += '\\|'
      i++
    } else if (body[i] === '|') {
      cells.push(cell.trim())
      cell = ''
    } else {
      cell += body[i]
    }
  }
  cells.push(cell.trim())
  return cells
}
