import { pathToFileURL } from 'node:url'
import { Service } from '@deepseek-ai/cordis'
import { isSchemaLike, type SchemaLike } from './config-table.ts'
import type { WorkspacePackage } from './workspace.ts'

/** One entry of a package's `exports` that is a Cordis plugin. */
export interface PluginEntry {
  /** What cordis.yml loads it by: `dsh-llm`, `dsh-llm/scripted`. */
  specifier: string
  file: string
  /** The plugin's schemastery `Config`, when it has one. */
  config: SchemaLike | undefined
}

export interface PackagePlugins {
  plugins: PluginEntry[]
  /** Entries that could not be imported: `specifier: message`. */
  errors: string[]
}

/**
 * Import each `exports` entry of a package and keep the ones that are
 * plugins: a module with `apply`, or a default export that is a Cordis
 * Service class or carries `apply` / a schemastery `Config`.
 */
export async function loadPackagePlugins(pkg: WorkspacePackage): Promise<PackagePlugins> {
  const plugins: PluginEntry[] = []
  const errors: string[] = []
  for (const [specifier, file] of pkg.entries) {
    let mod: Record<string, unknown>
    try {
      mod = await import(pathToFileURL(file).href) as Record<string, unknown>
    } catch (error) {
      errors.push(`${specifier}: cannot import ${file}: ${(error as Error).message.split('\n')[0]}`)
      continue
    }
    const plugin = pluginOf(mod)
    if (plugin) plugins.push({ specifier, file, config: plugin.config })
  }
  return { plugins, errors }
}

function pluginOf(mod: Record<string, unknown>): { config: SchemaLike | undefined } | undefined {
  if (typeof mod.apply === 'function') return { config: isSchemaLike(mod.Config) ? mod.Config : undefined }
  const def = mod.default
  if (typeof def !== 'function' && (typeof def !== 'object' || def === null)) return undefined
  const candidate = def as { apply?: unknown; Config?: unknown; prototype?: unknown }
  const isService = typeof def === 'function' && candidate.prototype instanceof Service
  if (!isService && typeof candidate.apply !== 'function' && !isSchemaLike(candidate.Config)) return undefined
  return { config: isSchemaLike(candidate.Config) ? candidate.Config : undefined }
}
