import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, relative, sep } from 'node:path'
import type { Change, CheckIO, ImpactSource, ModuleGraph } from '../../types.ts'
import { findImporters, type ImpactList, type ImportEdge } from '../../impact.ts'
import { readPytestConfig, sourceRoots } from './pytest-config.ts'
import { sourceFiles } from '../source-files.ts'
import { NOT_SOURCE_DIRS } from 'dsh-common'

/** Bound on the files scanned, so a huge tree cannot stall a write. */
const MAX_FILES = 20_000

/** `import a.b, c as d` and `from .x import y, (z)` at the start of a line. */
const IMPORT = /^[ \t]*import[ \t]+([\w., \t]+)/gm
const FROM = /^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]*(?:\(([^)]*)\)|([^\n#;]*))/gm

/** Workspace-relative `.py` files below `root` (minus virtualenvs, caches, hidden directories). */
export function pythonFiles(root: string): string[] {
  return sourceFiles(root, '.py', NOT_SOURCE_DIRS, MAX_FILES)
}

/**
 * Resolve a dotted module to a workspace file, as Python would from the
 * workspace root or a `src/` layout: `a/b.py`, else the package `a/b/__init__.py`.
 */
function resolveModule(known: Set<string>, bases: readonly string[], dotted: string): string | undefined {
  const path = dotted.split('.').filter(Boolean).join('/')
  for (const base of bases) {
    const prefix = base === '.' ? '' : `${base}/`
    for (const candidate of [`${prefix}${path}.py`, `${prefix}${path}/__init__.py`]) if (known.has(candidate)) return candidate
  }
  return undefined
}

/** Where absolute imports resolve from: the workspace root, and `src/` when the workspace has one. */
function importRoots(known: Iterable<string>): string[] {
  for (const k of known) if (k.startsWith('src/')) return ['.', 'src']
  return ['.']
}

/** The import edges of one file's text. */
export function pythonImports(file: string, text: string, known: Set<string>, roots: readonly string[] = importRoots(known)): ImportEdge[] {
  const targets = new Set<string>()
  for (const m of text.matchAll(IMPORT)) {
    for (const part of m[1]!.split(',')) {
      const name = part.trim().split(/\s+/)[0]
      if (!name) continue
      // `import a.b.c` loads a, a.b and a.b.c.
      const parts = name.split('.')
      for (let i = parts.length; i > 0; i--) {
        const hit = resolveModule(known, roots, parts.slice(0, i).join('.'))
        if (hit) { targets.add(hit); break }
      }
    }
  }
  for (const m of text.matchAll(FROM)) {
    const dots = m[1]!.length
    const module = m[2]!
    const names = (m[3] ?? m[4] ?? '').split(',').map(n => n.trim().split(/\s+/)[0]!).filter(n => /^\w+$/.test(n))
    let bases: readonly string[] = roots
    if (dots) {
      let base = dirname(file)
      for (let i = 1; i < dots; i++) base = dirname(base)
      bases = [base]
    }
    const pkg = module ? resolveModule(known, bases, module) : undefined
    // `from pkg import sub` may name a submodule; otherwise the module itself.
    let submodule = false
    for (const name of names) {
      const hit = resolveModule(known, bases, module ? `${module}.${name}` : name)
      if (hit) { targets.add(hit); submodule = true }
    }
    if (pkg && (!submodule || !pkg.endsWith('__init__.py'))) targets.add(pkg)
  }
  targets.delete(file)
  return [...targets].map(to => ({ from: file, to }))
}

/** Ancestor directories of a workspace-relative file, nearest first (`.` excluded). */
function ancestors(file: string): string[] {
  const out: string[] = []
  for (let d = dirname(file); d !== '.' && d !== '/' && d !== ''; d = dirname(d)) out.push(d)
  return out
}

/**
 * Where a file's own absolute imports also resolve from: the first directory
 * up from it that is not a package (no `__init__.py`) — what pytest's
 * default import mode and a script run put on `sys.path`.
 */
function basedir(file: string, known: Set<string>): string {
  for (const d of ancestors(file)) if (!known.has(`${d}/__init__.py`)) return d
  return '.'
}

/**
 * The import graph of the workspace's Python files: every `import` /
 * `from … import` line resolved (from `roots`, and from each file's own
 * base directory), plus the packages a module's import runs first —
 * `pkg/sub/mod.py` imports `pkg/sub/__init__.py` and `pkg/__init__.py`.
 */
export function pythonGraph(root: string, files: readonly string[], roots: readonly string[]): ImportEdge[] {
  const known = new Set(files)
  const edges: ImportEdge[] = []
  for (const f of files) {
    const abs = join(root, f)
    if (!existsSync(abs)) continue
    const base = basedir(f, known)
    edges.push(...pythonImports(f, readFileSync(abs, 'utf8'), known, roots.includes(base) ? roots : [...roots, base]))
    for (const d of ancestors(f)) {
      const init = `${d}/__init__.py`
      if (!known.has(init)) break
      if (init !== f) edges.push({ from: f, to: init })
    }
  }
  return edges
}

/**
 * The import graph with `deleted` (workspace-relative `.py` files no longer
 * on disk) put back as modules the remaining files' imports resolve to — as
 * they resolved in the accepted state. A deleted file has no edges of its
 * own (its text is gone); what imported it does. Resolved from the
 * project's source roots (pytest's `pythonpath`, setuptools' package
 * directories, `src/`), `src/` included when a deleted file was there.
 */
function pythonGraphWithDeleted(root: string, deleted: readonly string[]): ImportEdge[] {
  const files = [...new Set([...pythonFiles(root), ...deleted])]
  const roots = new Set([...sourceRoots(root, readPytestConfig(root)), ...importRoots(files)])
  return pythonGraph(root, files, [...roots])
}

/**
 * Python change impact: files that import the edited module, found by
 * reading the `import` / `from … import` lines of the workspace's `.py`
 * files and resolving them from the root (or `src/`), relative imports
 * included; a package's `__init__.py` is imported by its modules.
 */
export class PythonImpact implements ImpactSource {
  constructor(private readonly root: string) {}

  async importers(change: Change, max: number, _io: CheckIO): Promise<ImpactList | undefined> {
    const targets = change.files.filter(f => f.endsWith('.py'))
    if (!targets.length) return undefined
    const files = pythonFiles(this.root)
    return findImporters(pythonGraph(this.root, files, importRoots(files)), targets, max)
  }
}

/**
 * The Python import graph with deleted modules put back (`deleted.ts`): `import` / `from … import` lines,
 * relative imports and a package's `__init__.py` included.
 */
export const PYTHON_GRAPH: ModuleGraph = {
  files: /\.py$/,
  graph: (root, deleted) => pythonGraphWithDeleted(root, deleted.map(p => relative(root, p).split(sep).join('/'))),
}
