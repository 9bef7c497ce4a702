import { existsSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { codeSpans, findTables, headerKey, plainText } from './markdown.ts'
import { declarationProblems, scanEventDeclarations, uniqueEvents, type DeclarationScanOptions, type EventDeclaration } from './events.ts'
import { relPath } from './workspace.ts'

/** The header (lower-cased) of the event taxonomy table(s) in docs/architecture.md. */
const TAXONOMY_HEADER = 'event | mode | emitted by | purpose'

export interface TaxonomyRow {
  name: string
  mode: string
  line: number
}

export interface TaxonomyTable {
  rows: TaxonomyRow[]
  /** Number of tables with the taxonomy header. */
  tables: number
  problems: string[]
}

/**
 * Rows of every table headed `| event | mode | emitted by | purpose |`. An
 * event cell names its event(s) in backticks; several names in one cell
 * share the row's mode.
 */
export function parseTaxonomy(markdown: string, file: string): TaxonomyTable {
  const rows: TaxonomyRow[] = []
  const problems: string[] = []
  const tables = findTables(markdown).filter(t => headerKey(t) === TAXONOMY_HEADER)
  for (const table of tables) {
    for (const row of table.rows) {
      const names = codeSpans(row.cells[0] ?? '')
      const mode = plainText(row.cells[1] ?? '')
      if (names.length === 0) {
        problems.push(`${file}:${row.line}: row has no event name in backticks`)
        continue
      }
      if (!mode) problems.push(`${file}:${row.line}: \`${names.join('`, `')}\` has no mode`)
      for (const name of names) rows.push({ name, mode, line: row.line })
    }
  }
  const seen = new Map<string, TaxonomyRow>()
  for (const row of rows) {
    const first = seen.get(row.name)
    if (first) problems.push(`${file}:${row.line}: \`${row.name}\` is listed twice (first at line ${first.line})`)
    else seen.set(row.name, row)
  }
  return { rows, tables: tables.length, problems }
}

export interface ModeMismatch {
  row: TaxonomyRow
  declaration: EventDeclaration
}

export interface TaxonomyDiff {
  /** Declared in source, absent from the table. */
  missing: EventDeclaration[]
  /** In the table, declared nowhere in source. */
  stale: TaxonomyRow[]
  modeMismatches: ModeMismatch[]
}

export function compareTaxonomy(declarations: readonly EventDeclaration[], rows: readonly TaxonomyRow[]): TaxonomyDiff {
  const declared = uniqueEvents(declarations)
  const listed = new Map<string, TaxonomyRow>()
  for (const row of rows) if (!listed.has(row.name)) listed.set(row.name, row)
  const missing = [...declared.values()].filter(d => !listed.has(d.name))
  const stale = [...listed.values()].filter(r => !declared.has(r.name))
  const modeMismatches: ModeMismatch[] = []
  for (const row of listed.values()) {
    const declaration = declared.get(row.name)
    if (declaration?.mode !== undefined && declaration.mode !== row.mode) modeMismatches.push({ row, declaration })
  }
  return { missing, stale, modeMismatches }
}

export interface TaxonomyOptions extends DeclarationScanOptions {
  root: string
  /** The document holding the table; default `docs/architecture.md` under the root. */
  doc?: string
}

export interface TaxonomyReport {
  ok: boolean
  lines: string[]
  declarations: EventDeclaration[]
  diff: TaxonomyDiff
  problems: string[]
}

/** Compare the taxonomy table with the declarations in `<root>/packages/*\/src`. */
export function verifyEventTaxonomy(options: TaxonomyOptions): TaxonomyReport {
  const root = resolve(options.root)
  const docPath = resolve(root, options.doc ?? 'docs/architecture.md')
  const doc = relPath(root, docPath)
  const declarations = scanEventDeclarations(root, options)
  const problems = declarationProblems(declarations)
  let rows: TaxonomyRow[] = []
  if (!existsSync(docPath)) {
    problems.push(`${doc}: not found`)
  } else {
    const table = parseTaxonomy(readFileSync(docPath, 'utf8'), doc)
    if (table.tables === 0) problems.push(`${doc}: no table with header "| ${TAXONOMY_HEADER} |"`)
    problems.push(...table.problems)
    rows = table.rows
  }
  const diff = compareTaxonomy(declarations, rows)
  const lines: string[] = []
  const unique = uniqueEvents(declarations)
  lines.push(`event taxonomy: ${rows.length} rows in ${doc}, ${unique.size} events declared in packages/*/src`)
  if (diff.missing.length) {
    lines.push(`missing from ${doc} (declared in source):`)
    for (const d of diff.missing) lines.push(`  \`${d.name}\` (${d.mode ?? 'no @mode'}) declared at ${d.file}:${d.line}`)
  }
  if (diff.stale.length) {
    lines.push(`stale in ${doc} (declared nowhere in source):`)
    for (const r of diff.stale) lines.push(`  \`${r.name}\` (${r.mode}) at ${doc}:${r.line}`)
  }
  if (diff.modeMismatches.length) {
    lines.push('mode mismatches:')
    for (const { row, declaration } of diff.modeMismatches) {
      lines.push(`  \`${row.name}\`: ${doc}:${row.line} says ${row.mode || '(empty)'}, ${declaration.file}:${declaration.line} says ${declaration.mode}`)
    }
  }
  if (problems.length) {
    lines.push('problems:')
    for (const p of problems) lines.push(`  ${p}`)
  }
  const ok = !diff.missing.length && !diff.stale.length && !diff.modeMismatches.length && !problems.length
  lines.push(ok ? 'event taxonomy: ok' : 'event taxonomy: FAILED')
  return { ok, lines, declarations, diff, problems }
}
