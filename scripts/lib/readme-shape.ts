import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { codeSpans, findFencedBlocks, findHeadings, findTables, headerKey, plainText, type Heading, type MarkdownTable } from './markdown.ts'
import { CONFIG_HEADER, compareConfigTable, configOptions } from './config-table.ts'
import { OPT_OUT_FLAG } from './doc-blocks.ts'
import { scanEventDeclarations, uniqueEvents, type EventDeclaration } from './events.ts'
import { loadPackagePlugins, type PluginEntry } from './plugins.ts'
import { listPackages, relPath, type WorkspacePackage } from './workspace.ts'

/**
 * One README shape for every package (STYLE.md §7):
 *   # <package name>
 *   <one-sentence purpose>
 *   ## Provides     ctx key / tools provided
 *   ## API
 *   ## Events       | event | mode | purpose |        (plugins)
 *   ## Config       | key | type | default | description |  (plugins)
 *   ## cordis.yml   a ```yaml entry naming the plugin    (plugins)
 *   ## Not here     what is deliberately left out
 *   and at least one ```ts example importing the package by name
 *   (type-checked by doc-typecheck).
 * Sections must come in this order; headings are matched loosely
 * (`## Tools provided`, `## Configuration`, `## Non-goals`).
 */

export interface SectionRule {
  id: string
  /** The heading to write when the section is missing. */
  title: string
  matches: RegExp
  /** Required only for packages that export a plugin. */
  pluginOnly: boolean
}

export const SECTIONS: readonly SectionRule[] = [
  { id: 'provides', title: 'Provides', matches: /\bprovides?\b|\bctx\b|\btools?\b|\bservices?\b/i, pluginOnly: false },
  { id: 'api', title: 'API', matches: /\bapi\b/i, pluginOnly: false },
  { id: 'events', title: 'Events', matches: /\bevents?\b/i, pluginOnly: true },
  { id: 'config', title: 'Config', matches: /^`?config(uration)?\b/i, pluginOnly: true },
  { id: 'cordis', title: 'cordis.yml', matches: /cordis\.ya?ml/i, pluginOnly: true },
  { id: 'not-here', title: 'Not here', matches: /not here|deliberately|non-goals?|out of scope|does not do|doesn't do/i, pluginOnly: false },
]

export const EVENTS_HEADER = 'event | mode | purpose'

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
  checkEventsTable(tables.filter(t => headerKey(t) === EVENTS_HEADER), facts, report)
  checkConfigTables(text, headings, tables.filter(t => headerKey(t) === CONFIG_HEADER), facts.plugins, report)

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
    const heading = h2.find(h => rule.matches.test(plainText(h.text)))
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

function checkEventsTable(tables: MarkdownTable[], facts: ReadmeFacts, report: Report): void {
  const listed = new Set<string>()
  for (const table of tables) {
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
  }
  const missing = facts.ownEvents.filter(d => !listed.has(d.name))
  if (missing.length && tables.length === 0) {
    report(1, `no Events table ("| ${EVENTS_HEADER} |") though the package declares ${missing.map(d => `\`${d.name}\``).join(', ')}`)
  } else {
    for (const d of missing) report(tables[0].line, `event \`${d.name}\` (declared at ${d.file}:${d.line}) is missing from the Events table`)
  }
}

/**
 * Each plugin with options needs a Config table. With several such plugins
 * in one package, a table belongs to the plugin named (in backticks or in a
 * heading) on the nearest line above it.
 */
function checkConfigTables(text: string, headings: Heading[], tables: MarkdownTable[], plugins: PluginEntry[], report: Report): void {
  const withOptions = plugins.filter(p => p.config && configOptions(p.config).length > 0)
  const lines = text.split(/\r?\n/)
  const claimed = new Map<string, MarkdownTable>()
  for (const table of tables) {
    let plugin = namedAbove(lines, headings, table.line, plugins)
    if (!plugin && withOptions.length === 1 && !claimed.has(withOptions[0].specifier)) plugin = withOptions[0]
    if (!plugin) {
      report(table.line, `Config table: cannot tell which plugin it describes; name one of ${plugins.map(p => `\`${p.specifier}\``).join(', ') || '(no plugins found)'} on the line above it`)
      continue
    }
    if (claimed.has(plugin.specifier)) {
      report(table.line, `second Config table for \`${plugin.specifier}\` (first at line ${claimed.get(plugin.specifier)!.line})`)
      continue
    }
    claimed.set(plugin.specifier, table)
    if (!plugin.config) {
      report(table.line, `\`${plugin.specifier}\` exports no schemastery Config to check this table against`)
      continue
    }
    for (const p of compareConfigTable(plugin.config, table)) report(p.line, withOptions.length > 1 ? `${plugin.specifier}: ${p.message}` : p.message)
  }
  for (const plugin of withOptions) {
    if (!claimed.has(plugin.specifier)) {
      report(sectionLine(headings, 'config'), `no Config table ("| ${CONFIG_HEADER} |") for \`${plugin.specifier}\``)
    }
  }
}

/** The plugin named on the closest line above `line` (not above the enclosing `##` heading) that names one. */
function namedAbove(lines: string[], headings: Heading[], line: number, plugins: PluginEntry[]): PluginEntry | undefined {
  const section = [...headings].reverse().find(h => h.line < line && h.level <= 2)?.line ?? 1
  for (let n = line - 1; n >= section; n--) {
    const text = lines[n - 1]
    const heading = headings.find(h => h.line === n)
    const names = heading && heading.level > 2 ? [...codeSpans(text), plainText(heading.text)] : codeSpans(text)
    const hit = plugins.filter(p => names.includes(p.specifier)).sort((a, b) => b.specifier.length - a.specifier.length)[0]
    if (hit) return hit
  }
  return undefined
}

function sectionLine(headings: Heading[], id: string): number {
  const rule = SECTIONS.find(s => s.id === id)!
  return headings.find(h => h.level === 2 && rule.matches.test(plainText(h.text)))?.line ?? 1
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
  for (const pkg of packages) problems.push(...await checkPackage(root, pkg, declarations, events))
  const lines = problems.map(p => `${p.file}:${p.line}: ${p.message}`)
  const bad = new Set(problems.map(p => p.file)).size
  lines.push(`check-readmes: ${packages.length} package READMEs, ${bad} with problems`)
  const ok = problems.length === 0
  lines.push(ok ? 'check-readmes: ok' : 'check-readmes: FAILED')
  return { ok, lines, problems, checked: packages.length }
}

async function checkPackage(root: string, pkg: WorkspacePackage, declarations: EventDeclaration[], events: Map<string, EventDeclaration>): Promise<ReadmeProblem[]> {
  const readme = join(pkg.dir, 'README.md')
  const file = relPath(root, readme)
  if (!existsSync(readme)) return [{ file, line: 1, message: 'missing README.md' }]
  const { plugins, errors } = await loadPackagePlugins(pkg)
  const problems = errors.map(message => ({ file, line: 1, message: `cannot load the plugin to check the Config table: ${message}` }))
  const ownEvents = declarations.filter(d => d.file.startsWith(`${pkg.rel}/`))
  return [...problems, ...checkReadmeText(file, readFileSync(readme, 'utf8'), pkg.name, { events, ownEvents: dedupe(ownEvents), plugins })]
}

function dedupe(declarations: EventDeclaration[]): EventDeclaration[] {
  const seen = new Set<string>()
  return declarations.filter(d => !seen.has(d.name) && seen.add(d.name))
}
