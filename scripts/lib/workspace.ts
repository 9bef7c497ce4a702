import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { toPosixRelative } from 'dsh-common'

/** A package under `<root>/packages/*` that has a package.json. */
export interface WorkspacePackage {
  name: string
  /** Absolute directory. */
  dir: string
  /** Directory relative to the root, POSIX separators. */
  rel: string
  /** Import specifier (`dsh-llm`, `dsh-llm/scripted`) → absolute entry file. */
  entries: Map<string, string>
}

/** The repository this script lives in (scripts/lib/ → ../..). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')

export function relPath(root: string, abs: string): string {
  return toPosixRelative(root, abs)
}

export function listPackages(root: string): WorkspacePackage[] {
  const base = join(root, 'packages')
  if (!existsSync(base)) return []
  const packages: WorkspacePackage[] = []
  for (const entry of readdirSync(base, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const dir = join(base, entry.name)
    if (!entry.isDirectory() && !(entry.isSymbolicLink() && statSync(dir, { throwIfNoEntry: false })?.isDirectory())) continue
    const manifestPath = join(dir, 'package.json')
    if (!existsSync(manifestPath)) continue
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Manifest
    const name = typeof manifest.name === 'string' ? manifest.name : entry.name
    packages.push({ name, dir, rel: relPath(root, dir), entries: packageEntries(name, dir, manifest) })
  }
  return packages
}

/** The Markdown files whose ```ts blocks are type-checked: README.md, docs/**\/*.md, packages/*\/README.md. */
export function listDocFiles(root: string): string[] {
  const files: string[] = []
  if (existsSync(join(root, 'README.md'))) files.push(join(root, 'README.md'))
  const docs = join(root, 'docs')
  if (existsSync(docs)) files.push(...walk(docs, name => name.endsWith('.md')))
  for (const pkg of listPackages(root)) {
    const readme = join(pkg.dir, 'README.md')
    if (existsSync(readme)) files.push(readme)
  }
  return files
}

/** TypeScript sources under a directory (no node_modules, no declaration files' maps). */
export function listSourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return []
  return walk(dir, name => /\.(m|c)?tsx?$/.test(name))
}

/** Nearest directory at or above `from` that holds a node_modules directory. */
export function findModulesRoot(from: string): string | undefined {
  for (let dir = resolve(from); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'node_modules'))) return dir
    if (dirname(dir) === dir) return undefined
  }
}

interface Manifest {
  name?: unknown
  main?: unknown
  exports?: unknown
}

function packageEntries(name: string, dir: string, manifest: Manifest): Map<string, string> {
  const entries = new Map<string, string>()
  const exportsField = manifest.exports
  if (typeof exportsField === 'string') {
    entries.set(name, resolve(dir, exportsField))
  } else if (exportsField && typeof exportsField === 'object') {
    const map = exportsField as Record<string, unknown>
    const subpathKeys = Object.keys(map).filter(k => k.startsWith('.'))
    if (subpathKeys.length === 0) {
      const target = pickTarget(map)
      if (target) entries.set(name, resolve(dir, target))
    }
    for (const key of subpathKeys) {
      if (key.includes('*')) continue
      const target = pickTarget(map[key])
      if (!target) continue
      entries.set(key === '.' ? name : `${name}/${key.replace(/^\.\//, '')}`, resolve(dir, target))
    }
  } else if (typeof manifest.main === 'string') {
    entries.set(name, resolve(dir, manifest.main))
  }
  return entries
}

function pickTarget(value: unknown): string | undefined {
  if (typeof value === 'string') return value
  if (value && typeof value === 'object') {
    const conditions = value as Record<string, unknown>
    for (const key of ['import', 'default', 'types', 'node']) {
      const target = pickTarget(conditions[key])
      if (target) return target
    }
  }
  return undefined
}

function walk(dir: string, keep: (name: string) => boolean): string[] {
  const out: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue
    const full = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...walk(full, keep))
    else if (entry.isFile() && keep(entry.name)) out.push(full)
    else if (entry.isSymbolicLink() && statSync(full, { throwIfNoEntry: false })?.isFile() && keep(entry.name)) out.push(full)
  }
  return out
}
