import { isDeepStrictEqual } from 'node:util'
import { codeSpans, escapeCell, plainText, type MarkdownTable } from './markdown.ts'

/**
 * A README Config table (`| key | type | default | description |`) checked
 * against the plugin's schemastery `Config`, row by row:
 * - key: the option name in backticks; one row per option (hidden options may be left out);
 * - type: the schema rendered by schemastery (`String(schema)`: `number`, `string[]`, `"a" | "b"`);
 * - default: `meta.default` as JSON (`1000`, `120_000`, `"x"`, `[]`), `—` when there is none,
 *   or a long string shown by its start and `…` (`"You are a coding agent…"`);
 * - description: `meta.description`, word for word (backticks and spacing aside).
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

const NO_DEFAULT = new Set(['', '—', '–', '-', 'none'])
const MIN_PREFIX = 8

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

/** The table a README should carry for this schema (for `check-readmes --print-config`). */
export function formatConfigTable(schema: SchemaLike): string {
  const rows = configOptions(schema).filter(o => !o.hidden).map(o => {
    const cells = [`\`${o.key}\``, `\`${escapeCell(o.type)}\``, formatDefault(o), escapeCell(o.description ?? '(add a .description() to the schema)')]
    return `| ${cells.join(' | ')} |`
  })
  return [`| ${CONFIG_HEADER} |`, '|---|---|---|---|', ...rows].join('\n')
}

export interface ConfigRowProblem {
  line: number
  message: string
}

/** Every way the table differs from the schema. */
export function compareConfigTable(schema: SchemaLike, table: MarkdownTable): ConfigRowProblem[] {
  const problems: ConfigRowProblem[] = []
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
    const option = options.get(key)
    if (!option) {
      at('no such option in the schema (stale row?)')
      continue
    }
    const type = plainText(row.cells[1] ?? '')
    if (type !== option.type) at(`type is \`${type}\` here, the schema says \`${option.type}\``)
    const shown = plainText(row.cells[2] ?? '')
    if (!defaultMatches(shown, option)) at(`default is \`${shown || '(empty)'}\` here, the schema says ${formatDefault(option)}`)
    const description = plainText(row.cells[3] ?? '')
    if (option.description === undefined) at('the schema has no .description(), so this row cannot be checked; add one')
    else if (description !== plainText(option.description)) at(`description differs from the schema: "${plainText(option.description)}"`)
  }
  for (const option of options.values()) {
    if (!seen.has(option.key) && !option.hidden) problems.push({ line: table.line, message: `Config \`${option.key}\`: missing from the table` })
  }
  return problems
}

export function defaultMatches(shown: string, option: Pick<ConfigOption, 'default' | 'required'>): boolean {
  const value = option.default
  if (value === undefined) return NO_DEFAULT.has(shown) || (option.required && /^required$/i.test(shown))
  if (typeof value === 'string') {
    if (shown === value || shown === JSON.stringify(value) || shown === `'${value}'`) return true
    const abbreviated = /^(.*)…["']?$/s.exec(shown)
    if (abbreviated) {
      const prefix = unquotePrefix(abbreviated[1])
      return prefix.length >= MIN_PREFIX && value.startsWith(prefix)
    }
    return false
  }
  if (isEmptyContainer(value) && NO_DEFAULT.has(shown)) return true
  const parsed = parseLiteral(shown)
  return parsed.ok && isDeepStrictEqual(parsed.value, value)
}

function formatDefault(option: Pick<ConfigOption, 'default' | 'required'>): string {
  const value = option.default
  if (value === undefined) return option.required ? 'required' : '—'
  if (typeof value === 'string' && value.length > 40) return `\`${JSON.stringify(value.slice(0, 30)).slice(0, -1)}…"\``
  return `\`${escapeCell(JSON.stringify(value))}\``
}

function parseLiteral(text: string): { ok: true; value: unknown } | { ok: false } {
  if (/^-?\d[\d_]*(\.\d+)?$/.test(text)) return { ok: true, value: Number(text.replace(/_/g, '')) }
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    // Not JSON: the caller reports the mismatch with the expected value.
    return { ok: false }
  }
}

/** The start of a string as shown: `"abc` (JSON, escapes allowed), `'abc` or `abc`. */
function unquotePrefix(text: string): string {
  if (text.startsWith('"')) {
    try {
      return JSON.parse(text + '"') as string
    } catch {
      // Not a valid JSON string start: compare it as written.
      return text.slice(1)
    }
  }
  return text.replace(/^'/, '')
}

function isEmptyContainer(value: unknown): boolean {
  return (Array.isArray(value) && value.length === 0) || (typeof value === 'object' && value !== null && Object.keys(value).length === 0)
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
