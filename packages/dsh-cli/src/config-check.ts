import { createRequire } from 'node:module'
import { dirname, resolve } from 'node:path'
import { readTextFile } from 'dsh-common'
import yaml from 'js-yaml'
import { entryListSchema } from '@deepseek-ai/cordis-plugin-include'

/** cordis.yml is unreadable, malformed, or names a plugin that is not installed. `code` is stable. */
export class ConfigError extends Error {
  readonly code = 'CONFIG'
}

export interface EntryRow {
  id?: string
  name: string
  disabled?: unknown
  group?: boolean
  config?: unknown
}

const requireHere = createRequire(import.meta.url)

/** Where a plugin name resolves for the loader, or undefined when it is not installed. */
export function resolvePluginName(name: string, configDir: string): string | undefined {
  if (name.startsWith('cordis:')) return name
  try {
    return name.startsWith('.') ? requireHere.resolve(resolve(configDir, name)) : requireHere.resolve(name)
  } catch {
    return undefined
  }
}

function lineOf(text: string, needle: RegExp): number | undefined {
  const lines = text.split('\n')
  const i = lines.findIndex(l => needle.test(l))
  return i === -1 ? undefined : i + 1
}

/**
 * Read and check a cordis.yml before anything boots: it must parse, be a
 * list of entries each with a `name`, and every name must resolve to an
 * installed plugin. Problems are one line naming the file (and line).
 */
export function checkConfigFile(file: string): EntryRow[] {
  const text = readTextFile(file, 'config', message => new ConfigError(message))
  let data: unknown
  try {
    data = yaml.load(text, { schema: entryListSchema, filename: file })
  } catch (error) {
    const e = error as { mark?: { line: number; column: number }; reason?: string; message: string }
    const where = e.mark ? `${file}:${e.mark.line + 1}:${e.mark.column + 1}` : file
    throw new ConfigError(`${where}: invalid YAML (${e.reason ?? e.message.split('\n')[0]})`)
  }
  if (!Array.isArray(data)) throw new ConfigError(`${file}: expected a list of plugin entries`)
  const rows: EntryRow[] = []
  const visit = (entries: unknown[]) => {
    for (const raw of entries) {
      const entry = raw as EntryRow
      if (!entry || typeof entry !== 'object' || typeof entry.name !== 'string' || !entry.name) {
        throw new ConfigError(`${file}: every entry needs a "name" (got ${JSON.stringify(raw)})`)
      }
      rows.push(entry)
      if (entry.group && Array.isArray(entry.config)) {
        visit(entry.config)
        continue
      }
      if (!resolvePluginName(entry.name, dirname(file))) {
        const escaped = entry.name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
        const line = lineOf(text, new RegExp(`name:\\s*['"]?${escaped}['"]?\\s*$`))
        throw new ConfigError(`${file}${line ? `:${line}` : ''}: plugin "${entry.name}"${entry.id ? ` (entry ${entry.id})` : ''} is not installed`)
      }
    }
  }
  visit(data)
  return rows
}
