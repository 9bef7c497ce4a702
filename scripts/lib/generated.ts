import { CONFIG_HEADER, formatConfigTable } from './config-table.ts'
import type { EventDeclaration } from './events.ts'
import { codeSpans, escapeCell, findHeadings, findMarkers, findTables, headerKey, plainText, splitLines, type MarkdownTable } from './markdown.ts'
import type { PluginEntry } from './plugins.ts'

/**
 * The generated parts of a package README, between HTML comment markers:
 *
 *   <!-- config:<plugin specifier> -->      one per plugin with options:
 *   | key | type | default | description |  the table its schemastery Config renders
 *   <!-- /config -->
 *
 *   <!-- events -->                         the Events table: name and mode columns
 *   | event | mode | purpose |              from the declarations (`@mode` tags), the
 *   <!-- /events -->                        purpose column as written (new rows: the JSDoc)
 *
 * `regenerate` returns the README as it should be; the check compares it
 * with the file exactly, `docs:check --write` writes it. A README without
 * markers is migrated: an existing table is wrapped, a missing one inserted
 * at the end of its section.
 */

export const EVENTS_HEADER = 'event | mode | purpose'

export interface GeneratedFacts {
  plugins: PluginEntry[]
  /** Every event declared in the tree, by name. */
  events: Map<string, EventDeclaration>
  /** Events declared in this package's own source. */
  ownEvents: EventDeclaration[]
}

/** One generated block: where it is in the regenerated text, and what was there before. */
export interface GeneratedBlock {
  kind: 'config' | 'events'
  /** The plugin specifier (config) or the package name (events). */
  id: string
  /** 1-based line of the opening marker in the regenerated text. */
  line: number
  /** 1-based line where the block (or the table it replaces) starts in the text given. */
  sourceLine: number
  expected: string
  /** The block as the README has it now (undefined: not there, or not between markers). */
  actual: string | undefined
}

export interface Regenerated {
  text: string
  blocks: GeneratedBlock[]
}

interface Region {
  /** 0-based line indexes of the opening and closing markers (inclusive). */
  open: number
  close: number
}

const withOptions = (plugins: PluginEntry[]) => plugins.filter(p => p.config && formatConfigTable(p.config).split('\n').length > 2)

/** The README with every generated block as the sources say it should be. */
export function regenerate(text: string, pkgName: string, facts: GeneratedFacts): Regenerated {
  let lines = splitLines(text)
  const blocks: GeneratedBlock[] = []
  const replace = (kind: GeneratedBlock['kind'], id: string, expected: string, region: Region | undefined, fallback: () => number, legacy: MarkdownTable | undefined, sourceLine: number) => {
    const open = kind === 'config' ? `<!-- config:${id} -->` : '<!-- events -->'
    const close = kind === 'config' ? '<!-- /config -->' : '<!-- /events -->'
    const block = [open, ...expected.split('\n'), close]
    let at: number
    let actual: string | undefined
    if (region) {
      at = region.open
      actual = lines.slice(region.open + 1, region.close).join('\n')
      lines = [...lines.slice(0, region.open), ...block, ...lines.slice(region.close + 1)]
    } else if (legacy) {
      at = legacy.line - 1
      lines = [...lines.slice(0, at), ...block, ...lines.slice(legacy.endLine)]
    } else {
      at = fallback()
      const pad = lines[at - 1]?.trim() ? [''] : []
      lines = [...lines.slice(0, at), ...pad, ...block, '', ...lines.slice(at)]
      at += pad.length
    }
    blocks.push({ kind, id, line: at + 1, sourceLine, expected, actual })
  }

  for (const plugin of withOptions(facts.plugins)) {
    const current = lines.join('\n')
    const region = regionOf(current, words => words[0] === `config:${plugin.specifier}`, '/config')
    const legacy = region ? undefined : legacyConfigTable(current, plugin, facts.plugins)
    const source = regionOf(text, words => words[0] === `config:${plugin.specifier}`, '/config')?.open
    const sourceLine = source !== undefined ? source + 1 : legacyConfigTable(text, plugin, facts.plugins)?.line ?? headingLine(text, 'Config')
    replace('config', plugin.specifier, formatConfigTable(plugin.config!), region, () => sectionEnd(lines, 'Config'), legacy, sourceLine)
  }

  const current = lines.join('\n')
  const region = regionOf(current, words => words[0] === 'events', '/events')
  const legacy = region ? undefined : findTables(current).find(t => headerKey(t) === EVENTS_HEADER)
  const table = region ? findTables(current).find(t => t.line > region.open && t.line <= region.close) : legacy
  if (region || legacy || facts.ownEvents.length) {
    const source = regionOf(text, words => words[0] === 'events', '/events')?.open
    const sourceLine = source !== undefined ? source + 1 : findTables(text).find(t => headerKey(t) === EVENTS_HEADER)?.line ?? headingLine(text, 'Events')
    replace('events', pkgName, formatEventsTable(table, facts), region, () => sectionEnd(lines, 'Events'), legacy, sourceLine)
  }
  return { text: lines.join('\n'), blocks }
}

