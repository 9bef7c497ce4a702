import { newProblems } from './problems.ts'
import type { Measurement, Problem } from './types.ts'

/** The key suffix of a test-file-level failure (the file failed to load or compile). */
export const FILE_LEVEL = '\u0000(file)'

/** How a new problem is treated. */
export type Blame = 'regression' | 'warning'

export interface JudgeRules {
  /** Test-first work: new failing tests and new diagnostics in test files become regressions too. */
  strictTests: boolean
  /** Whether a workspace-relative file is a test file. */
  isTestFile(file: string): boolean
}

export interface Comparison {
  regressions: Problem[]
  warnings: Problem[]
  /**
   * Failing tests in files the accepted state never measured and the write
   * did not touch: nothing to compare with, so neither blamed nor excused.
   */
  unknown: Problem[]
  /** Tests that passed in the accepted state and that the measurement no longer reports (not collected, or skipped). */
  vanished: { key: string; file: string }[]
}

/** The code of a problem naming tests that passed in the accepted state and no longer run. */
export const GONE = 'GONE'

/** How many vanished test names one problem line shows. */
const GONE_NAMES = 5

/**
 * The accepted state of one check: the problems it had, and the test ids
 * known to pass. Measured, never assumed: an id that was never measured is
 * unknown, not passing.
 */
export class AcceptedState {
  private _problems: Problem[] = []
  private readonly _passed = new Map<string, string>()
  private _measured = false
  /** Files (test files, packages) some measurement covered; `_all`: a whole-workspace measurement did. */
  private readonly _covered = new Set<string>()
  private _all = false

  get measured(): boolean {
    return this._measured
  }

  get problems(): readonly Problem[] {
    return this._problems
  }

  /** Whether some measurement of the accepted state covered this file (a test file, a package). */
  covers(file: string): boolean {
    return this._all || this._covered.has(file)
  }

  /** Whether a test id passed in the accepted state. */
  passed(key: string): boolean {
    return this._passed.has(key)
  }

  /** Replace what `m` covers with what it measured. */
  advance(m: Measurement): void {
    if (m.scope === 'all') {
      this._problems = [...m.problems]
      this._passed.clear()
      this._all = true
    } else {
      const scope = new Set(m.scope)
      for (const file of scope) this._covered.add(file)
      this._problems = this._problems.filter(p => !scope.has(p.file)).concat(m.problems)
      for (const [key, file] of this._passed) if (scope.has(file)) this._passed.delete(key)
    }
    for (const { key, file } of m.passed ?? []) this._passed.set(key, file)
    this._measured = true
  }

  /** The whole state as one measurement (what a turn's stop compares with the turn's start when nothing needs measuring again). */
  asMeasurement(): Measurement {
    return { status: 'ok', problems: [...this._problems], scope: 'all', passed: [...this._passed].map(([key, file]) => ({ key, file })) }
  }

  /** An independent copy (the state a turn's change is judged against at its end). */
  clone(): AcceptedState {
    const copy = new AcceptedState()
    copy._problems = [...this._problems]
    for (const [key, file] of this._passed) copy._passed.set(key, file)
    for (const file of this._covered) copy._covered.add(file)
    copy._all = this._all
    copy._measured = this._measured
    return copy
  }

  /** Forget everything (disable, or a profile change). */
  reset(): void {
    this._problems = []
    this._passed.clear()
    this._covered.clear()
    this._all = false
    this._measured = false
  }

  /**
   * Problems `m` has that the accepted state did not, split into regressions,
   * tolerated warnings, and failures with nothing measured to compare with.
   * `touched`: workspace-relative files the judged write changed.
   */
  compare(m: Measurement, rules: JudgeRules, touched: ReadonlySet<string> = new Set()): Comparison {
    const scope = m.scope === 'all' ? undefined : new Set(m.scope)
    const before = scope ? this._problems.filter(p => scope.has(p.file)) : this._problems
    const renamed = this.renamed(m, before)
    // Compared under the accepted id of a test whose name carries a number that changed (a seed).
    const asAccepted = new Map(m.problems.map(p => [renamed.has(p.key) ? { ...p, key: renamed.get(p.key)! } : p, p]))
    const out: Comparison = { regressions: [], warnings: [], unknown: [], vanished: this.vanished(m, m.complete ? undefined : scope, new Set(renamed.values())) }
    for (const seen of newProblems(before, [...asAccepted.keys()])) {
      const p = asAccepted.get(seen)!
      const blame = this.blame(seen, rules, touched)
      out[blame === 'regression' ? 'regressions' : blame === 'warning' ? 'warnings' : 'unknown'].push(p)
    }
    return out
  }

