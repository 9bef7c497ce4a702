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
}

/**
 * The accepted state of one check: the problems it had, and the test ids
 * known to pass. Measured, never assumed: an id that was never measured is
 * unknown, not passing.
 */
export class AcceptedState {
  private _problems: Problem[] = []
  private readonly _passed = new Map<string, string>()
  private _measured = false

  get measured(): boolean {
    return this._measured
  }

  get problems(): readonly Problem[] {
    return this._problems
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
    } else {
      const scope = new Set(m.scope)
      this._problems = this._problems.filter(p => !scope.has(p.file)).concat(m.problems)
      for (const [key, file] of this._passed) if (scope.has(file)) this._passed.delete(key)
    }
    for (const { key, file } of m.passed ?? []) this._passed.set(key, file)
    this._measured = true
  }

  /** Forget everything (disable, or a profile change). */
  reset(): void {
    this._problems = []
    this._passed.clear()
    this._measured = false
  }

  /** Problems `m` has that the accepted state did not, split into regressions and tolerated warnings. */
  compare(m: Measurement, rules: JudgeRules): Comparison {
    const scope = m.scope === 'all' ? undefined : new Set(m.scope)
    const before = scope ? this._problems.filter(p => scope.has(p.file)) : this._problems
    const out: Comparison = { regressions: [], warnings: [] }
    for (const p of newProblems(before, m.problems)) {
      out[this.blame(p, rules) === 'regression' ? 'regressions' : 'warnings'].push(p)
    }
    return out
  }

  private blame(p: Problem, rules: JudgeRules): Blame {
    if (rules.strictTests) return 'regression'
    if (p.kind === 'diagnostic') return rules.isTestFile(p.file) ? 'warning' : 'regression'
    if (this._passed.has(p.key)) return 'regression'
    if (p.key.endsWith(FILE_LEVEL)) {
      // A test file that had tests in the accepted state and now fails as a whole.
      for (const file of this._passed.values()) if (file === p.file) return 'regression'
    }
    // A test the accepted state never had (written before its implementation).
    return 'warning'
  }
}
