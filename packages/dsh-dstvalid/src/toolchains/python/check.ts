import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, isAbsolute, join, relative } from 'node:path'
import { decodeXmlText, NOT_SOURCE_DIRS } from 'dsh-common'
import { FILE_LEVEL, testName } from '../../accepted.ts'
import { diagnostic, failingTest } from '../../problems.ts'
import { checkEnv, runRecorded, whyNotJudged } from '../../run.ts'
import { findImporters } from '../../impact.ts'
import { PYTHON_GRAPH, pythonFiles, pythonGraph } from './impact.ts'
import type { Change, Check, CheckIO, Confirmation, Measurement, Problem, TestSource } from '../../types.ts'
import { globRegExp, readPytestConfig, sourceRoots, type PytestConfig } from './pytest-config.ts'
import { pySourceSeer, pyUnchanged } from './comments.ts'

/** Compiles files in memory (no .pyc written) and prints one JSON line per syntax error. */
const COMPILE_SCRIPT = `
import sys, os, json
files = sys.argv[1:]
if not files:
    for d, dirs, names in os.walk('.'):
        dirs[:] = [x for x in dirs if not x.startswith('.') and x not in ${JSON.stringify([...NOT_SOURCE_DIRS])}]
        files += [os.path.join(d, n) for n in names if n.endswith('.py')]
found = False
for f in files:
    if not os.path.exists(f):
        continue
    try:
        compile(open(f, 'rb').read(), f, 'exec', dont_inherit=True)
    except (SyntaxError, ValueError) as e:
        found = True
        print(json.dumps({'file': os.path.relpath(f).replace(os.sep, '/'), 'line': getattr(e, 'lineno', None), 'type': type(e).__name__, 'msg': getattr(e, 'msg', str(e))}))
sys.exit(1 if found else 0)
`

/** The interpreter the Python checks run, and why that one. */
export interface PythonInterpreter {
  /** A command (`python3`) or an absolute path. */
  command: string
  /** `Config python`, `the project's virtualenv .venv`, `VIRTUAL_ENV`, `python3 on PATH`. */
  source: string
}

/**
 * The project's interpreter: the configured one, else the workspace's
 * virtualenv (`.venv`, `venv`), else an active `VIRTUAL_ENV`, else `python3`
 * from PATH (under npx/pnpm that may be another installation than the project's).
 */
export function findPython(root: string, configured = '', env: NodeJS.ProcessEnv = process.env): PythonInterpreter {
  if (configured) return { command: isAbsolute(configured) || !configured.includes('/') ? configured : join(root, configured), source: 'Config python' }
  const bin = process.platform === 'win32' ? ['Scripts', 'python.exe'] : ['bin', 'python']
  for (const dir of ['.venv', 'venv']) {
    const exe = join(root, dir, ...bin)
    if (existsSync(exe)) return { command: exe, source: `the project's virtualenv ${dir}` }
  }
  if (env.VIRTUAL_ENV && existsSync(join(env.VIRTUAL_ENV, ...bin))) return { command: join(env.VIRTUAL_ENV, ...bin), source: 'the active VIRTUAL_ENV' }
  return { command: 'python3', source: 'python3 on PATH (no virtualenv in the workspace; set Config python to choose)' }
}

/** Says once, in the first notice of the Python checks, which interpreter runs. */
export class PythonAnnouncer {
  private said = false
  constructor(readonly python: PythonInterpreter) {}
  announce(io: CheckIO): void {
    if (this.said) return
    this.said = true
    io.notice('info', `python: running ${this.python.command} (${this.python.source})`)
  }
}

/** Python `compile` check: every file at the baseline, the changed `.py` files after a write. Exit 1 when it found a syntax error. */
export class PythonCompileCheck implements Check {
  readonly name = 'compile'
  readonly verb = 'compiling'
  private readonly announcer: PythonAnnouncer

  constructor(private readonly root: string, python: PythonInterpreter | PythonAnnouncer = { command: 'python3', source: 'python3 on PATH' }) {
    this.announcer = python instanceof PythonAnnouncer ? python : new PythonAnnouncer(python)
  }

  /** A write that changed only comments and blank lines in `.py` files: nothing `compile` reads changed. */
  unaffectedBy(change: Change): Promise<string | undefined> {
    return pyUnchanged(change)
  }

