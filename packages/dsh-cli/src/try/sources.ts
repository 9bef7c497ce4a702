import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, sep } from 'node:path'
import { NOT_SOURCE_DIRS } from 'dsh-common'
import { resolveImport, scanImports } from '../dev/import-graph.ts'

/** The language of a workspace, as far as the probes care. */
export type Language = 'typescript' | 'go' | 'python'

/** Workspace-relative files (forward slashes) under `root`, dependencies and outputs left out, sorted. */
export function listFiles(root: string, max = 50_000): string[] {
  const out: string[] = []
  const walk = (dir: string) => {
    let names: string[]
    try {
      names = readdirSync(dir)
    } catch {
      return // unreadable directory: not a source of probes
    }
    for (const name of names.sort()) {
      if (out.length >= max) return
      const abs = join(dir, name)
      let s
      try {
        s = statSync(abs)
      } catch {
        continue // vanished or a dangling link
      }
      if (s.isDirectory()) {
        if (!NOT_SOURCE_DIRS.has(name) && !name.startsWith('.')) walk(abs)
      } else if (s.isFile()) {
        out.push(relative(root, abs).split(sep).join('/'))
      }
    }
  }
  walk(root)
  return out
}

/** Which language the workspace is: its own config files decide, TypeScript first. */
export function detectLanguage(files: readonly string[]): Language | undefined {
  const has = (name: string) => files.includes(name)
  if (has('tsconfig.json') || (has('package.json') && files.some(f => TS_SOURCE.test(f)))) return 'typescript'
  if (has('go.mod')) return 'go'
  if (has('pyproject.toml') || has('setup.py') || has('setup.cfg') || files.some(f => f.endsWith('.py'))) return 'python'
  return undefined
}

const TS_SOURCE = /\.(?:[cm]?ts|tsx)$/
// Test files by name, or anything under a `test`, `tests` or `__tests__` directory (fp-ts: `test/Array.ts`, included by its
// vitest config): a helper there is not a source module to probe either.
const TS_TEST = /(?:\.(?:test|spec)\.[cm]?[jt]sx?$)|(?:^|\/)(?:__tests__|tests?)\//
const GO_TEST = /_test\.go$/
const PY_TEST = /(?:^|\/)(?:test_[^/]*|[^/]*_test)\.py$|(?:^|\/)tests?\/|(?:^|\/)conftest\.py$/

/** A source module and who imports it. */
export interface ModuleInfo {
  /** Workspace-relative path of the file (for Go: the package's first non-test file). */
  file: string
  /** Workspace-relative files that import it (for Go: the importing packages' files). */
  importers: string[]
  /** The importers that are test files. */
  tests: string[]
  /** Test files that import it directly or through other modules (a test of `src/index.ts` reaches what the index re-exports). */
  reachedBy: string[]
}

/** Whether a workspace-relative file is a test file in `language`. */
function isTestFile(language: Language, file: string): boolean {
  return language === 'typescript' ? TS_TEST.test(file) : language === 'go' ? GO_TEST.test(file) : PY_TEST.test(file)
}

/** Source modules of the workspace, most-imported first (ties by path). */
export function rankModules(root: string, language: Language, files: readonly string[], read = (f: string) => readFileSync(join(root, f), 'utf8')): ModuleInfo[] {
  const importers = language === 'typescript' ? tsImporters(root, files, read) : language === 'go' ? goImporters(files, read) : pyImporters(files, read)
  const infos: ModuleInfo[] = []
  for (const [file, set] of importers) {
    if (isTestFile(language, file)) continue
    const list = [...set].sort()
    infos.push({ file, importers: list, tests: list.filter(f => isTestFile(language, f)), reachedBy: testsReaching(file, importers, f => isTestFile(language, f)) })
  }
  return infos.sort((a, b) => b.importers.length - a.importers.length || a.file.localeCompare(b.file))
}

/** The test files that reach `file` through the import graph (`importers`: file → its direct importers), sorted. */
function testsReaching(file: string, importers: ReadonlyMap<string, ReadonlySet<string>>, isTest: (f: string) => boolean): string[] {
  const seen = new Set([file])
  const tests = new Set<string>()
  const queue = [file]
  for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
    for (const importer of importers.get(next) ?? []) {
      if (seen.has(importer)) continue
      seen.add(importer)
      if (isTest(importer)) tests.add(importer)
      else queue.push(importer)
    }
  }
  return [...tests].sort()
}

/** Each of `files` with its text; an unreadable file is left out (what it imports cannot be seen). */
function* readable(files: readonly string[], read: (f: string) => string): Generator<[file: string, text: string]> {
  for (const file of files) {
    let text: string
    try {
      text = read(file)
    } catch {
      continue
    }
    yield [file, text]
  }
}

function add(map: Map<string, Set<string>>, target: string, importer: string) {
  if (target === importer) return
  let set = map.get(target)
  if (!set) map.set(target, set = new Set())
  set.add(importer)
}

