/**
 * What pytest itself would collect, read from the project's own pytest
 * configuration (the same files, in pytest's order of precedence), and where
 * the project's modules import from. Read from the files, not by asking
 * pytest: asking means importing every test module, on every write.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, posix } from 'node:path'

export interface PytestConfig {
  /** Workspace-relative file the settings came from (absent: none, pytest's defaults). */
  file?: string
  /** pytest's rootdir, workspace-relative (`.`): test ids in reports are relative to it. */
  rootdir: string
  /** Directories (or globs) collected when pytest runs without arguments, workspace-relative; empty: the rootdir. */
  testpaths: string[]
  /** Test file globs (`python_files`). */
  pythonFiles: string[]
  /** Directory globs not recursed into (`norecursedirs`). */
  norecursedirs: string[]
  /** Extra import roots (`pythonpath`), workspace-relative. */
  pythonpath: string[]
}

const DEFAULT_PYTHON_FILES = ['test_*.py', '*_test.py']
const DEFAULT_NORECURSE = ['*.egg', '.*', '_darcs', 'build', 'CVS', 'dist', 'node_modules', 'venv', '{arch}']

/** The key/value lines of one INI section (continuation lines joined), or undefined when the section is absent. */
function iniSection(text: string, section: string): Map<string, string> | undefined {
  let inside = false
  let found = false
  let last: string | undefined
  const values = new Map<string, string>()
  for (const raw of text.split(/\r?\n/)) {
    const header = /^\s*\[([^\]]+)\]\s*$/.exec(raw)
    if (header) {
      inside = header[1]!.trim() === section
      found ||= inside
      last = undefined
      continue
    }
    if (!inside || /^\s*[#;]/.test(raw) || !raw.trim()) continue
    if (/^\s/.test(raw) && last) {
      values.set(last, `${values.get(last)} ${raw.trim()}`)
      continue
    }
    const kv = /^([\w.-]+)\s*[=:]\s*(.*)$/.exec(raw.trim())
    if (kv) values.set(last = kv[1]!, kv[2]!.trim())
  }
  return found ? values : undefined
}

/** The keys of one TOML table as raw value text (multi-line arrays joined), or undefined when the table is absent. */
function tomlTable(text: string, table: string): Map<string, string> | undefined {
  let inside = false
  let found = false
  let open: { key: string; value: string } | undefined
  const values = new Map<string, string>()
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/\s+#.*$/, '')
    if (open) {
      open.value += ` ${line.trim()}`
      if (/\]\s*$/.test(line)) {
        values.set(open.key, open.value)
        open = undefined
      }
      continue
    }
    const header = /^\s*\[([^\]]+)\]\s*$/.exec(line)
    if (header) {
      inside = header[1]!.trim() === table
      found ||= inside
      continue
    }
    if (!inside) continue
    const kv = /^\s*([\w.-]+|"[^"]*")\s*=\s*(.*)$/.exec(line)
    if (!kv) continue
    const key = kv[1]!.replace(/"/g, '')
    const value = kv[2]!.trim()
    if (value.startsWith('[') && !/\]\s*$/.test(value)) open = { key, value }
    else values.set(key, value)
  }
  return found ? values : undefined
}