  async measure(change: Change | undefined, io: CheckIO): Promise<Measurement> {
    const files = change?.files.filter(f => f.endsWith('.py'))
    if (files && !files.length) return { status: 'ok', problems: [], scope: [] }
    this.announcer.announce(io)
    const r = await runRecorded(this.name, [this.announcer.python.command, '-c', COMPILE_SCRIPT, ...(files ?? [])], this.root, io,
      { passed: x => x.exitCode === 0 })
    if (r.outcome === 'timeout' || r.outcome === 'error' || (r.exitCode !== 0 && !r.stdout.includes('{'))) return { status: r.outcome === 'timeout' ? 'timeout' : 'error', problems: [], scope: [], error: whyNotJudged('python compile', r, io.timeoutMs) }
    const problems = r.stdout.split('\n').filter(l => l.startsWith('{')).map(l => {
      const e = JSON.parse(l) as { file: string; line: number | null; type: string; msg: string }
      return diagnostic(this.name, e.file, e.line ?? undefined, e.type, e.msg)
    })
    return { status: 'ok', problems, scope: files ?? 'all' }
  }
}

function attr(tag: string, name: string): string | undefined {
  const m = new RegExp(`\\s${name}="([^"]*)"`).exec(tag)
  return m ? decodeXml(m[1]!) : undefined
}

/** One line of problem text: every XML reference and CDATA decoded (dsh-common), line breaks as spaces. */
function decodeXml(text: string): string {
  return decodeXmlText(text).replace(/\r?\n/g, ' ')
}

/** The first non-empty line of an element's text (a failure without a `message`). */
function firstLine(body: string): string | undefined {
  return decodeXmlText(body).split('\n').map(l => l.trim()).find(Boolean)
}

/**
 * The cause of a collection error from its report body: the last `E   …`
 * line that names an exception (`ImportError: cannot import name 'x' from 'pkg' (pkg/__init__.py)`),
 * with the workspace's absolute path taken out.
 */
function collectionCause(root: string, body: string): string | undefined {
  const lines = decodeXmlText(body).split('\n').filter(l => l.startsWith('E ')).map(l => l.slice(1).trim()).filter(Boolean)
  const named = [...lines].reverse().find(l => /^[\w.]+(Error|Exception|Exit|Interrupt|Warning)\b|^[\w.]+: /.test(l)) ?? lines.at(-1)
  return named?.split(`${root}/`).join('')
}

/** `tests.test_calc.TestX` → `tests/test_calc.py` + `TestX` (the longest prefix that is a file). */
function splitClassname(root: string, classname: string): { file: string; rest: string[] } {
  const parts = classname.split('.')
  for (let i = parts.length; i > 0; i--) {
    const file = `${parts.slice(0, i).join('/')}.py`
    if (existsSync(join(root, file))) return { file, rest: parts.slice(i) }
  }
  return { file: `${parts.join('/')}.py`, rest: [] }
}

/** Parse a pytest JUnit XML report into failing tests (and passing ids). */
export function parseJunit(check: string, root: string, xml: string): Measurement {
  const problems: Problem[] = []
  const passed: { key: string; file: string }[] = []
  const skipped: { key: string; file: string }[] = []
  const scope = new Set<string>()
  for (const m of xml.matchAll(/<testcase\b([^>]*?)(?:\/>|>([\s\S]*?)<\/testcase>)/g)) {
    const head = m[1]!
    const body = m[2] ?? ''
    const classname = attr(head, 'classname') ?? ''
    const name = attr(head, 'name') ?? ''
    if (!classname) {
      // A collection error: pytest names the module as the test.
      const { file } = splitClassname(root, name)
      scope.add(file)
      const error = /(<error\b[^>]*?)(?:\/>|>([\s\S]*?)<\/error>)/.exec(body)
      const why = collectionCause(root, error?.[2] ?? '') ?? attr(error?.[1] ?? '', 'message') ?? 'collection failed'
      problems.push(failingTest(check, `${file}${FILE_LEVEL}`, file, undefined, `test file failed to load: ${why}`))
      continue
    }
    const { file, rest } = splitClassname(root, classname)
    scope.add(file)
    const key = [file, ...rest, name].join('::')
    const failure = /(<(failure|error)\b[^>]*?)(?:\/>|>([\s\S]*?)<\/\2>)/.exec(body)
    // pytest quotes absolute paths (a setup error's `file /abs/tests/x.py, line 4`): keep them workspace-relative.
    if (failure) problems.push(failingTest(check, key, file, undefined,
      `${[...rest, name].join('::')} — ${(attr(failure[1]!, 'message') ?? firstLine(failure[3] ?? '') ?? failure[2]!).split(`${root}/`).join('')}`))
    else if (/<skipped\b/.test(body)) skipped.push({ key, file })
    else passed.push({ key, file })
  }
  return { status: 'ok', problems, passed, skipped, scope: [...scope] }
}

