import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { isAbsolute, join, relative } from 'node:path'
import { runCommand, toPosixRelative, type Isolation } from 'dsh-common'
import { FILE_LEVEL } from '../../accepted.ts'
import { confirmAlone, firstLine, ownParseErrors, timeoutOf, type JsonTestReport, type Rerun } from '../runner.ts'
import { failingTest } from '../../problems.ts'
import { checkEnv, checkIsolation, runRecorded, stripAnsi, whyNotJudged } from '../../run.ts'
import { servableByMount, servesAnyByMount, withAcceptedContent } from '../served.ts'
import type { Change, Check, CheckIO, Confirmation, Measurement, Problem } from '../../types.ts'
import { SCRIPT_GRAPH } from '../js/imports.ts'
import { testsUnchanged } from '../js/comments.ts'
import type { FsReaders } from '../fs-readers.ts'

/** Jest's `--json` report. */
type JestReport = JsonTestReport

export interface JestCheckOptions {
  root: string
  /** How to start the workspace's own Jest, e.g. `[node, <ws>/node_modules/jest/bin/jest.js]`. */
  command: string[]
  /** `related`: `--findRelatedTests` on the changed files; `all`: the whole suite every time. */
  mode: 'related' | 'all'
  /** Appended to every Jest invocation. */
  extraArgs?: string[]
  /** Test files chosen by their source for the file-system reads Jest does not relate (see {@link FsReaders}). */
  fsReaders?: FsReaders
}

/** The first line of a Jest failure that says what went wrong ("Test suite failed to run" is only a heading). */
function why(text: string | undefined): string {
  const lines = stripAnsi(text ?? '').split('\n').map(l => l.trim()).filter(Boolean)
  return lines.find(l => l !== 'Test suite failed to run' && !l.startsWith('●')) ?? lines[0] ?? ''
}

/**
 * Tests through the workspace's own Jest (`jest.config.*` or a `jest` key
 * in package.json): `--findRelatedTests` with the JSON report, judged like
 * vitest — per-test delta, a test file that no longer loads, flaky re-runs
 * (`--runTestsByPath <file> -t`), the write's own parse errors.
 */
export class JestCheck implements Check {
  readonly name = 'test'
  readonly verb = 'testing'
  /** Full names for `-t`, by test id. */
  private readonly _names = new Map<string, string>()
  /** The config's `roots` (absolute), read once with `--showConfig`; null when they could not be read. */
  private _roots?: string[] | null

  constructor(private readonly options: JestCheckOptions) {}

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

  async measure(change: Change | undefined, io: CheckIO): Promise<Measurement> {
    if (!change || this.options.mode === 'all') return this.runReport([], io, [])
    const readers = this.options.fsReaders?.readersOf(change) ?? []
    // Nothing can import a file that does not exist yet (the accepted state of a file a write creates); only a test that reads it as a file sees it.
    if (!readers.length && !change.paths.some(p => existsSync(p))) return { status: 'ok', problems: [], passed: [], scope: [] }
    return this.runReport(['--findRelatedTests', ...change.files, ...readers, ...await this.rootArgs(change, io)], io, change.files)
  }

  /**
   * Jest relates only files inside its `roots` (its haste map covers nothing
   * else): a config with `roots: ['test']` finds no test related to a file in
   * `src/`. For a change outside every root, the roots plus the changed files'
   * top directories are passed with `--roots`; test files still match only
   * the config's own patterns.
   */
  private async rootArgs(change: Change, io: CheckIO): Promise<string[]> {
    if (this._roots === undefined) {
      const r = await runCommand([...this.options.command, '--showConfig', '--watchman=false'],
        { cwd: this.options.root, timeoutMs: io.timeoutMs, maxOutputBytes: io.maxOutputBytes, env: checkEnv(), signal: io.signal,
        isolate: checkIsolation(undefined, io.vault) })
      try {
        const roots = (JSON.parse(r.stdout) as { configs?: { roots?: string[] }[] }).configs?.flatMap(c => c.roots ?? [])
        this._roots = roots?.length ? roots : null
      } catch {
        // Not the JSON we know (another Jest, a crash): run without --roots, as the config says.
        this._roots = null
      }
    }
    const roots = this._roots
    if (!roots) return []
    const inside = (p: string) => roots.some(r => { const rel = relative(r, p); return !rel.startsWith('..') && !isAbsolute(rel) })
    const outside = change.paths.filter(p => !inside(p))
    if (!outside.length) return []
    const tops = outside.map(p => join(this.options.root, relative(this.options.root, p).split(/[\\/]/)[0]!))
    return [...new Set([...roots, ...tops])].flatMap(r => ['--roots', r])
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
    return withAcceptedContent(change, isolate => this.runReport(['--runTestsByPath', ...files], io, [], isolate))
  }

