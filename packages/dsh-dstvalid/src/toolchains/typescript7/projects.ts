import { existsSync, readFileSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { stripComments } from '../js/strip-comments.ts'

/**
 * JSON with comments and trailing commas (the tsconfig dialect) to a value.
 * Throws on anything else that is not JSON.
 */
export function parseJsonc(text: string): unknown {
  return JSON.parse(stripComments(text).replace(/,(\s*[}\]])/g, '$1'))
}

/** A tsconfig's `references`, as absolute config paths (a directory reference means its `tsconfig.json`). */
export function referencesOf(configPath: string): string[] {
  let json: { references?: { path?: unknown }[] }
  try {
    json = parseJsonc(readFileSync(configPath, 'utf8')) as typeof json
  } catch {
    // Unreadable or not JSON: tsc reports it for this config; it has no references we can follow.
    return []
  }
  const out: string[] = []
  for (const ref of Array.isArray(json?.references) ? json.references : []) {
    if (typeof ref?.path !== 'string') continue
    const target = resolve(dirname(configPath), ref.path)
    const isDir = existsSync(target) && statSync(target).isDirectory()
    out.push(isDir || !target.endsWith('.json') ? resolve(target, 'tsconfig.json') : target)
  }
  return out
}

/**
 * The project graph `tsc -b <config>` builds: the config and every project it
 * references, transitively, referenced projects first (build order). A
 * reference to a missing config is kept out (tsc reports it).
 */
export function projectGraph(configPath: string): string[] {
  const order: string[] = []
  const seen = new Set<string>()
  const visit = (config: string) => {
    if (seen.has(config)) return
    seen.add(config)
    for (const ref of referencesOf(config)) if (existsSync(ref)) visit(ref)
    order.push(config)
  }
  visit(resolve(configPath))
  return order
}