/** A list setting: a TOML array of strings, a TOML string, or INI's whitespace-separated words. */
function words(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined
  const v = value.trim()
  if (v.startsWith('[')) return [...v.matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'/g)].map(m => m[1] ?? m[2]!)
  if (/^["']/.test(v)) return v.slice(1, -1).split(/\s+/).filter(Boolean)
  return v.split(/\s+/).filter(Boolean)
}

/** Settings of the first configuration file pytest would use, in its order. */
function findSettings(root: string): { file: string; values: Map<string, string> } | undefined {
  const read = (f: string) => (existsSync(join(root, f)) ? readFileSync(join(root, f), 'utf8') : undefined)
  const ini = read('pytest.ini') ?? read('.pytest.ini')
  if (ini !== undefined) return { file: existsSync(join(root, 'pytest.ini')) ? 'pytest.ini' : '.pytest.ini', values: iniSection(ini, 'pytest') ?? new Map() }
  const pyproject = read('pyproject.toml')
  const toml = pyproject === undefined ? undefined : tomlTable(pyproject, 'tool.pytest.ini_options') ?? tomlTable(pyproject, 'tool.pytest')
  if (toml) return { file: 'pyproject.toml', values: toml }
  const tox = read('tox.ini')
  const toxValues = tox === undefined ? undefined : iniSection(tox, 'pytest')
  if (toxValues) return { file: 'tox.ini', values: toxValues }
  const cfg = read('setup.cfg')
  const cfgValues = cfg === undefined ? undefined : iniSection(cfg, 'tool:pytest')
  if (cfgValues) return { file: 'setup.cfg', values: cfgValues }
  return undefined
}

/** `a/./b/` → `a/b`; `.` for the root. */
function normal(rel: string): string {
  const n = posix.normalize(rel.replace(/\\/g, '/')).replace(/\/+$/, '')
  return n === '' ? '.' : n
}

/** The workspace's pytest settings (pytest's defaults where it sets none). */
export function readPytestConfig(root: string): PytestConfig {
  const found = findSettings(root)
  const v = found?.values ?? new Map<string, string>()
  const addopts = words(v.get('addopts')) ?? []
  const rootOpt = addopts.map((a, i) => (a.startsWith('--rootdir=') ? a.slice(10) : a === '--rootdir' ? addopts[i + 1] : undefined)).find(Boolean)
  const rootdir = normal(rootOpt ?? '.')
  const fromRoot = (p: string) => normal(rootdir === '.' ? p : `${rootdir}/${p}`)
  return {
    ...(found ? { file: found.file } : {}),
    rootdir,
    testpaths: (words(v.get('testpaths')) ?? []).map(fromRoot),
    pythonFiles: words(v.get('python_files')) ?? DEFAULT_PYTHON_FILES,
    norecursedirs: words(v.get('norecursedirs')) ?? DEFAULT_NORECURSE,
    pythonpath: (words(v.get('pythonpath')) ?? []).map(fromRoot),
  }
}

/** fnmatch-style glob (`*`, `?`, `[seq]`) as an anchored regular expression. */
export function globRegExp(glob: string): RegExp {
  let out = ''
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!
    if (c === '*') out += '.*'
    else if (c === '?') out += '.'
    else if (c === '[') {
      const close = glob.indexOf(']', i + 1)
      if (close < 0) out += '\\['
      else {
        const body = glob.slice(i + 1, close)
        out += `[${body.startsWith('!') ? `^${body.slice(1)}` : body}]`
        i = close
      }
    } else out += c.replace(/[.+^${}()|\\/]/g, '\\$&')
  }
  return new RegExp(`^${out}$`)
}

/**
 * Where the project's own modules import from (workspace-relative): the
 * root, `pythonpath`, the packaging config's source directory
 * (`[tool.setuptools.packages.find] where`, setup.cfg `package_dir = =src`),
 * and `src/` when it exists.
 */
export function sourceRoots(root: string, config: PytestConfig): string[] {
  const roots = new Set<string>(['.', ...config.pythonpath])
  const pyproject = existsSync(join(root, 'pyproject.toml')) ? readFileSync(join(root, 'pyproject.toml'), 'utf8') : ''
  for (const w of words(tomlTable(pyproject, 'tool.setuptools.packages.find')?.get('where')) ?? []) roots.add(normal(w))
  const pkgDir = tomlTable(pyproject, 'tool.setuptools.package-dir')?.get('""') ?? tomlTable(pyproject, 'tool.setuptools.package-dir')?.get('')
  if (pkgDir) roots.add(normal(pkgDir.replace(/["']/g, '')))
  const cfg = existsSync(join(root, 'setup.cfg')) ? readFileSync(join(root, 'setup.cfg'), 'utf8') : ''
  const cfgDir = /=\s*(\S+)/.exec(iniSection(cfg, 'options')?.get('package_dir') ?? '')
  if (cfgDir) roots.add(normal(cfgDir[1]!))
  try {
    if (readdirSync(join(root, 'src')).length) roots.add('src')
  } catch {
    // No src/ directory.
  }
  return [...roots]
}