  /** A timed-out test is re-run with a longer `--testTimeout` (Jest's hooks take the same default). */
  confirm(problems: Problem[], io: CheckIO): Promise<Confirmation | undefined> {
    return confirmAlone(problems, p => this._names.get(p.key), rerun => this.rerun(rerun, io))
  }

  /** The same re-runs on the accepted content, in a mount namespace (ADR 0019). */
  confirmAccepted(problems: Problem[], change: Change, io: CheckIO): Promise<Confirmation | undefined> {
    return withAcceptedContent(change, isolate => confirmAlone(problems, p => this._names.get(p.key), rerun => this.rerun(rerun, io, isolate)))
  }

  private rerun({ file, pattern, testTimeoutMs, hookTimeoutMs }: Rerun, io: CheckIO, isolate?: Isolation): Promise<Measurement> {
    const limit = Math.max(testTimeoutMs ?? 0, hookTimeoutMs ?? 0)
    return this.runReport(['--runTestsByPath', file, ...(pattern ? ['-t', pattern] : []), ...(limit ? [`--testTimeout=${limit}`] : [])], io, [], isolate)
  }

  private async runReport(args: string[], io: CheckIO, touched: readonly string[], isolate?: Isolation): Promise<Measurement> {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-jest-'))
    const out = join(dir, 'report.json')
    try {
      const r = await runRecorded(this.name, [
        ...this.options.command, ...args,
        '--json', `--outputFile=${out}`, '--passWithNoTests', '--testLocationInResults', '--ci', '--watchman=false', ...(this.options.extraArgs ?? []),
      ], this.options.root, io, { judgeable: () => existsSync(out), isolate })
      let report: JestReport
      try {
        report = JSON.parse(readFileSync(out, 'utf8')) as JestReport
      } catch {
        // No report: Jest crashed, timed out or never started; the write's own parse error may still be named.
        const own = ownParseErrors(this.name, this.options.root, touched, [r.output])
        if (own.length && !r.timedOut) return { status: 'ok', problems: own, passed: [], scope: [...touched] }
        return { status: r.timedOut ? 'timeout' : 'error', problems: [], scope: [], error: whyNotJudged('jest', r, io.timeoutMs) }
      }
      return this.parse(report, touched)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }

  private parse(report: JestReport, touched: readonly string[]): Measurement {
    const problems: Problem[] = []
    const passed: { key: string; file: string }[] = []
    const scope = new Set<string>(touched)
    const loadErrors: string[] = []
    // Jest finishes files in any order (parallel workers): one order for the message.
    for (const suite of [...report.testResults].sort((a, b) => a.name.localeCompare(b.name))) {
      const file = toPosixRelative(this.options.root, suite.name)
      scope.add(file)
      let failedTests = 0
      for (const t of suite.assertionResults) {
        const key = [file, ...t.ancestorTitles, t.title].join(' > ')
        this._names.set(key, t.fullName)
        if (t.status === 'passed') passed.push({ key, file, ...(typeof t.duration === 'number' ? { durationMs: t.duration } : {}) })
        else if (t.status === 'failed') {
          failedTests++
          const reason = firstLine(t.failureMessages?.[0])
          const timeout = timeoutOf(reason)
          problems.push({ ...failingTest(this.name, key, file, t.location?.line ?? undefined,
            `${[...t.ancestorTitles, t.title].join(' > ')}${reason ? ` — ${reason}` : ''}`), ...(timeout ? { timeout } : {}) })
        }
      }
      if (suite.status === 'failed' && !failedTests) {
        loadErrors.push(suite.message ?? '')
        problems.push(failingTest(this.name, `${file}${FILE_LEVEL}`, file, undefined, `test file failed: ${why(suite.message) || 'no tests ran'}`))
      }
    }
    problems.push(...ownParseErrors(this.name, this.options.root, touched, loadErrors))
    return { status: 'ok', problems, passed, scope: [...scope] }
  }
}
