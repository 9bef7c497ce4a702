import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { codeSpans, findFencedBlocks, findHeadings, findTables, headerKey, plainText, type Heading, type MarkdownTable } from './markdown.ts'
import { CONFIG_HEADER, compareConfigTable } from './config-table.ts'
import { OPT_OUT_FLAG } from './doc-blocks.ts'
import { scanEventDeclarations, uniqueEvents, type EventDeclaration } from './events.ts'
import { EVENTS_HEADER, regenerate, type GeneratedBlock } from './generated.ts'
import { loadPackagePlugins, type PluginEntry } from './plugins.ts'
import { listPackages, relPath, type WorkspacePackage } from './workspace.ts'

/**
 * One README shape for every package (scripts/README.md, "check-readmes"):
 *   # <package name>
 *   <one-sentence purpose>
 *   ## Provides     ctx key / tools provided
 *   ## API
 *   ## Events       generated table (plugins)
 *   ## Config       generated table per plugin with options (plugins)
 *   ## cordis.yml   a ```yaml entry naming the plugin    (plugins)
 *   ## Not here     what is deliberately left out
 *   and at least one ```ts example importing the package by name
 *   (type-checked by doc-typecheck).
 * Sections carry exactly these titles, in this order; other sections may
 * stand between them. The Events and Config tables are generated from the
 * sources (see generated.ts) and must match them exactly.
 */

export interface SectionRule {
  id: string
  title: string
  /** Required only for packages that export a plugin. */
  pluginOnly: boolean
}

const SECTIONS: readonly SectionRule[] = [
  { id: 'provides', title: 'Provides', pluginOnly: false },
  { id: 'api', title: 'API', pluginOnly: false },
  { id: 'events', title: 'Events', pluginOnly: true },
  { id: 'config', title: 'Config', pluginOnly: true },
  { id: 'cordis', title: 'cordis.yml', pluginOnly: true },
  { id: 'not-here', title: 'Not here', pluginOnly: false },
]

const WRITE_HINT = 'run `pnpm docs:check --write` to regenerate it'

export interface ReadmeProblem {
  /** README path relative to the root. */
  file: string
  line: number
  message: string
}

export interface ReadmeFacts {
  /** Every event declared in the tree, by name. */
  events: Map<string, EventDeclaration>
  /** Events declared in this package's own source. */
  ownEvents: EventDeclaration[]
  plugins: PluginEntry[]
}

/** Check one README's text against the shape; pure, so tests can feed it strings. */
export function checkReadmeText(file: string, text: string, pkgName: string, facts: ReadmeFacts): ReadmeProblem[] {
  const problems: ReadmeProblem[] = []
  const report = (line: number, message: string) => problems.push({ file, line, message })
  const headings = findHeadings(text)
  const tables = findTables(text)
  const blocks = findFencedBlocks(text)
  const isPlugin = facts.plugins.length > 0

  checkTitleAndPurpose(text, headings, pkgName, report)
  checkSections(headings, isPlugin, report)
  for (const block of regenerate(text, pkgName, facts).blocks) checkGenerated(block, tables, facts, report)

  if (isPlugin) {
    const specs = facts.plugins.map(p => p.specifier)
    const yaml = blocks.filter(b => b.lang === 'yaml' || b.lang === 'yml')
    if (!yaml.some(b => specs.some(s => mentions(b.content, s)))) {
      report(sectionLine(headings, 'cordis'), `no \`\`\`yaml cordis.yml entry naming ${specs.map(s => `\`${s}\``).join(' or ')}`)
    }
  }
  const examples = blocks.filter(b => (b.lang === 'ts' || b.lang === 'typescript') && !b.flags.includes(OPT_OUT_FLAG))
  if (!examples.some(b => importsPackage(b.content, pkgName))) {
    report(1, `no \`\`\`ts example that imports '${pkgName}' (an ${OPT_OUT_FLAG} block does not count)`)
  }
  return problems.sort((a, b) => a.line - b.line)
}

type Report = (line: number, message: string) => void

