import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, isAbsolute, join } from 'node:path'
import { decodeXmlText } from 'dsh-common'
import { FILE_LEVEL } from '../../accepted.ts'
import { diagnostic, failingTest } from '../../problems.ts'
import { checkEnv, runRecorded, whyNotJudged } from '../../run.ts'
import { findImporters } from '../../impact.ts'
import { pythonFiles, pythonGraph } from './impact.ts'
import type { Change, Check, CheckIO, Measurement, Problem } from '../../types.ts'
import { globRegExp, readPytestConfig, sourceRoots, type PytestConfig } from './pytest-config.ts'

const SKIP_DIRS = new Set(['node_modules', 'venv', '.venv', '__pycache__', 'build', 'dist', 'site-packages'])

/** Compiles files in memory (no .pyc written) and prints one JSON line per syntax error. */
const COMPILE_SCRIPT = `
import sys, os, json
files = sys.argv[1:]
if not files:
    for d, dirs, names in os.walk('.'):
        dirs[:] = [x for x in dirs if not x.startswith('.') and x not in ${JSON.stringify([...SKIP_DIRS])}]
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

  async measure(change: Change | undefined, io: CheckIO): Promise<Measurement> {
    const files = change?.files.filter(f => f.endsWith('.py'))
    if (files && !files.length) return { status: 'ok', problems: [], scope: [] }
    this.announcer.announce(io)
    const r = await runRecorded(this.name, [this.announcer.python.command, '-c', COMPILE_SCRIPT, ...(files ?? [])], this.root, io, { passed: x => x.exitCode === 0 })
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
    if (failure) problems.push(failingTest(check, key, file, undefined, `${[...rest, name].join('::')} — ${(attr(failure[1]!, 'message') ?? firstLine(failure[3] ?? '') ?? failure[2]!).split(`${root}/`).join('')}`))
    else if (!/<skipped\b/.test(body)) passed.push({ key, file })
  }
  return { status: 'ok', problems, passed, scope: [...scope] }
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

  constructor(private readonly root: string, private readonly mode: 'related' | 'all', private readonly extraArgs: string[] = [], python: PythonInterpreter | PythonAnnouncer = { command: 'python3', source: 'python3 on PATH' }) {
    this.announcer = python instanceof PythonAnnouncer ? python : new PythonAnnouncer(python)
  }

  /** Related tests: the accepted state is measured per write (see {@link Check.lazyBaseline}). */
  get lazyBaseline(): boolean {
    return this.mode === 'related'
  }

  async measure(change: Change | undefined, io: CheckIO): Promise<Measurement> {
    const config = readPytestConfig(this.root)
    if (!change || this.mode === 'all' || (config.file && change.files.includes(config.file))) return this.run([], io, config)
    const targets = this.relatedTests(change.files, config)
    if (!targets.length) return { status: 'ok', problems: [], passed: [], scope: [] }
    return this.run(targets, io, config)
  }

  async confirm(problems: Problem[], io: CheckIO): Promise<Problem[] | undefined> {
    const ids = [...new Set(problems.map(p => (p.key.endsWith(FILE_LEVEL) ? p.file : p.key)))]
    const m = await this.run(ids, io, readPytestConfig(this.root))
    if (m.status !== 'ok') return undefined
    const failing = new Set(m.problems.map(p => p.key))
    return problems.filter(p => failing.has(p.key))
  }

  /** The test files a change can affect, workspace-relative. */
  relatedTests(changed: readonly string[], config: PytestConfig = readPytestConfig(this.root)): string[] {
    const py = changed.filter(f => f.endsWith('.py'))
    if (!py.length) return []
    const tests = this.testFiles(config)
    const files = pythonFiles(this.root)
    const edges = pythonGraph(this.root, files, sourceRoots(this.root, config))
    const reached = new Set([...py, ...findImporters(edges, py, Number.MAX_SAFE_INTEGER).importers.map(i => i.file)])
    const conftestDirs = [...reached].filter(f => basename(f) === 'conftest.py').map(f => dirname(f))
    const under = (file: string, dir: string) => dir === '.' || file.startsWith(`${dir}/`)
    return tests.filter(t => reached.has(t) || conftestDirs.some(d => under(t, d)))
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
          if (SKIP_DIRS.has(entry.name) || skipRes.some(s => s.re.test(s.path ? `/${rel}` : entry.name)) || existsSync(join(this.root, rel, 'pyvenv.cfg'))) continue
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

  private async run(targets: string[], io: CheckIO, config: PytestConfig): Promise<Measurement> {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-pytest-'))
    const out = join(dir, 'junit.xml')
    try {
      this.announcer.announce(io)
      const argv = [this.announcer.python.command, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', '--continue-on-collection-errors', `--junitxml=${out}`, ...this.extraArgs, ...targets]
      const r = await runRecorded(this.name, argv, this.root, io, {
        // Judging must not leave __pycache__ behind in the workspace.
        env: checkEnv({ PYTHONDONTWRITEBYTECODE: '1' }),
        passed: x => x.exitCode === 0 || x.exitCode === 5,
      })
      // 0 passed, 1 tests failed, 2 interrupted, 5 no tests: all leave a report.
      if (r.exitCode === 5) return { status: 'ok', problems: [], passed: [], scope: [] }
      if (!r.timedOut && r.exitCode === 4 && /ImportError while loading conftest|while loading conftest/.test(r.output)) {
        // A conftest.py that does not load stops pytest before any report: every test file it covers stopped loading.
        return conftestFailure(this.name, r.output, this.root, targets.length ? targets : this.testFiles(config))
      }
      if (r.outcome === 'timeout' || r.outcome === 'error' || !existsSync(out)) {
        return { status: r.timedOut ? 'timeout' : 'error', problems: [], scope: [], error: whyNotJudged('pytest', r, io.timeoutMs) }
      }
      const base = config.rootdir === '.' ? this.root : join(this.root, config.rootdir)
      const m = parseJunit(this.name, base, readFileSync(out, 'utf8'))
      return config.rootdir === '.' ? m : rebase(m, config.rootdir)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
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
    scope: m.scope === 'all' ? 'all' : m.scope.map(at),
  }
}

/** Every covered test file as not loading, with the conftest error's last `E   …` line (or pytest's last line). */
function conftestFailure(check: string, output: string, root: string, files: string[]): Measurement {
  const lines = output.split('\n').map(l => l.trim()).filter(Boolean)
  const cause = ([...lines].reverse().find(l => /^E\s+\S/.test(l))?.replace(/^E\s+/, '') ?? lines.at(-1) ?? 'conftest.py failed to load').split(`${root}/`).join('')
  const where = lines.find(l => /while loading conftest/.test(l))?.match(/'([^']+)'/)?.[1]?.split(`${root}/`).join('')
  return {
    status: 'ok',
    problems: files.map(f => failingTest(check, `${f}${FILE_LEVEL}`, f, undefined, `test file failed to load: ${where ? `${where}: ` : ''}${cause}`)),
    passed: [],
    scope: files,
  }
}