function tsImporters(root: string, files: readonly string[], read: (f: string) => string): Map<string, Set<string>> {
  const sources = files.filter(f => TS_SOURCE.test(f) && !f.endsWith('.d.ts'))
  const known = new Set(sources)
  const map = new Map<string, Set<string>>()
  for (const [file, text] of readable(sources, read)) {
    for (const specifier of scanImports(text)) {
      if (!specifier.startsWith('.')) continue
      const target = resolveImport(specifier, join(root, file))
      if (!target) continue
      const rel = relative(root, target).split(sep).join('/')
      if (known.has(rel)) add(map, rel, file)
    }
  }
  return map
}

function goImporters(files: readonly string[], read: (f: string) => string): Map<string, Set<string>> {
  const map = new Map<string, Set<string>>()
  let module: string | undefined
  try {
    module = /^module\s+(\S+)/m.exec(read('go.mod'))?.[1]
  } catch {
    return map
  }
  if (!module) return map
  const sources = files.filter(f => f.endsWith('.go'))
  // A package is a directory; its representative file is its first non-test file.
  const packageFile = new Map<string, string>()
  for (const f of sources) {
    const dir = dirname(f)
    if (!GO_TEST.test(f) && !packageFile.has(dir)) packageFile.set(dir, f)
  }
  const IMPORT_BLOCK = /^import\s*\(([\s\S]*?)^\)/gm
  const IMPORT_LINE = /^import\s+(?:\w+\s+)?"([^"]+)"/gm
  for (const [file, text] of readable(sources, read)) {
    const paths = [...text.matchAll(IMPORT_LINE)].map(m => m[1]!)
    for (const block of text.matchAll(IMPORT_BLOCK)) for (const m of block[1]!.matchAll(/"([^"]+)"/g)) paths.push(m[1]!)
    for (const path of paths) {
      if (path !== module && !path.startsWith(`${module}/`)) continue
      const dir = path === module ? '.' : path.slice(module.length + 1)
      const target = packageFile.get(dir)
      if (target && dirname(file) !== dir) add(map, target, file)
    }
  }
  // A file of a package is imported by whoever imports the package, and used by the package's own
  // tests that name one of its exported functions (a one-package module has no other importers).
  const byFile = new Map<string, Set<string>>()
  for (const [f, text] of readable(sources.filter(f => !GO_TEST.test(f)), read)) {
    const dir = dirname(f)
    const set = new Set(map.get(packageFile.get(dir) ?? '') ?? [])
    const names = [...text.matchAll(/^func (?:\([^)]*\) )?([A-Z]\w*)\(/gm)].map(m => m[1]!)
    if (!names.length) continue
    const named = new RegExp(`\\b(?:${names.join('|')})\\(`)
    for (const [t, test] of readable(sources.filter(t => GO_TEST.test(t) && dirname(t) === dir), read)) if (named.test(test)) set.add(t)
    if (set.size) byFile.set(f, set)
  }
  return byFile
}

function pyImporters(files: readonly string[], read: (f: string) => string): Map<string, Set<string>> {
  const sources = files.filter(f => f.endsWith('.py'))
  // Dotted module names, from the workspace root and from a `src/` layout.
  const byName = new Map<string, string>()
  for (const f of sources) {
    for (const base of ['', 'src/']) {
      if (!f.startsWith(base)) continue
      const name = f.slice(base.length).replace(/\.py$/, '').replace(/\/__init__$/, '').split('/').join('.')
      if (name && !byName.has(name)) byName.set(name, f)
    }
  }
  const map = new Map<string, Set<string>>()
  const FROM = /^\s*from\s+(\.*[\w.]*)\s+import\s+([^\n#]+)/gm
  const IMPORT = /^\s*import\s+([\w.]+(?:\s*,\s*[\w.]+)*)/gm
  for (const [file, text] of readable(sources, read)) {
    const own = file.replace(/^src\//, '').replace(/\.py$/, '').split('/')
    const pkg = file.endsWith('/__init__.py') ? own.slice(0, -1) : own.slice(0, -1)
    const names: string[] = []
    for (const m of text.matchAll(FROM)) {
      let base = m[1]!
      if (base.startsWith('.')) {
        const dots = /^\.+/.exec(base)![0].length
        const up = pkg.slice(0, pkg.length - (dots - 1))
        base = [...up, base.slice(dots)].filter(Boolean).join('.')
      }
      names.push(base)
      for (const item of m[2]!.replace(/[()]/g, '').split(',')) {
        const word = item.trim().split(/\s+/)[0]
        if (word) names.push(`${base}.${word}`)
      }
    }
    for (const m of text.matchAll(IMPORT)) for (const n of m[1]!.split(',')) names.push(n.trim())
    for (const name of names) {
      const target = byName.get(name)
      if (target) add(map, target, file)
    }
  }
  return map
}
