import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs'
import { createRequire, isBuiltin } from 'node:module'
import { dirname, extname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isInside } from 'dsh-common'

/**
 * The static import graph of one plugin's sources inside its scope (its
 * package directory): which files the entry file reaches, and who imports
 * whom. Built by reading the sources, not from the module cache, so it is
 * the same whatever was imported before `dsh dev` started.
 */
export interface ImportGraph {
  entry: string
  scope: string
  /** Every file reached from `entry` inside `scope`, `entry` included. */
  files: Set<string>
  /** file → the files (inside the graph) that import it. */
  importers: Map<string, Set<string>>
}

// `from '…'`, `import '…'`, `import('…')` — type-only imports included: over-
// approximating the graph costs a needless re-evaluation, missing an edge
// would serve a stale module.
const SPECIFIER = /(?:\bfrom|\bimport)\s*\(?\s*(['"])([^'"\n]+)\1/g

/** Module specifiers a JS/TS source mentions in import/export statements and literal dynamic imports. */
export function scanImports(source: string): string[] {
  const found = new Set<string>()
  for (const match of source.matchAll(SPECIFIER)) found.add(match[2]!)
  return [...found]
}

const EXTENSIONS = ['.ts', '.tsx', '.mts', '.cts', '.js', '.mjs', '.cjs', '.jsx']
const JS_TO_TS: Record<string, string[]> = { '.js': ['.ts', '.tsx'], '.jsx': ['.tsx'], '.mjs': ['.mts'], '.cjs': ['.cts'] }

function realFile(path: string): string | undefined {
  try {
    return statSync(path).isFile() ? realpathSync(path) : undefined
  } catch {
    return undefined // ENOENT / ENOTDIR: not this candidate
  }
}

function resolvePath(base: string): string | undefined {
  const direct = realFile(base)
  if (direct) return direct
  const ext = extname(base)
  for (const alt of JS_TO_TS[ext] ?? []) {
    const found = realFile(base.slice(0, -ext.length) + alt)
    if (found) return found
  }
  for (const candidate of [...EXTENSIONS.map(e => base + e), ...EXTENSIONS.map(e => join(base, 'index' + e))]) {
    const found = realFile(candidate)
    if (found) return found
  }
  return undefined
}

/**
 * Where `specifier`, imported from `from`, lives on disk — relative and
 * absolute paths, `file:` URLs, and bare names (a package importing itself
 * by name); undefined for builtins and anything unresolvable.
 */
export function resolveImport(specifier: string, from: string): string | undefined {
  const bare = specifier.replace(/[?#].*$/, '')
  if (!bare || isBuiltin(bare) || /^(?:data|node|https?):/.test(bare)) return undefined
  if (bare.startsWith('file:')) return resolvePath(fileURLToPath(bare))
  if (bare.startsWith('.') || bare.startsWith('/')) return resolvePath(resolve(dirname(from), bare))
  try {
    return realFile(createRequire(from).resolve(bare))
  } catch {
    return undefined // not installed or not requireable: not part of this scope anyway
  }
}

/**
 * A relative import of a source file that does not exist (deleted, or not
 * written yet): still a node of the graph, so it is watched and its return
 * reloads its importers.
 */
function missingSource(specifier: string, from: string): string | undefined {
  const bare = specifier.replace(/[?#].*$/, '')
  if (!bare.startsWith('.') || !EXTENSIONS.includes(extname(bare))) return undefined
  return resolve(realpathSync(dirname(from)), bare)
}

/** The nearest directory at or above `file` holding a package.json, else the file's own directory. */
export function scopeOf(file: string): string {
  let dir = dirname(file)
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir
    const parent = dirname(dir)
    if (parent === dir) return dirname(file)
    dir = parent
  }
}

/**
 * Build the graph reachable from `entry` without leaving `scope` (and never
 * entering a `node_modules` directory inside it).
 * @param read - source reader (tests pass their own); an unreadable file is a leaf.
 */
export function buildImportGraph(entry: string, scope: string, read: (file: string) => string = f => readFileSync(f, 'utf8')): ImportGraph {
  const files = new Set<string>([entry])
  const importers = new Map<string, Set<string>>()
  const queue = [entry]
  while (queue.length) {
    const file = queue.pop()!
    let source: string
    try {
      source = read(file)
    } catch {
      continue // deleted mid-edit: the next save rebuilds the graph
    }
    for (const specifier of scanImports(source)) {
      const target = resolveImport(specifier, file) ?? missingSource(specifier, file)
      if (!target || !isInside(scope, target) || /[\\/]node_modules[\\/]/.test(target.slice(scope.length))) continue
      let set = importers.get(target)
      if (!set) importers.set(target, set = new Set())
      set.add(file)
      if (!files.has(target)) {
        files.add(target)
        queue.push(target)
      }
    }
  }
  return { entry, scope, files, importers }
}

/**
 * The files that must get a new version so `entry` re-imports `changed`:
 * the changed files in the graph plus every file on an import path from
 * them up to the entry (their importers, transitively).
 */
export function staleFiles(graph: ImportGraph, changed: Iterable<string>): Set<string> {
  const stale = new Set<string>()
  const queue = [...changed].filter(f => graph.files.has(f))
  while (queue.length) {
    const file = queue.pop()!
    if (stale.has(file)) continue
    stale.add(file)
    for (const importer of graph.importers.get(file) ?? []) queue.push(importer)
  }
  return stale
}
