import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Isolation, NOT_PROJECT_DIRS, toPosixRelative } from 'dsh-common'
import { FILE_LEVEL } from '../../accepted.ts'
import { findImporters } from '../../impact.ts'
import { scanImportGraph } from '../js/imports.ts'
import { failingTest } from '../../problems.ts'
import { checkEnv, runRecorded, whyNotJudged } from '../../run.ts'
import { servableByMount, servesAnyByMount, withAcceptedContent } from '../served.ts'
import type { Change, Check, CheckIO, Confirmation, Measurement, Problem } from '../../types.ts'
import { confirmAlone, ownParseErrors } from '../runner.ts'
import { SCRIPT_GRAPH } from '../js/imports.ts'
import { testsUnchanged } from '../js/comments.ts'

/** What `reporter.mjs` writes: every test with its suites, and every test file that printed to stderr or did not load. */
export interface NodeTestReport {
  tests: { file: string; titles: string[]; name: string; state: 'pass' | 'fail' | 'skip'; error: string; line?: number }[]
  files: { file: string; failed: boolean; stderr: string }[]
}

/** The reporter `node --test` loads (plain JavaScript). */
const REPORTER = fileURLToPath(new URL('./reporter.mjs', import.meta.url))

/** The files `node --test` runs when given none (its default patterns, Node 20 and later). */
const NODE_TEST_FILE = /(?:^|\/)(?:test\/.*\.[cm]?js|[^/]*[._-]test\.[cm]?js|test-[^/]*\.[cm]?js|test\.[cm]?js)$/

/** Sources the import scan reads (what a test can import). */
const SOURCE = /\.(?:[cm]?js|jsx|[cm]?ts|tsx)$/

/** Workspace-relative files under `root` (forward slashes), sorted. */
function workspaceFiles(root: string, dir = '', out: string[] = []): string[] {
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const rel = dir ? `${dir}/${entry.name}` : entry.name
    if (entry.isDirectory()) {
      if (!NOT_PROJECT_DIRS.has(entry.name) && !entry.name.startsWith('.')) workspaceFiles(root, rel, out)
    } else if (entry.isFile() && SOURCE.test(entry.name)) out.push(rel)
  }
  return out.sort()
}

/** A failure's message on one line: its non-empty lines joined (Node's assertion messages span several). */
function oneLine(text: string): string {
  const line = text.split('\n').map(l => l.trim()).filter(Boolean).join(' ')
  return line.length > 200 ? `${line.slice(0, 199)}…` : line
}

/** Node's loader error (`file:///abs:3` … `SyntaxError: …`) as one `abs:3: SyntaxError: …` line, the way the shared parse-error matcher reads a location. */
function loaderError(stderr: string): string {
  const at = /^file:\/\/(\/\S+?):(\d+)$/m.exec(stderr)
  const error = /^(\w*Error): (.+)$/m.exec(stderr)
  return at && error ? `${at[1]}:${at[2]}: ${error[1]}: ${error[2]}` : stderr
}

export interface NodeTestCheckOptions {
  root: string
  /** `related`: the test files whose imports reach the changed files; `all`: every test file, every time. */
  mode: 'related' | 'all'
}

/**
 * Tests through Node's own test runner (`node --test`, the running Node),
 * read through this folder's reporter. Related tests come from the
 * workspace's import graph (the static scan the TypeScript 7 check uses
 * too); test ids are `file > suite > name`; a test file that no longer loads
 * is one problem keyed by the file, and a parse error in a file the write
 * touched is the write's own; newly failing tests are re-run alone
 * (`--test-name-pattern`).
 */
export class NodeTestCheck implements Check {
  readonly name = 'test'
  readonly verb = 'testing'

  constructor(private readonly options: NodeTestCheckOptions) {}

  /** A deleted or moved module selects the tests of what imported it (see {@link Check.moduleGraph}). */
  readonly moduleGraph = SCRIPT_GRAPH

  /** Related tests: the accepted state is measured per write (see {@link Check.lazyBaseline}). */
  get lazyBaseline(): boolean {
    return this.options.mode === 'related'
  }

  /** A write that changed only comments and whitespace in scripts: no test can change outcome. */
  unaffectedBy(change: Change): Promise<string | undefined> {
    return testsUnchanged(change)
  }

  /** The test files whose imports reach the change (a changed test file is its own). */
  async relatedTestFiles(change: Change): Promise<string[]> {
    const { root } = this.options
    const edges = scanImportGraph(root, workspaceFiles(root).map(f => join(root, f)))
    const reach = [...change.files, ...findImporters(edges, change.files, Number.MAX_SAFE_INTEGER).importers.map(i => i.file)]
    return [...new Set(reach)].filter(f => NODE_TEST_FILE.test(f) && existsSync(join(root, f))).sort()
  }

