import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { toPosixRelative } from 'dsh-common'
import { FILE_LEVEL } from '../accepted.ts'
import { failingTest } from '../problems.ts'
import { runRecorded, whyNotJudged } from '../run.ts'
import type { Change, Check, CheckIO, Measurement, Problem } from '../types.ts'
import { parseCoverageSummary, type CoverageReading, type CoverageSource } from './coverage.ts'

/** The parts of vitest's JSON report this check reads (the warm runner produces the same shape). */
export interface VitestReport {
  testResults: {
    name: string
    /** The vitest project that ran the file (warm runner only). */
    project?: string
    status: string
    message?: string
    assertionResults: {
      ancestorTitles: string[]
      title: string
      fullName: string
      status: string
      failureMessages?: string[]
      location?: { line: number; column: number }
    }[]
  }[]
}

export interface VitestCheckOptions {
  root: string
  /** How to start the workspace's own vitest, e.g. `[node, <ws>/node_modules/vitest/vitest.mjs]`. */
  command: string[]
  /** `related`: only tests whose import graph reaches the changed files; `all`: the whole suite every time. */
  mode: 'related' | 'all'
  /** Appended to every vitest invocation. */
  extraArgs?: string[]
  /**
   * Measure v8 line coverage while testing (the coverage mode; needs
   * `@vitest/coverage-v8` in the workspace): the whole workspace at the
   * baseline, the changed source files after a write. Flaky re-runs never do.
   */
  coverage?: boolean
}

/** Source files whose coverage a change asks about. */
const COVERABLE = /\.(?:[cm]?[jt]sx?|vue|svelte)$/

function firstLine(text: string | undefined): string {
  return (text ?? '').split('\n').map(l => l.trim()).find(Boolean) ?? ''
}

export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/**
 * Tests through the workspace's own vitest, read from its JSON reporter.
 * A test id is `file > suite > name`; a test file that fails as a whole (it
 * no longer loads) is one problem keyed by the file.
 */
export class VitestCheck implements Check, CoverageSource {
  readonly name = 'test'
  readonly verb = 'testing'
  readonly coverageUnit = 'lines'
  /** Full names for `-t`, by test id. */
  private readonly _names = new Map<string, string>()
  private _coverage?: CoverageReading

  constructor(private readonly options: VitestCheckOptions) {}

  async measure(change: Change | undefined, io: CheckIO): Promise<Measurement> {
    const args = change && this.options.mode === 'related' ? ['related', ...change.files, '--run'] : ['run']
    this._coverage = undefined
    if (!this.options.coverage) return this.runReport(args, io)
    const include = change?.files.filter(f => COVERABLE.test(f))
    if (include && !include.length) return this.runReport(args, io)
    return this.runReport(args, io, include ?? 'all')
  }

  lastCoverage(): CoverageReading | undefined {
    return this._coverage
  }

  async confirm(problems: Problem[], io: CheckIO): Promise<Problem[] | undefined> {
    const byFile = new Map<string, Problem[]>()
    for (const p of problems) byFile.set(p.file, [...(byFile.get(p.file) ?? []), p])
    const still: Problem[] = []
    for (const [file, group] of byFile) {
      const whole = group.some(p => p.key.endsWith(FILE_LEVEL))
      const names = group.map(p => this._names.get(p.key)).filter((n): n is string => !!n)
      const filter = whole || !names.length ? [] : ['-t', `^(${names.map(escapeRegExp).join('|')})$`]
      const m = await this.runReport(['run', file, ...filter], io)
      // A re-run that could not be judged confirms nothing: keep the failures.
      if (m.status !== 'ok') return undefined
      const failing = new Set(m.problems.map(p => p.key))
      still.push(...group.filter(p => failing.has(p.key)))
    }
    return still
  }

  /** One vitest run read through its JSON report; `coverage`: also read v8 coverage of these files (or of everything). */
  private async runReport(args: string[], io: CheckIO, coverage?: 'all' | string[]): Promise<Measurement> {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-vitest-'))
    const out = join(dir, 'report.json')
    const coverageDir = join(dir, 'coverage')
    const coverageArgs = coverage ? [
      '--coverage.enabled=true', '--coverage.provider=v8', '--coverage.reporter=json-summary', `--coverage.reportsDirectory=${coverageDir}`,
      ...(coverage === 'all' ? [] : coverage.map(f => `--coverage.include=${f}`)),
    ] : []
    try {
      const r = await runRecorded(this.name, [
        ...this.options.command, ...args,
        '--reporter=json', `--outputFile=${out}`, '--passWithNoTests', '--includeTaskLocation', '--no-cache', ...coverageArgs, ...(this.options.extraArgs ?? []),
      ], this.options.root, io)
      if (coverage) this._coverage = this.readCoverage(join(coverageDir, 'coverage-summary.json'), coverage)
      let report: VitestReport
      try {
        report = JSON.parse(readFileSync(out, 'utf8')) as VitestReport
      } catch {
        // No report: vitest crashed, timed out or never started.
        return { status: r.timedOut ? 'timeout' : 'error', problems: [], scope: [], error: whyNotJudged('vitest', r, io.timeoutMs) }
      }
      return readVitestReport(this.options.root, report, this._names, this.name)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }

  private readCoverage(file: string, scope: 'all' | string[]): CoverageReading {
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch {
      // vitest wrote no coverage report (it failed to start coverage, or crashed).
      return { status: 'error', error: 'coverage: vitest wrote no coverage report' }
    }
    try {
      const files = parseCoverageSummary(text, abs => toPosixRelative(this.options.root, abs))
      return { status: 'ok', files: scope === 'all' ? files : Object.fromEntries(Object.entries(files).filter(([f]) => scope.includes(f))), scope }
    } catch (error) {
      return { status: 'error', error: `coverage: unreadable coverage report (${(error as Error).message})` }
    }
  }
}

/**
 * A measurement from a vitest JSON report (or the warm runner's report of
 * the same shape). A test id is `file > suite > name`; a test file that fails
 * as a whole (it no longer loads) is one problem keyed by the file. `names`
 * learns the full names (for `-t`) by test id.
 */
export function readVitestReport(root: string, report: VitestReport, names: Map<string, string>, check = 'test'): Measurement {
  const problems: Problem[] = []
  const passed: { key: string; file: string }[] = []
  const scope: string[] = []
  for (const suite of report.testResults) {
    const file = toPosixRelative(root, suite.name)
    scope.push(file)
    let failedTests = 0
    for (const t of suite.assertionResults) {
      const key = [file, ...t.ancestorTitles, t.title].join(' > ')
      names.set(key, t.fullName)
      if (t.status === 'passed') passed.push({ key, file })
      else if (t.status === 'failed') {
        failedTests++
        const why = firstLine(t.failureMessages?.[0])
        problems.push(failingTest(check, key, file, t.location?.line, `${[...t.ancestorTitles, t.title].join(' > ')}${why ? ` — ${why}` : ''}`))
      }
    }
    if (suite.status === 'failed' && !failedTests) {
      problems.push(failingTest(check, `${file}${FILE_LEVEL}`, file, undefined, `test file failed: ${firstLine(suite.message) || 'no tests ran'}`))
    }
  }
  return { status: 'ok', problems, passed, scope }
}
