/**
 * The import graph of a TypeScript or JavaScript workspace without the
 * classic compiler API — TypeScript 7 has none (and its API server does not
 * expose module resolution), a plain JavaScript test runner needs none:
 * static specifiers scanned from each program file's text and
 * resolved by our own resolver — relative specifiers the way `bundler` /
 * `nodenext` resolution maps them to sources, and the project's `paths`.
 */
import { readFileSync } from 'node:fs'
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import { isInside, scanFileStates } from 'dsh-common'
import type { ImportEdge } from '../../impact.ts'
import type { ModuleGraph } from '../../types.ts'
import { stripComments } from './strip-comments.ts'

/** One module specifier a file uses, and whether only types cross it. */
export interface ScannedImport {
  specifier: string
  typeOnly: boolean
}

const FROM = /(?:^|[;\n}])\s*(import|export)\s+(type\s+)?([^'";]*?)\s*from\s*(['"])([^'"\n]+)\4/g
const BARE = /(?:^|[;\n}])\s*import\s*(['"])([^'"\n]+)\1/g
const CALL = /(?:\bimport|\brequire)\s*\(\s*(['"])([^'"\n]+)\1\s*\)/g

/** Whether every named element of an import/export clause is marked `type` (and there is no default). */
function allTypeElements(clause: string): boolean {
  const m = /^\{([^}]*)\}$/.exec(clause.trim())
  if (!m) return false
  const elements = m[1]!.split(',').map(e => e.trim()).filter(Boolean)
  return elements.length > 0 && elements.every(e => /^type\s/.test(e))
}

/** The static module specifiers of a source text (`import`/`export … from`, side-effect imports, `import()`, `require()`). */
export function scanImports(text: string): ScannedImport[] {
  const code = stripComments(text)
  const out: ScannedImport[] = []
  for (const m of code.matchAll(FROM)) out.push({ specifier: m[5]!, typeOnly: !!m[2] || allTypeElements(m[3]!) })
  for (const m of code.matchAll(BARE)) out.push({ specifier: m[2]!, typeOnly: false })
  for (const m of code.matchAll(CALL)) out.push({ specifier: m[2]!, typeOnly: false })
  return out
}

const SOURCE_FOR: Record<string, string[]> = {
  '.js': ['.ts', '.tsx', '.d.ts', '.js', '.jsx'],
  '.jsx': ['.tsx', '.jsx'],
  '.mjs': ['.mts', '.d.mts', '.mjs'],
  '.cjs': ['.cts', '.d.cts', '.cjs'],
}
const EXTENSIONS = ['.ts', '.tsx', '.d.ts', '.js', '.jsx', '.mts', '.cts']

/** The program file a path-like specifier (already made absolute) names, or undefined. */
function resolvePathLike(target: string, files: ReadonlySet<string>): string | undefined {
  if (files.has(target)) return target
  const ext = /\.[cm]?jsx?$/.exec(target)?.[0]
  if (ext) {
    const stem = target.slice(0, -ext.length)
    for (const e of SOURCE_FOR[ext] ?? []) if (files.has(stem + e)) return stem + e
  }
  for (const e of EXTENSIONS) if (files.has(target + e)) return target + e
  for (const e of EXTENSIONS) if (files.has(join(target, `index${e}`))) return join(target, `index${e}`)
  return undefined
}

/** `paths` of a project: patterns (one `*` at most) and their substitutions, absolute. */
export interface PathMapping {
  pattern: string
  substitutions: string[]
}

/** Resolve one specifier of `from` to a program file, or undefined (a package, or not in the program). */
export function resolveSpecifier(specifier: string, from: string, files: ReadonlySet<string>, paths: readonly PathMapping[] = []): string | undefined {
  if (specifier.startsWith('.') || isAbsolute(specifier)) return resolvePathLike(resolve(dirname(from), specifier), files)
  for (const { pattern, substitutions } of paths) {
    const star = pattern.indexOf('*')
    let matched: string | undefined
    if (star < 0) matched = pattern === specifier ? '' : undefined
    else if (specifier.startsWith(pattern.slice(0, star)) && specifier.endsWith(pattern.slice(star + 1)) && specifier.length >= pattern.length - 1) {
      matched = specifier.slice(star, specifier.length - (pattern.length - star - 1))
    }
    if (matched === undefined) continue
    for (const sub of substitutions) {
      const hit = resolvePathLike(sub.replace('*', matched), files)
      if (hit) return hit
    }
  }
  return undefined
}

/**
 * Edges between the workspace's own program files (inside `root`, outside
 * `node_modules`): `from` imports `to`; an edge is type-only when every use
 * of it is. `files` are the programs' source files (absolute).
 */
export function scanImportGraph(root: string, files: readonly string[], paths: readonly PathMapping[] = []): ImportEdge[] {
  const own = files.filter(f => f !== root && isInside(root, f) && !relative(root, f).split(sep).includes('node_modules'))
  const known = new Set(own)
  const rel = (f: string) => relative(root, f).split(sep).join('/')
  const edges = new Map<string, ImportEdge>()
  for (const file of own) {
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch {
      // Deleted since the program was built: no edges from it.
      continue
    }
    for (const { specifier, typeOnly } of scanImports(text)) {
      const to = resolveSpecifier(specifier, file, known, paths)
      if (!to) continue
      const key = `${rel(file)}\u0000${rel(to)}`
      const had = edges.get(key)
      edges.set(key, { from: rel(file), to: rel(to), typeOnly: had ? !!had.typeOnly && typeOnly : typeOnly })
    }
  }
  return [...edges.values()]
}

/**
 * A project's `paths` made absolute: relative to `baseUrl`, else to the
 * config that declared them (`pathsBasePath`, as TypeScript 7's API reports
 * it), else to the project's config.
 */
export function pathMappings(configFile: string, options: { paths?: unknown; baseUrl?: unknown; pathsBasePath?: unknown }): PathMapping[] {
  if (!options.paths || typeof options.paths !== 'object') return []
  const base = typeof options.baseUrl === 'string'
    ? resolve(dirname(configFile), options.baseUrl)
    : typeof options.pathsBasePath === 'string' ? options.pathsBasePath : dirname(configFile)
  const out: PathMapping[] = []
  for (const [pattern, subs] of Object.entries(options.paths as Record<string, unknown>)) {
    if (!Array.isArray(subs)) continue
    out.push({ pattern, substitutions: subs.filter((s): s is string => typeof s === 'string').map(s => resolve(base, s)) })
  }
  return out
}

/** Module files of the JavaScript/TypeScript family. */
const SCRIPT = /\.[cm]?[jt]sx?$/

/** The JavaScript/TypeScript import graph (for `withImportersOfDeleted`): specifiers resolved the way bundlers and Node do. */
export const SCRIPT_GRAPH: ModuleGraph = {
  files: SCRIPT,
  graph: (root, deleted) => scanImportGraph(root, [...[...scanFileStates(root).keys()].filter(f => SCRIPT.test(f)).map(f => join(root, f)), ...deleted]),
}

/**
 * The workspace's test files (`isTest`, workspace-relative) and how many of
 * them reach one of `files` through the imports a runner sees: `importsOf`
 * gives a file's specifiers as the runner's transform leaves them (imports
 * used only as types erased). The related set a runner that relates tests by
 * imports would find, counted without running anything.
 */
export function testsReaching(root: string, files: readonly string[], isTest: (file: string) => boolean,
  importsOf: (abs: string) => readonly string[] | undefined): { related: number; total: number } {
  const scripts = [...scanFileStates(root).keys()].filter(f => SCRIPT.test(f))
  const known = new Set(scripts.map(f => join(root, f)))
  const importers = new Map<string, string[]>()
  for (const abs of known) {
    for (const specifier of importsOf(abs) ?? []) {
      const to = resolveSpecifier(specifier, abs, known)
      if (!to) continue
      const list = importers.get(to) ?? []
      list.push(abs)
      importers.set(to, list)
    }
  }
  const seen = new Set(files.map(f => join(root, f)))
  const queue = [...seen]
  while (queue.length) {
    for (const from of importers.get(queue.pop()!) ?? []) {
      if (seen.has(from)) continue
      seen.add(from)
      queue.push(from)
    }
  }
  const tests = scripts.filter(isTest)
  return { related: tests.filter(t => seen.has(join(root, t))).length, total: tests.length }
}
