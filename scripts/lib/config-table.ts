import { codeSpans, escapeCell, plainText, type MarkdownTable } from './markdown.ts'

/**
 * The README Config table (`| key | type | default | description |`) a
 * plugin's schemastery `Config` generates, one row per option that is not
 * hidden:
 * - key: the option name in backticks;
 * - type: the schema rendered by schemastery (`String(schema)`: `number`, `string[]`, `"a" | "b"`);
 * - default: `meta.default` as JSON, `—` when there is none, `required`,
 *   or a long string shown by its start and `…` (`"You are a coding agent…"`);
 * - description: `meta.description`, word for word.
 * The check compares a README's table with it exactly; `compareConfigTable`
 * names the row and cell that drifted.
 */

export const CONFIG_HEADER = 'key | type | default | description'

/** The parts of a schemastery schema the check reads; structural, so any copy of the library fits. */
export interface SchemaLike {
  type: string
  meta: {
    default?: unknown
    description?: unknown
    required?: boolean
    hidden?: boolean
  }
  dict?: Record<string, SchemaLike>
  list?: SchemaLike[]
  toString(): string
}

export interface ConfigOption {
  key: string
  type: string
  default: unknown
  description: string | undefined
  required: boolean
  hidden: boolean
}

export function isSchemaLike(value: unknown): value is SchemaLike {
  if (typeof value !== 'function' && (typeof value !== 'object' || value === null)) return false
  const candidate = value as { type?: unknown; meta?: unknown }
  return typeof candidate.type === 'string' && typeof candidate.meta === 'object' && candidate.meta !== null
}

/** Top-level options of an object (or intersection of objects) schema, in declaration order. */
function configOptions(schema: SchemaLike): ConfigOption[] {
  const dict: Record<string, SchemaLike> = {}
  const gather = (s: SchemaLike) => {
    if (s.type === 'object' && s.dict) Object.assign(dict, s.dict)
    else if (s.type === 'intersect' && s.list) s.list.forEach(gather)
  }
  gather(schema)
  return Object.entries(dict).map(([key, option]) => ({
    key,
    type: normalize(String(option)),
    default: option.meta.default,
    description: describe(option.meta.description),
    required: option.meta.required === true,
    hidden: option.meta.hidden === true,
  }))
}

/** The generated rows, by option key: the cells as the table carries them. */
function configRows(schema: SchemaLike): Map<string, string[]> {
  const rows = new Map<string, string[]>()
  for (const o of configOptions(schema)) {
    if (o.hidden) continue
    rows.set(o.key, [`\`${o.key}\``, `\`${escapeCell(o.type)}\``, formatDefault(o), escapeCell(o.description ?? '(add a .description() to the schema)')])
  }
  return rows
}

/** The table a README should carry for this schema (what `docs:check --write` writes). */
export function formatConfigTable(schema: SchemaLike): string {
  const rows = [...configRows(schema).values()].map(cells => `| ${cells.join(' | ')} |`)
  return [`| ${CONFIG_HEADER} |`, '|---|---|---|---|', ...rows].join('\n')
}

export interface ConfigRowProblem {
  line: number
  message: string
}

const COLUMNS = ['key', 'type', 'default', 'description'] as const

/** Every row and cell in which a README table differs from the generated one. */
export function compareConfigTable(schema: SchemaLike, table: MarkdownTable): ConfigRowProblem[] {
  const problems: ConfigRowProblem[] = []
  const expected = configRows(schema)
  const options = new Map(configOptions(schema).map(o => [o.key, o]))
  const seen = new Map<string, number>()
  for (const row of table.rows) {
    const key = codeSpans(row.cells[0] ?? '')[0] ?? plainText(row.cells[0] ?? '')
    const at = (message: string) => problems.push({ line: row.line, message: `Config \`${key}\`: ${message}` })
    if (seen.has(key)) {
      at(`listed twice (first at line ${seen.get(key)})`)
      continue
    }
    seen.set(key, row.line)
    const cells = expected.get(key)
    if (!cells) {
      at(options.get(key)?.hidden ? 'a hidden option; leave it out' : 'no such option in the schema (stale row?)')
      continue
    }
    if (options.get(key)?.description === undefined) at('the schema has no .description(); add one')
    for (let i = 1; i < COLUMNS.length; i++) {
      const shown = (row.cells[i] ?? '').trim()
      if (shown !== cells[i] && !(i === 3 && options.get(key)?.description === undefined)) {
        const show = (cell: string) => (COLUMNS[i] === 'description' ? `"${cell}"` : cell) || '(empty)'
        at(`${COLUMNS[i]} is ${show(shown)} here, the schema says ${show(cells[i]!)}`)
      }
    }
  }
  for (const key of expected.keys()) {
    if (!seen.has(key)) problems.push({ line: table.line, message: `Config \`${key}\`: missing from the table` })
  }
  return problems
}

function formatDefault(option: Pick<ConfigOption, 'default' | 'required'>): string {
  const value = option.default
  if (value === undefined) return option.required ? 'required' : '—'
  if (typeof value === 'string' && value.length > 40) return `\`${JSON.stringify(value.slice(0, 30)).slice(0, -1)}…"\``
  return `\`${escapeCell(JSON.stringify(value))}\``
}

function describe(description: unknown): string | undefined {
  if (typeof description === 'string') return description
  if (description && typeof description === 'object') {
    const locales = description as Record<string, unknown>
    const text = locales[''] ?? locales.en ?? Object.values(locales)[0]
    return typeof text === 'string' ? text : undefined
  }
  return undefined
}

function normalize(text: string): string {
  return text.replace(/\s+/g, ' ').trim()
}