/**
 * pytest through its JUnit XML. After a write, only the test files pytest
 * would collect (its own `testpaths`, `python_files`, `norecursedirs`) whose
 * import closure reaches a changed file — `from pkg import mod`, a package's
 * `__init__.py`, modules reached through other modules — plus every test
 * under a changed (or reached) `conftest.py`, and changed test files. A
 * change to the pytest configuration itself runs the whole suite. Other test
 * files keep running when one fails to load (`--continue-on-collection-errors`).
 */
export class PytestCheck implements Check {
  readonly name = 'test'
  readonly verb = 'testing'
  private readonly announcer: PythonAnnouncer

  constructor(private readonly root: string, private readonly mode: 'related' | 'all', private readonly extraArgs: string[] = [],
    python: PythonInterpreter | PythonAnnouncer = { command: 'python3', source: 'python3 on PATH' }) {
    this.announcer = python instanceof PythonAnnouncer ? python : new PythonAnnouncer(python)
  }

  /** A deleted or moved module selects the tests of what imported it (see {@link Check.moduleGraph}). */
  readonly moduleGraph = PYTHON_GRAPH

  /**
   * A write that changed only comments and blank lines in `.py` files, in a
   * project whose code neither reads Python source as text nor looks at line
   * numbers (which a comment shifts): no test can report otherwise.
   */
  async unaffectedBy(change: Change): Promise<string | undefined> {
    const why = await pyUnchanged(change)
    return why && !pySourceSeer(this.root) ? why : undefined
  }

  /** Related tests: the accepted state is measured per write (see {@link Check.lazyBaseline}). */
  get lazyBaseline(): boolean {
    return this.mode === 'related'
  }

  async measure(change: Change | undefined, io: CheckIO): Promise<Measurement> {
    const config = readPytestConfig(this.root)
    if (!change || this.mode === 'all' || (config.file && change.files.includes(config.file))) return this.run([], io, config)
    const { targets, files } = this.relatedTargets(change.files, config)
    // A test file the write deleted: its tests no longer run (on purpose, since the write removed them).
    const fileRes = config.pythonFiles.map(globRegExp)
    const deleted = change.files.filter((f, i) => f.endsWith('.py') && fileRes.some(r => r.test(basename(f))) && !existsSync(change.paths[i]!))
    if (!targets.length) return { status: 'ok', problems: [], passed: [], scope: deleted }
    const m = await this.run(targets, io, config, { covers: files })
    if (m.status !== 'ok' || m.scope === 'all') return m
    const scope = [...new Set([...m.scope, ...files, ...deleted])]
    const suspect = scope.filter(file => this.declaredButNotRun(file, m, change))
    return { ...m, scope, ...(suspect.length ? { suspect } : {}) }
  }

  /** Scope entries are test files; a change reaches them only through Python modules (a fixture selects none). */
  inImportGraph(entry: string): boolean {
    return entry.endsWith('.py')
  }

  /**
   * pytest is served the accepted content in a temporary copy of the
   * workspace (see {@link measureAccepted}); a workspace too large to copy
   * measures its accepted state before each write instead.
   */
  servable(change: Change): boolean {
    return !!change.before && this.copyable()
  }