  async measure(change: Change | undefined, io: CheckIO): Promise<Measurement> {
    if (!change || this.options.mode === 'all') return this.run(undefined, undefined, io, change?.files ?? [])
    const tests = await this.relatedTestFiles(change)
    if (!tests.length) return { status: 'ok', problems: [], passed: [], scope: [...change.files] }
    return this.run(tests, undefined, io, change.files)
  }

  /** A write whose paths all existed before it: its failing tests' accepted state is measured after it, in a mount namespace (ADR 0019). */
  servable(change: Change): boolean {
    return servableByMount(change)
  }

  servesAnyChange(): boolean {
    return servesAnyByMount()
  }

  /** `files` run on the content from before the write, shown to this run alone. */
  async measureAccepted(files: string[], change: Change, io: CheckIO): Promise<Measurement | undefined> {
    return withAcceptedContent(change, isolate => this.run(files, undefined, io, [], isolate))
  }

  async confirm(problems: Problem[], io: CheckIO): Promise<Confirmation | undefined> {
    // The test's own name (the last part of its id): `--test-name-pattern` matches each test by its name.
    const nameOf = (p: Problem) => (p.key.endsWith(FILE_LEVEL) ? undefined : p.key.split(' > ').at(-1))
    return confirmAlone(problems, nameOf, async ({ file, pattern }) => this.run([file], pattern, io, []))
  }

  /** One run: `files` (undefined: node's own discovery, the whole suite), `pattern` for `--test-name-pattern`. */
  private async run(files: string[] | undefined, pattern: string | undefined, io: CheckIO, touched: readonly string[],
    isolate?: Isolation): Promise<Measurement> {
    const { root } = this.options
    const dir = mkdtempSync(join(tmpdir(), 'dsh-node-test-'))
    const out = join(dir, 'report.json')
    const argv = [
      process.execPath, '--test', `--test-reporter=${REPORTER}`, `--test-reporter-destination=${out}`,
      ...(pattern ? [`--test-name-pattern=${pattern}`] : []), ...(files ?? []),
    ]
    try {
      // A failing test exits 1: the run found problems, it did not fail to run.
      const r = await runRecorded(this.name, argv, root, io,
        { env: checkEnv({ NODE_TEST_CONTEXT: undefined }), passed: x => x.exitCode === 0, judgeable: () => existsSync(out), isolate })
      const report = existsSync(out) ? this.read(out) : undefined
      if (r.outcome === 'timeout' || r.outcome === 'error' || !report) {
        const own = ownParseErrors(this.name, root, touched, [loaderError(r.stderr)])
        if (own.length) return { status: 'ok', problems: own, passed: [], scope: [...touched] }
        return { status: r.outcome === 'timeout' ? 'timeout' : 'error', problems: [], scope: [], error: whyNotJudged('node --test', r, io.timeoutMs) }
      }
      return this.judge(report, touched, files)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }

  private read(file: string): NodeTestReport | undefined {
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as NodeTestReport
    } catch {
      // Cut short (the run was killed): no report.
      return undefined
    }
  }

  /** A measurement from one report: per-test results, test files that did not load, the write's own parse errors. */
  private judge(report: NodeTestReport, touched: readonly string[], files: readonly string[] | undefined): Measurement {
    const { root } = this.options
    const problems: Problem[] = []
    const passed: { key: string; file: string }[] = []
    const scope = new Set<string>([...touched, ...(files ?? [])])
    for (const t of report.tests) {
      const file = toPosixRelative(root, t.file)
      const path = [...t.titles, t.name]
      const key = [file, ...path].join(' > ')
      scope.add(file)
      if (t.state === 'pass') passed.push({ key, file })
      else if (t.state === 'fail') problems.push(failingTest(this.name, key, file, t.line, `${path.join(' > ')}${t.error ? ` — ${oneLine(t.error)}` : ''}`))
    }
    const loadErrors: string[] = []
    for (const f of report.files) {
      const file = toPosixRelative(root, f.file)
      scope.add(file)
      if (!f.failed) continue
      const error = loaderError(f.stderr)
      loadErrors.push(error)
      const why = /^\w*Error: .+$/m.exec(f.stderr)?.[0]
      problems.push(failingTest(this.name, `${file}${FILE_LEVEL}`, file, undefined, `test file failed: ${why ?? 'no tests ran'}`))
    }
    problems.push(...ownParseErrors(this.name, root, touched, loadErrors))
    return { status: 'ok', problems, passed, scope: files === undefined ? 'all' : [...scope] }
  }
}