function checkTitleAndPurpose(text: string, headings: Heading[], pkgName: string, report: Report): void {
  const title = headings[0]
  if (!title || title.level !== 1) {
    report(1, `the README must start with "# ${pkgName}"`)
    return
  }
  if (!plainText(title.text).includes(pkgName)) report(title.line, `the title should name the package ("# ${pkgName}")`)
  const lines = text.split(/\r?\n/)
  const next = headings.find(h => h.line > title.line)?.line ?? lines.length + 1
  const body = lines.slice(title.line, next - 1)
  const start = body.findIndex(l => l.trim() !== '')
  if (start < 0 || /^\s*(\||```|~~~|[-*+] |\d+\. |>)/.test(body[start])) {
    report(title.line, 'no one-sentence purpose under the title')
    return
  }
  const end = body.findIndex((l, i) => i > start && l.trim() === '')
  const paragraph = body.slice(start, end < 0 ? undefined : end).join(' ')
  const sentences = countSentences(paragraph)
  if (sentences > 1) report(title.line + start + 1, `the purpose should be one sentence (found ${sentences})`)
}

function checkSections(headings: Heading[], isPlugin: boolean, report: Report): void {
  const h2 = headings.filter(h => h.level === 2)
  let previous: { rule: SectionRule; heading: Heading } | undefined
  for (const rule of SECTIONS) {
    const heading = h2.find(h => plainText(h.text) === rule.title)
    if (!heading) {
      if (isPlugin || !rule.pluginOnly) report(1, `missing section "## ${rule.title}"`)
      continue
    }
    if (previous && heading.line < previous.heading.line) {
      report(heading.line, `section "## ${heading.text}" should come after "## ${previous.heading.text}" (order: ${SECTIONS.map(s => s.title).join(', ')})`)
    }
    previous = { rule, heading }
  }
}

/** A generated block must be between its markers and equal, to the letter, what the sources generate. */
function checkGenerated(block: GeneratedBlock, tables: MarkdownTable[], facts: ReadmeFacts, report: Report): void {
  const what = block.kind === 'config' ? `Config table of \`${block.id}\`` : 'Events table'
  if (block.actual === undefined) {
    const marker = block.kind === 'config' ? `<!-- config:${block.id} -->` : '<!-- events -->'
    report(block.sourceLine, `${what} is not between ${marker} markers; ${WRITE_HINT}`)
    return
  }
  if (block.actual === block.expected) return
  const table = tables.find(t => t.line > block.sourceLine && headerKey(t) === (block.kind === 'config' ? CONFIG_HEADER : EVENTS_HEADER))
  const details: { line: number; message: string }[] = []
  if (table && block.kind === 'config') {
    const plugin = facts.plugins.find(p => p.specifier === block.id)
    const several = facts.plugins.filter(q => q.config).length > 1
    if (plugin?.config) details.push(...compareConfigTable(plugin.config, table).map(p => ({ line: p.line, message: several ? `${plugin.specifier}: ${p.message}` : p.message })))
  } else if (table) {
    details.push(...eventRowProblems(table, facts))
  }
  for (const d of details) report(d.line, d.message)
  if (details.length) return
  const expected = block.expected.split('\n')
  const actual = block.actual.split('\n')
  const i = expected.findIndex((line, n) => line !== actual[n])
  const at = i < 0 ? expected.length : i
  report(block.sourceLine + 1 + at, `${what} differs from what the sources generate: expected ${JSON.stringify(expected[at] ?? '(end of table)')}; ${WRITE_HINT}`)
}

function eventRowProblems(table: MarkdownTable, facts: ReadmeFacts): { line: number; message: string }[] {
  const problems: { line: number; message: string }[] = []
  const report = (line: number, message: string) => problems.push({ line, message })
  const listed = new Set<string>()
  for (const row of table.rows) {
    const names = codeSpans(row.cells[0] ?? '')
    const mode = plainText(row.cells[1] ?? '')
    if (names.length === 0) report(row.line, 'Events row has no event name in backticks')
    for (const name of names) {
      listed.add(name)
      const declared = facts.events.get(name)
      if (!declared) report(row.line, `event \`${name}\` is declared in no package source`)
      else if (declared.mode !== undefined && declared.mode !== mode) {
        report(row.line, `event \`${name}\`: mode is ${mode || '(empty)'} here, ${declared.mode} at ${declared.file}:${declared.line}`)
      }
    }
  }
  for (const d of facts.ownEvents) {
    if (!listed.has(d.name)) report(table.line, `event \`${d.name}\` (declared at ${d.file}:${d.line}) is missing from the Events table`)
  }
  return problems
}

function sectionLine(headings: Heading[], id: string): number {
  const rule = SECTIONS.find(s => s.id === id)!
  return headings.find(h => h.level === 2 && plainText(h.text) === rule.title)?.line ?? 1
}

function mentions(text: string, specifier: string): boolean {
  const escaped = specifier.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
  return new RegExp(`(^|[\\s'"\`:])${escaped}($|[\\s'"\`,])`, 'm').test(text)
}

function importsPackage(code: string, pkgName: string): boolean {
  const escaped = pkgName.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
  return new RegExp(`(from|import)\\s*\\(?\\s*['"]${escaped}(/[^'"]*)?['"]`).test(code)
}

function countSentences(paragraph: string): number {
  const prose = paragraph
    .replace(/(`+)[\s\S]*?\1/g, 'CODE')
    .replace(/\b(e\.g|i\.e|etc|vs|cf)\./gi, '$1')
  return prose.split(/[.!?](?=\s+[A-Z`(*_])/).filter(s => s.trim()).length
}

export interface ReadmeCheckOptions {
  root: string
  /** Only these packages (by name or directory name); all when empty. */
  only?: readonly string[]
  /** Regenerate the Events and Config tables in place before checking. */
  write?: boolean
}

export interface ReadmeReport {
  ok: boolean
  lines: string[]
  problems: ReadmeProblem[]
  checked: number
}

/** Check every package README under `<root>/packages`. */
export async function checkReadmes(options: ReadmeCheckOptions): Promise<ReadmeReport> {
  const root = resolve(options.root)
  const all = listPackages(root)
  const only = options.only ?? []
  const packages = only.length ? all.filter(p => only.includes(p.name) || only.some(o => p.rel.endsWith(`/${o}`))) : all
  const declarations = scanEventDeclarations(root, {}, all)
  const events = uniqueEvents(declarations)
  const problems: ReadmeProblem[] = []
  const written: string[] = []
  for (const pkg of packages) problems.push(...await checkPackage(root, pkg, declarations, events, options.write ? written : undefined))
  const lines = [...written.map(f => `check-readmes: regenerated the tables of ${f}`), ...problems.map(p => `${p.file}:${p.line}: ${p.message}`)]
  const bad = new Set(problems.map(p => p.file)).size
  lines.push(`check-readmes: ${packages.length} package READMEs, ${bad} with problems`)
  const ok = problems.length === 0
  lines.push(ok ? 'check-readmes: ok' : 'check-readmes: FAILED')
  return { ok, lines, problems, checked: packages.length }
}

async function checkPackage(root: string, pkg: WorkspacePackage, declarations: EventDeclaration[], events: Map<string, EventDeclaration>, written?: string[]): Promise<ReadmeProblem[]> {
  const readme = join(pkg.dir, 'README.md')
  const file = relPath(root, readme)
  if (!existsSync(readme)) return [{ file, line: 1, message: 'missing README.md' }]
  const { plugins, errors } = await loadPackagePlugins(pkg)
  const problems = errors.map(message => ({ file, line: 1, message: `cannot load the plugin to check the Config table: ${message}` }))
  const facts = { events, ownEvents: dedupe(declarations.filter(d => d.file.startsWith(`${pkg.rel}/`))), plugins }
  let text = readFileSync(readme, 'utf8')
  if (written && !errors.length) {
    const next = regenerate(text, pkg.name, facts).text
    if (next !== text) {
      writeFileSync(readme, next)
      written.push(file)
      text = next
    }
  }
  return [...problems, ...checkReadmeText(file, text, pkg.name, facts)]
}

function dedupe(declarations: EventDeclaration[]): EventDeclaration[] {
  const seen = new Set<string>()
  return declarations.filter(d => !seen.has(d.name) && seen.add(d.name))
}