  /**
   * The accepted result of `files` (test files that fail after a write, or
   * declare tests that no longer run): pytest runs in a temporary copy of
   * the workspace where the write's paths hold what they held before (a
   * created file absent, a deleted one back), so imports, fixtures,
   * `conftest.py` and listings all see the accepted state while the
   * workspace keeps the write. The copy's source roots come first on
   * `PYTHONPATH`, ahead of an editable install of the workspace.
   */
  async measureAccepted(files: string[], change: Change, io: CheckIO): Promise<Measurement | undefined> {
    if (!change.before || !this.copyable()) return undefined
    const dir = mkdtempSync(join(tmpdir(), 'dsh-pytest-accepted-'))
    try {
      const copy = join(dir, 'workspace')
      copyWorkspace(this.root, copy)
      for (const [path, bytes] of change.before) {
        const rel = relative(this.root, path)
        if (rel.startsWith('..') || isAbsolute(rel)) return undefined
        const target = join(copy, rel)
        if (bytes === null) rmSync(target, { force: true, recursive: true })
        else {
          mkdirSync(dirname(target), { recursive: true })
          rmSync(target, { force: true, recursive: true })
          writeFileSync(target, bytes)
        }
      }
      const config = readPytestConfig(copy)
      const targets = files.filter(f => existsSync(join(copy, f)))
      if (!targets.length) return { status: 'ok', problems: [], passed: [], scope: files }
      const path = sourceRoots(copy, config).map(r => join(copy, r))
      const m = await this.run(targets, io, config, { cwd: copy, env: { PYTHONPATH: [...path, process.env.PYTHONPATH].filter(Boolean).join(':') } })
      return m.status === 'ok' && m.scope !== 'all' ? { ...m, scope: [...new Set([...m.scope, ...files])] } : m
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }

  /** A pytest test is declared `def test_x(` in its file (a parametrized id without its parameters). */
  testSource(test: { key: string; file: string }): TestSource {
    const name = testName(test).split('::').at(-1)!.replace(/\[.*\]$/, '')
    return { files: [test.file], declaration: new RegExp(`^\\s*(?:async\\s+)?def\\s+${name.replace(/\W/g, '')}\\s*\\(`, 'm') }
  }

  private _copyable?: boolean

  /** Whether the workspace is small enough to copy for an accepted-state run (counted once). */
  private copyable(): boolean {
    if (this._copyable === undefined) {
      let files = 0
      let bytes = 0
      const walk = (dir: string): boolean => {
        let entries
        try {
          entries = readdirSync(dir, { withFileTypes: true })
        } catch {
          return true
        }
        for (const entry of entries) {
          if (!copied(entry.name)) continue
          const path = join(dir, entry.name)
          if (entry.isDirectory()) {
            if (isVirtualenv(path)) continue
            if (!walk(path)) return false
          } else if (entry.isFile()) {
            files++
            bytes += lstatSync(path).size
            if (files > MAX_COPY_FILES || bytes > MAX_COPY_BYTES) return false
          }
        }
        return true
      }
      this._copyable = walk(this.root)
    }
    return this._copyable
  }

  /**
   * Whether a test file in scope declares a test (`def test_x(`) that the run
   * reported neither passing nor failing: no longer collected (a
   * `conftest.py` ignore), removed, or — in a file the write touched —
   * skipped. Declared: in the accepted content when the write touched the
   * file, else on disk. A skip in a file the write did not touch is taken as
   * the test's own condition (a platform, a missing tool), not the write's.
   */
  private declaredButNotRun(file: string, m: Measurement, change: Change): boolean {
    const i = change.files.indexOf(file)
    const touched = i >= 0
    const before = i < 0 ? undefined : change.before?.get(change.paths[i]!)
    let text: string
    try {
      text = before !== undefined ? (before?.toString('utf8') ?? '') : readFileSync(join(this.root, file), 'utf8')
    } catch {
      return false
    }
    const declared = new Set([...text.matchAll(TEST_DEF)].map(x => x[1]!))
    if (!declared.size) return false
    const name = (t: { key: string; file: string }) => testName(t).split('::').at(-1)!.replace(/\[.*\]$/, '')
    const run = new Set([...(m.passed ?? []), ...m.problems, ...(touched ? [] : m.skipped ?? [])].filter(t => t.file === file).map(name))
    return [...declared].some(n => !run.has(n))
  }

  async confirm(problems: Problem[], io: CheckIO): Promise<Confirmation | undefined> {
    const ids = [...new Set(problems.map(p => (p.key.endsWith(FILE_LEVEL) ? p.file : p.key)))]
    const m = await this.run(ids, io, readPytestConfig(this.root))
    if (m.status !== 'ok') return undefined
    const failing = new Set(m.problems.map(p => p.key))
    return { still: problems.filter(p => failing.has(p.key)) }
  }

  /** The test files a change can affect, workspace-relative. */
  relatedTests(changed: readonly string[], config: PytestConfig = readPytestConfig(this.root)): string[] {
    return this.relatedTargets(changed, config).files
  }

  /**
   * What pytest is given for a change (`targets`) and the test files they
   * cover (`files`). The tests under a reached `conftest.py` are given as
   * their directory (or the `testpaths` inside it), as a plain `pytest`
   * collects them: a conftest's `collect_ignore` applies to what pytest
   * finds in a directory, never to a file named on its command line.
   */
  relatedTargets(changed: readonly string[], config: PytestConfig = readPytestConfig(this.root)): { targets: string[]; files: string[] } {
    const py = changed.filter(f => f.endsWith('.py'))
    if (!py.length) return { targets: [], files: [] }
    const tests = this.testFiles(config)
    const files = pythonFiles(this.root)
    const edges = pythonGraph(this.root, files, sourceRoots(this.root, config))
    const reached = new Set([...py, ...findImporters(edges, py, Number.MAX_SAFE_INTEGER).importers.map(i => i.file)])
    const conftestDirs = [...reached].filter(f => basename(f) === 'conftest.py').map(f => dirname(f))
    const under = (file: string, dir: string) => dir === '.' || file === dir || file.startsWith(`${dir}/`)
    const selected = tests.filter(t => reached.has(t) || conftestDirs.some(d => under(t, d)))
    // Directories pytest collects like a plain run: the conftest's, narrowed to the testpaths inside it.
    const dirs = new Set<string>()
    const globbed = config.testpaths.some(t => /[*?[]/.test(t))
    for (const d of conftestDirs) {
      if (globbed) continue
      if (!config.testpaths.length) dirs.add(d)
      else for (const t of config.testpaths) if (under(t, d)) dirs.add(t); else if (under(d, t)) dirs.add(d)
    }
    const inDir = (t: string) => [...dirs].some(d => under(t, d))
    return { targets: [...[...dirs].sort(), ...selected.filter(t => !inDir(t))], files: selected }
  }

  /** The test files pytest would collect without arguments: below `testpaths` (else the rootdir), `python_files`, minus `norecursedirs`. */
  testFiles(config: PytestConfig = readPytestConfig(this.root)): string[] {
    const fileRes = config.pythonFiles.map(globRegExp)
    // pytest matches a pattern with a `/` (`tests/mypy_test_cases`) against the directory's path, any other against its name.
    const skipRes = config.norecursedirs.map(p => (p.includes('/') ? { re: globRegExp(`*/${p}`), path: true } : { re: globRegExp(p), path: false }))
    const out = new Set<string>()
    const walk = (dir: string) => {
      let entries
      try {
        entries = readdirSync(join(this.root, dir), { withFileTypes: true })
      } catch {
        // A testpath that does not exist: pytest reports it; nothing to select.
        return
      }
      for (const entry of entries) {
        const rel = dir === '.' ? entry.name : `${dir}/${entry.name}`
        if (entry.isDirectory()) {
          if (NOT_SOURCE_DIRS.has(entry.name) || skipRes.some(s => s.re.test(s.path ? `/${rel}` : entry.name))
            || existsSync(join(this.root, rel, 'pyvenv.cfg'))) continue
          walk(rel)
        } else if (entry.isFile() && fileRes.some(r => r.test(entry.name))) out.add(rel)
      }
    }
    const starts = config.testpaths.length ? config.testpaths : [config.rootdir]
    for (const start of starts) {
      if (/[*?[]/.test(start)) {
        // A glob testpath: match it against the directories below the rootdir.
        const re = globRegExp(start)
        for (const f of pythonFiles(this.root)) if (ancestorsOf(f).some(d => re.test(d)) && fileRes.some(r => r.test(basename(f)))) out.add(f)
      } else if (start.endsWith('.py')) {
        if (existsSync(join(this.root, start))) out.add(start)
      } else walk(start)
    }
    return [...out].sort()
  }

  /**
   * `cwd`: where pytest runs (the workspace, or a copy of it holding the
   * accepted content); `covers`: the test files `targets` stand for (a
   * directory given for a conftest's tests).
   */
  private async run(targets: string[], io: CheckIO, config: PytestConfig,
    options: { cwd?: string; env?: Record<string, string>; covers?: string[] } = {}): Promise<Measurement> {
    const { cwd = this.root, env = {}, covers = targets } = options
    const dir = mkdtempSync(join(tmpdir(), 'dsh-pytest-'))
    const out = join(dir, 'junit.xml')
    try {
      this.announcer.announce(io)
      const argv = [this.announcer.python.command, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', '--continue-on-collection-errors',
        `--junitxml=${out}`, ...this.extraArgs, ...targets]
      const r = await runRecorded(this.name, argv, cwd, io, {
        // Judging must not leave __pycache__ behind in the workspace.
        env: checkEnv({ PYTHONDONTWRITEBYTECODE: '1', ...env }),
        passed: x => x.exitCode === 0 || x.exitCode === 5,
      })
      // 0 passed, 1 tests failed, 2 interrupted, 5 no tests: all leave a report.
      if (r.exitCode === 5) return { status: 'ok', problems: [], passed: [], scope: [] }
      if (!r.timedOut && r.exitCode === 4 && /ImportError while loading conftest|while loading conftest/.test(r.output)) {
        // A conftest.py that does not load stops pytest before any report: every test file it covers stopped loading.
        return conftestFailure(this.name, r.output, cwd, covers.length ? covers : this.testFiles(config))
      }
      if (r.outcome === 'timeout' || r.outcome === 'error' || !existsSync(out)) {
        return { status: r.timedOut ? 'timeout' : 'error', problems: [], scope: [], error: whyNotJudged('pytest', r, io.timeoutMs) }
      }
      const base = config.rootdir === '.' ? cwd : join(cwd, config.rootdir)
      const m = parseJunit(this.name, base, readFileSync(out, 'utf8'))
      return config.rootdir === '.' ? m : rebase(m, config.rootdir)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** `def test_x(` (also `async def`), the default `python_functions`. */
const TEST_DEF = /^[ \t]*(?:async[ \t]+)?def[ \t]+(test\w*)[ \t]*\(/gm
/** A workspace larger than this is not copied for an accepted-state run. */
const MAX_COPY_FILES = 20_000
const MAX_COPY_BYTES = 256 * 1024 * 1024
/** Not copied for an accepted-state run: version control, caches, dsh's own state. */
const NOT_COPIED = new Set(['.git', '.hg', '.svn', '.dsh', 'node_modules', '__pycache__', '.pytest_cache', '.mypy_cache', '.ruff_cache', '.tox', '.nox'])

function copied(name: string): boolean {
  return !NOT_COPIED.has(name)
}

function isVirtualenv(dir: string): boolean {
  return existsSync(join(dir, 'pyvenv.cfg'))
}

/** A copy of the workspace's files at `to`; its virtualenvs are linked, not copied (the interpreter keeps its paths). */
function copyWorkspace(from: string, to: string): void {
  const venvs: string[] = []
  cpSync(from, to, {
    recursive: true,
    filter: src => {
      if (!copied(basename(src))) return false
      if (src !== from && isVirtualenv(src)) {
        venvs.push(src)
        return false
      }
      return true
    },
  })
  for (const venv of venvs) symlinkSync(venv, join(to, relative(from, venv)))
}

/** Ancestor directories of a workspace-relative file, nearest first. */
function ancestorsOf(file: string): string[] {
  const out: string[] = []
  for (let d = dirname(file); d !== '.' && d !== ''; d = dirname(d)) out.push(d)
  return out
}

/** Ids and files of a report read relative to a rootdir below the workspace, made workspace-relative. */
function rebase(m: Measurement, rootdir: string): Measurement {
  const at = (f: string) => `${rootdir}/${f}`
  return {
    ...m,
    problems: m.problems.map(p => ({ ...p, key: at(p.key), file: at(p.file) })),
    passed: m.passed?.map(p => ({ key: at(p.key), file: at(p.file) })),
    skipped: m.skipped?.map(p => ({ key: at(p.key), file: at(p.file) })),
    scope: m.scope === 'all' ? 'all' : m.scope.map(at),
  }
}

/** Every covered test file as not loading, with the conftest error's last `E   …` line (or pytest's last line). */
function conftestFailure(check: string, output: string, root: string, files: string[]): Measurement {
  const lines = output.split('\n').map(l => l.trim()).filter(Boolean)
  const cause = ([...lines].reverse().find(l => /^E\s+\S/.test(l))?.replace(/^E\s+/, '')
    ?? lines.at(-1) ?? 'conftest.py failed to load').split(`${root}/`).join('')
  const where = lines.find(l => /while loading conftest/.test(l))?.match(/'([^']+)'/)?.[1]?.split(`${root}/`).join('')
  return {
    status: 'ok',
    problems: files.map(f => failingTest(check, `${f}${FILE_LEVEL}`, f, undefined, `test file failed to load: ${where ? `${where}: ` : ''}${cause}`)),
    passed: [],
    scope: files,
  }
}
