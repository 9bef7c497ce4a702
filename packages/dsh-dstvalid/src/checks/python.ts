import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { decodeXmlText } from 'dsh-common'
import { FILE_LEVEL } from '../accepted.ts'
import { diagnostic, failingTest } from '../problems.ts'
import { checkEnv, runRecorded, whyNotJudged } from '../run.ts'
import type { Change, Check, CheckIO, Measurement, Problem } from '../types.ts'

const SKIP_DIRS = new Set(['node_modules', 'venv', '.venv', '__pycache__', 'build', 'dist', 'site-packages'])

/** Compiles files in memory (no .pyc written) and prints one JSON line per syntax error. */
const COMPILE_SCRIPT = `
import sys, os, json
files = sys.argv[1:]
if not files:
    for d, dirs, names in os.walk('.'):
        dirs[:] = [x for x in dirs if not x.startswith('.') and x not in ${JSON.stringify([...SKIP_DIRS])}]
        files += [os.path.join(d, n) for n in names if n.endswith('.py')]
for f in files:
    if not os.path.exists(f):
        continue
    try:
        compile(open(f, 'rb').read(), f, 'exec', dont_inherit=True)
    except (SyntaxError, ValueError) as e:
        print(json.dumps({'file': os.path.relpath(f).replace(os.sep, '/'), 'line': getattr(e, 'lineno', None), 'type': type(e).__name__, 'msg': getattr(e, 'msg', str(e))}))
`

/** Python `compile` check: every file at the baseline, the changed `.py` files after a write. */
export class PythonCompileCheck implements Check {
  readonly name = 'compile'
  readonly verb = 'compiling'

  constructor(private readonly root: string, private readonly python = 'python3') {}

  async measure(change: Change | undefined, io: CheckIO): Promise<Measurement> {
    const files = change?.files.filter(f => f.endsWith('.py'))
    if (files && !files.length) return { status: 'ok', problems: [], scope: [] }
    const r = await runRecorded(this.name, [this.python, '-c', COMPILE_SCRIPT, ...(files ?? [])], this.root, io)
    if (r.outcome !== 'pass') return { status: r.outcome === 'timeout' ? 'timeout' : 'error', problems: [], scope: [], error: whyNotJudged('python compile', r, io.timeoutMs) }
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
      const why = attr(/<error\b[^>]*>/.exec(body)?.[0] ?? '', 'message') ?? 'collection failed'
      problems.push(failingTest(check, `${file}${FILE_LEVEL}`, file, undefined, `test file failed: ${why}`))
      continue
    }
    const { file, rest } = splitClassname(root, classname)
    scope.add(file)
    const key = [file, ...rest, name].join('::')
    const failure = /(<(failure|error)\b[^>]*?)(?:\/>|>([\s\S]*?)<\/\2>)/.exec(body)
    if (failure) problems.push(failingTest(check, key, file, undefined, `${[...rest, name].join('::')} — ${attr(failure[1]!, 'message') ?? firstLine(failure[3] ?? '') ?? failure[2]}`))
    else if (!/<skipped\b/.test(body)) passed.push({ key, file })
  }
  return { status: 'ok', problems, passed, scope: [...scope] }
}

/** pytest through its JUnit XML; after a write only the test files that import a changed module (or were changed). */
export class PytestCheck implements Check {
  readonly name = 'test'
  readonly verb = 'testing'

  constructor(private readonly root: string, private readonly mode: 'related' | 'all', private readonly extraArgs: string[] = [], private readonly python = 'python3') {}

  async measure(change: Change | undefined, io: CheckIO): Promise<Measurement> {
    if (!change || this.mode === 'all') return this.run([], io)
    const targets = this.relatedTests(change.files)
    if (!targets.length) return { status: 'ok', problems: [], passed: [], scope: [] }
    return this.run(targets, io)
  }

  async confirm(problems: Problem[], io: CheckIO): Promise<Problem[] | undefined> {
    const ids = problems.map(p => (p.key.endsWith(FILE_LEVEL) ? p.file : p.key))
    const m = await this.run(ids, io)
    if (m.status !== 'ok') return undefined
    const failing = new Set(m.problems.map(p => p.key))
    return problems.filter(p => failing.has(p.key))
  }

  private relatedTests(files: string[]): string[] {
    const modules = new Set(files.filter(f => f.endsWith('.py')).map(f => basename(f, '.py')))
    const tests = new Set(files.filter(f => /(^|\/)test_[^/]*\.py$|_test\.py$/.test(f) && existsSync(join(this.root, f))))
    for (const file of this.testFiles('.')) {
      const text = readFileSync(join(this.root, file), 'utf8')
      for (const m of text.matchAll(/^\s*(?:from|import)\s+([\w.]+)/gm)) {
        if (m[1]!.split('.').some(part => modules.has(part))) tests.add(file)
      }
    }
    return [...tests]
  }

  private testFiles(dir: string): string[] {
    const out: string[] = []
    for (const entry of readdirSync(join(this.root, dir), { withFileTypes: true })) {
      const rel = dir === '.' ? entry.name : `${dir}/${entry.name}`
      if (entry.isDirectory() && !entry.name.startsWith('.') && !SKIP_DIRS.has(entry.name)) out.push(...this.testFiles(rel))
      else if (entry.isFile() && /^test_.*\.py$|_test\.py$/.test(entry.name)) out.push(rel)
    }
    return out
  }

  private async run(targets: string[], io: CheckIO): Promise<Measurement> {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-pytest-'))
    const out = join(dir, 'junit.xml')
    try {
      const r = await runRecorded(this.name, [this.python, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', `--junitxml=${out}`, ...this.extraArgs, ...targets], this.root, io, {
        // Judging must not leave __pycache__ behind in the workspace.
        env: checkEnv({ PYTHONDONTWRITEBYTECODE: '1' }),
        passed: x => x.exitCode === 0 || x.exitCode === 5,
      })
      // 0 passed, 1 tests failed, 2 interrupted (collection errors), 5 no tests: all leave a report.
      if (r.exitCode === 5) return { status: 'ok', problems: [], passed: [], scope: [] }
      if (r.outcome === 'timeout' || r.outcome === 'error' || !existsSync(out)) {
        return { status: r.timedOut ? 'timeout' : 'error', problems: [], scope: [], error: whyNotJudged('pytest', r, io.timeoutMs) }
      }
      return parseJunit(this.name, this.root, readFileSync(out, 'utf8'))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