/** The Events table: rows as listed (undeclared ones dropped), modes from the declarations, own events added. */
function formatEventsTable(table: MarkdownTable | undefined, facts: GeneratedFacts): string {
  const rows: string[] = []
  const listed = new Set<string>()
  for (const row of table?.rows ?? []) {
    const purpose = row.cells[2] ?? ''
    for (const name of codeSpans(row.cells[0] ?? '')) {
      const declared = facts.events.get(name)
      if (!declared || listed.has(name)) continue
      listed.add(name)
      rows.push(eventRow(name, declared.mode ?? plainText(row.cells[1] ?? ''), purpose))
    }
  }
  for (const own of facts.ownEvents) {
    if (listed.has(own.name)) continue
    listed.add(own.name)
    rows.push(eventRow(own.name, own.mode ?? '', escapeCell(own.doc || '(describe this event in its JSDoc)')))
  }
  return [`| ${EVENTS_HEADER} |`, '|---|---|---|', ...rows].join('\n')
}

function eventRow(name: string, mode: string, purpose: string): string {
  return `| \`${name}\` | ${mode} | ${purpose} |`
}

/** The lines between an opening marker matching `opens` and the next `close` marker. */
function regionOf(text: string, opens: (words: string[]) => boolean, close: string): Region | undefined {
  const markers = findMarkers(text)
  const start = markers.find(m => opens(m.words))
  if (!start) return undefined
  const end = markers.find(m => m.line > start.line && m.words[0] === close)
  return end ? { open: start.line - 1, close: end.line - 1 } : undefined
}

/**
 * A Config table written before markers existed: the one under a heading or
 * line naming the plugin, or the only Config table when one plugin has options.
 */
function legacyConfigTable(text: string, plugin: PluginEntry, plugins: PluginEntry[]): MarkdownTable | undefined {
  const tables = findTables(text).filter(t => headerKey(t) === CONFIG_HEADER && !insideMarkers(text, t.line))
  const lines = splitLines(text)
  const named = tables.find(t => {
    for (let n = t.line - 1; n >= 1; n--) {
      const spans = codeSpans(lines[n - 1])
      const hit = plugins.filter(p => spans.includes(p.specifier) || plainText(lines[n - 1]).replace(/^#+\s*/, '') === p.specifier)
      if (hit.length) return hit.sort((a, b) => b.specifier.length - a.specifier.length)[0] === plugin
      if (/^#{1,2}\s/.test(lines[n - 1])) return false
    }
    return false
  })
  if (named) return named
  return withOptions(plugins).length === 1 && tables.length === 1 ? tables[0] : undefined
}

function insideMarkers(text: string, line: number): boolean {
  const markers = findMarkers(text)
  const before = markers.filter(m => m.line < line).pop()
  return !!before && !before.words[0]?.startsWith('/')
}

function headingLine(text: string, title: string): number {
  return findHeadings(text).find(h => h.level === 2 && plainText(h.text) === title)?.line ?? 1
}

/** 0-based index of the line that ends the `## <title>` section (the next heading of level ≤ 2, or the end). */
function sectionEnd(lines: string[], title: string): number {
  const headings = findHeadings(lines.join('\n'))
  const section = headings.find(h => h.level === 2 && plainText(h.text) === title)
  if (!section) return lines.length
  const next = headings.find(h => h.line > section.line && h.level <= 2)
  let end = next ? next.line - 1 : lines.length
  while (end > section.line && !lines[end - 1]?.trim()) end--
  return end
}