  /**
   * Tests `m` reports under an id the accepted state does not know, paired
   * one to one with accepted tests of the same file that `m` no longer
   * reports and whose ids differ only in their numbers: the same test,
   * whose name carries a number chosen at run time (a property test's seed,
   * `doubles (with seed=-1843592893)`; a timestamp). New id → accepted id.
   * A test added next to others of the same shape (`adds 3` beside `adds 1`
   * and `adds 2`, both still reported) pairs with nothing: it is new.
   */
  private renamed(m: Measurement, before: readonly Problem[]): Map<string, string> {
    const reported = new Set([...(m.passed ?? []).map(p => p.key), ...m.problems.map(p => p.key)])
    const known = new Set([...this._passed.keys(), ...before.map(p => p.key)])
    const left = new Map<string, string[]>()
    const park = (key: string, file: string) => {
      if (key.endsWith(FILE_LEVEL) || reported.has(key)) return
      const shape = `${file}\u0000${stableTestKey(key)}`
      left.set(shape, [...(left.get(shape) ?? []), key])
    }
    for (const [key, file] of this._passed) park(key, file)
    for (const p of before) if (p.kind === 'test') park(p.key, p.file)
    const out = new Map<string, string>()
    for (const t of [...(m.passed ?? []), ...m.problems.filter(p => p.kind === 'test')]) {
      if (known.has(t.key) || t.key.endsWith(FILE_LEVEL)) continue
      const shape = `${t.file}\u0000${stableTestKey(t.key)}`
      const old = left.get(shape)?.shift()
      if (old !== undefined && old !== t.key) out.set(t.key, old)
    }
    return out
  }

  /**
   * Tests that passed in the accepted state, belong to what `m` measured,
   * and `m` reports neither passing nor failing: no longer collected, or
   * skipped. A test file (package) that fails as a whole in `m` is blamed
   * as such, not for each of its tests.
   */
  private vanished(m: Measurement, scope: ReadonlySet<string> | undefined, renamed: ReadonlySet<string>): { key: string; file: string }[] {
    const reported = new Set([...(m.passed ?? []).map(p => p.key), ...m.problems.map(p => p.key), ...renamed])
    const broken = new Set(m.problems.filter(p => p.key.endsWith(FILE_LEVEL)).map(p => p.file))
    const out: { key: string; file: string }[] = []
    for (const [key, file] of this._passed) {
      if ((scope && !scope.has(file)) || reported.has(key) || broken.has(file)) continue
      out.push({ key, file })
    }
    return out
  }

  private blame(p: Problem, rules: JudgeRules, touched: ReadonlySet<string>): Blame | 'unknown' {
    // The write's own breakage (a file it touched no longer parses): whatever the accepted state knew.
    if (p.own) return 'regression'
    if (p.kind === 'test') {
      if (this._passed.has(p.key)) return 'regression'
      if (p.key.endsWith(FILE_LEVEL)) {
        // A test file that had tests in the accepted state and now fails as a whole.
        for (const file of this._passed.values()) if (file === p.file) return 'regression'
      }
      // A test in a file never measured that the write did not touch: no accepted result to judge it by.
      if (!this.covers(p.file) && !touched.has(p.file)) return 'unknown'
    }
    if (rules.strictTests) return 'regression'
    if (p.kind === 'diagnostic') {
      if (!rules.isTestFile(p.file)) return 'regression'
      // Test-first work is in a test file the write touched, or in one whose test-first work is pending (it had diagnostics
      // already). A test file another write broke (a source export renamed under it) is a regression, as the naive check
      // says: rolled back by the type-check, no test run (ADR 0037; Go's test files the same way).
      return touched.has(p.file) || this._problems.some(q => q.kind === 'diagnostic' && q.file === p.file) ? 'warning' : 'regression'
    }
    // A test the accepted state never had (written before its implementation).
    return 'warning'
  }
}

/**
 * One problem per test file (package) for tests that no longer run: how
 * many, and the first few names (`calc GONE 2 tests that passed no longer run …: TestAdd, TestDiscount`).
 */
export function goneProblems(check: string, tests: readonly { key: string; file: string }[], what: (one: boolean) => string): Problem[] {
  const byFile = new Map<string, string[]>()
  for (const t of tests) byFile.set(t.file, [...(byFile.get(t.file) ?? []), testName(t)])
  return [...byFile].sort(([a], [b]) => a.localeCompare(b)).map(([file, names]) => {
    names.sort()
    const shown = names.slice(0, GONE_NAMES).join(', ')
    const more = names.length > GONE_NAMES ? `, … ${names.length - GONE_NAMES} more` : ''
    const one = names.length === 1
    return { check, kind: 'test' as const, key: `${file}\u0000${GONE}`, file, code: GONE, message: `${names.length} test${one ? '' : 's'} ${what(one)}: ${shown}${more}` }
  })
}

/**
 * A test id with its numbers blanked: what stays the same when a test's name
 * carries a number chosen at run time (fast-check's `(with seed=…)`, a
 * timestamp). Used only to pair an id that disappeared with one that
 * appeared in the same file, never to merge ids that both still run.
 */
export function stableTestKey(key: string): string {
  return key.replace(/-?\d+/g, '#')
}

/** A test's name without its file or package (`TestAdd`, `test_add[2]`, `money > adds`). */
export function testName(test: { key: string; file: string }): string {
  return test.key.startsWith(test.file) ? test.key.slice(test.file.length).replace(/^(?:::| > )/, '') : test.key
}
