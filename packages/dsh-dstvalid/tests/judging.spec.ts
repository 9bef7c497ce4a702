import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type CheckVerdict, type Problem } from 'dsh-dstvalid'
import { AcceptedState, FILE_LEVEL } from '../src/accepted.ts'
import { SerialQueue } from '../src/queue.ts'
import { diagnostic, failingTest, formatProblem, newProblems, normaliseMessage } from '../src/problems.ts'
import { regressionMessage } from '../src/message.ts'

const rules = { strictTests: false, isTestFile: (f: string) => f.startsWith('tests/') }
const d = (file: string, line: number, message: string, code = 'TS2322') => diagnostic('typecheck', file, line, code, message)

describe('problem identity', () => {
  it('keys diagnostics by file + code + normalised message, never by line', () => {
    expect(d('src/a.ts', 3, 'Type  x\n   is bad').key).toBe(d('src/a.ts', 90, 'Type x is bad').key)
    expect(d('src/a.ts', 3, 'x').key).not.toBe(d('src/b.ts', 3, 'x').key)
    expect(d('src/a.ts', 3, 'x').key).not.toBe(d('src/a.ts', 3, 'x', 'TS2345').key)
    expect(normaliseMessage('see lib.ts:12:4 and (3,9) here')).toBe('see lib.ts and here')
  })

  it('counts duplicates: a second copy of an existing diagnostic is new', () => {
    const before = [d('src/a.ts', 3, 'bad')]
    const after = [d('src/a.ts', 3, 'bad'), d('src/a.ts', 8, 'bad')]
    expect(newProblems(before, after).map(p => p.line)).toEqual([8])
    // Moved code keeps its identity.
    expect(newProblems(before, [d('src/a.ts', 30, 'bad')])).toEqual([])
  })

  it('property: new problems of before+extra are exactly extra (as a multiset of keys)', () => {
    const problem = fc.record({ file: fc.constantFrom('a.ts', 'b.ts'), line: fc.nat(50), message: fc.constantFrom('x', 'y', 'z') })
      .map(p => d(p.file, p.line, p.message))
    fc.assert(fc.property(fc.array(problem, { maxLength: 8 }), fc.array(problem, { maxLength: 8 }), (before, extra) => {
      // Any order of the after-state: here sorted by line, mixing old and new.
      const fresh = newProblems(before, [...before, ...extra].sort((a, b) => (a.line ?? 0) - (b.line ?? 0)))
      const keys = (ps: Problem[]) => ps.map(p => p.key).sort()
      expect(keys(fresh)).toEqual(keys(extra))
    }))
  })

  it('formats a problem as file:line code message', () => {
    expect(formatProblem(d('src/a.ts', 4, "Type 'string' is not assignable to type 'number'."))).toBe("src/a.ts:4 TS2322 Type 'string' is not assignable to type 'number'.")
    expect(formatProblem(failingTest('test', 'tests/a.test.ts > adds', 'tests/a.test.ts', undefined, 'adds — boom'))).toBe('tests/a.test.ts FAIL adds — boom')
  })
})

describe('the accepted state', () => {
  const passing = (key: string, file: string) => ({ key, file })

  it('blames a test that passed before; tolerates one it never had (test-first) unless strict', () => {
    const state = new AcceptedState()
    state.advance({ status: 'ok', problems: [], passed: [passing('tests/a.test.ts > old', 'tests/a.test.ts')], scope: 'all' })
    const after = {
      status: 'ok' as const,
      problems: [failingTest('test', 'tests/a.test.ts > old', 'tests/a.test.ts', 1, 'old'), failingTest('test', 'tests/b.test.ts > new', 'tests/b.test.ts', 1, 'new')],
      scope: ['tests/a.test.ts', 'tests/b.test.ts'],
    }
    const cmp = state.compare(after, rules)
    expect(cmp.regressions.map(p => p.key)).toEqual(['tests/a.test.ts > old'])
    expect(cmp.warnings.map(p => p.key)).toEqual(['tests/b.test.ts > new'])
    expect(state.compare(after, { ...rules, strictTests: true }).regressions).toHaveLength(2)
  })

  it('blames a test file that no longer loads when it had passing tests', () => {
    const state = new AcceptedState()
    state.advance({ status: 'ok', problems: [], passed: [passing('tests/a.test.ts > x', 'tests/a.test.ts')], scope: 'all' })
    const broken = failingTest('test', `tests/a.test.ts${FILE_LEVEL}`, 'tests/a.test.ts', undefined, 'test file failed: SyntaxError')
    expect(state.compare({ status: 'ok', problems: [broken], scope: ['tests/a.test.ts'] }, rules).regressions).toEqual([broken])
  })

  it('treats new diagnostics in test files the write touched as warnings, in product code as regressions', () => {
    const state = new AcceptedState()
    state.advance({ status: 'ok', problems: [], scope: 'all' })
    const cmp = state.compare({ status: 'ok', problems: [d('tests/a.test.ts', 1, 'missing export'), d('src/a.ts', 1, 'bad')], scope: 'all' }, rules, new Set(['tests/a.test.ts']))
    expect(cmp.regressions.map(p => p.file)).toEqual(['src/a.ts'])
    expect(cmp.warnings.map(p => p.file)).toEqual(['tests/a.test.ts'])
  })

  it('a new diagnostic in a test file the write did not touch is a regression, unless its test-first work is pending (ADR 0037)', () => {
    const state = new AcceptedState()
    state.advance({ status: 'ok', problems: [d('tests/pending.test.ts', 2, 'no export subtract')], scope: 'all' })
    const cmp = state.compare({ status: 'ok', problems: [d('tests/a.test.ts', 1, 'no export greet'), d('tests/pending.test.ts', 2, 'string expected')], scope: 'all' }, rules, new Set(['src/a.ts']))
    expect(cmp.regressions.map(p => p.file)).toEqual(['tests/a.test.ts'])
    expect(cmp.warnings.map(p => p.file)).toEqual(['tests/pending.test.ts'])
  })

  it('pairs a test whose id changed only in its numbers (a seed) with its accepted id; a new test beside same-shaped ones stays new', () => {
    const f = 'tests/p.test.ts'
    const state = new AcceptedState()
    state.advance({ status: 'ok', problems: [failingTest('test', `${f} > known bad (seed=7)`, f, 1, 'x')], passed: [passing(`${f} > keeps order (seed=-12)`, f), passing(`${f} > adds 1`, f), passing(`${f} > adds 2`, f)], scope: 'all' })
    const after = (problems: Problem[], passed: string[]) => ({ status: 'ok' as const, problems, passed: passed.map(k => passing(k, f)), scope: [f] })
    // Another seed: not gone, and the known failure is not new.
    const rerun = state.compare(after([failingTest('test', `${f} > known bad (seed=9)`, f, 1, 'x')], [`${f} > keeps order (seed=40)`, `${f} > adds 1`, `${f} > adds 2`]), rules)
    expect([rerun.vanished, rerun.regressions, rerun.warnings]).toEqual([[], [], []])
    // Failing under its new seed: the test that passed, a regression (not a test the accepted state never had).
    const broken = state.compare(after([failingTest('test', `${f} > keeps order (seed=41)`, f, 1, 'x')], [`${f} > adds 1`, `${f} > adds 2`]), rules)
    expect(broken.regressions.map(p => p.key)).toEqual([`${f} > keeps order (seed=41)`])
    // `adds 3` pairs with nothing (both same-shaped tests still run): new, a warning; a skipped `adds 2` is gone.
    const added = state.compare(after([failingTest('test', `${f} > adds 3`, f, 1, 'x')], [`${f} > keeps order (seed=5)`, `${f} > adds 1`, `${f} > adds 2`]), rules)
    expect([added.regressions, added.warnings.map(p => p.key)]).toEqual([[], [`${f} > adds 3`]])
    expect(state.compare(after([], [`${f} > keeps order (seed=5)`, `${f} > adds 1`]), rules).vanished).toEqual([{ key: `${f} > adds 2`, file: f }])
  })

  it('a partial measurement replaces only what it covers', () => {
    const state = new AcceptedState()
    state.advance({ status: 'ok', problems: [d('a.py', 1, 'old')], passed: [passing('t.py::x', 't.py')], scope: 'all' })
    state.advance({ status: 'ok', problems: [d('b.py', 2, 'other')], scope: ['b.py'] })
    expect(state.problems.map(p => p.file)).toEqual(['a.py', 'b.py'])
    expect(state.passed('t.py::x')).toBe(true)
    state.advance({ status: 'ok', problems: [], passed: [], scope: ['t.py'] })
    expect(state.passed('t.py::x')).toBe(false)
  })
})

describe('the rewritten result', () => {
  const verdict = (n: number): CheckVerdict => ({
    check: 'typecheck', outcome: 'fail', flaky: [], warnings: [], durationMs: 1,
    regressions: Array.from({ length: n }, (_, i) => d('src/a.ts', i + 1, `problem number ${i}`)),
  })
  const base = { tool: 'edit_file', files: ['src/a.ts'], leftover: [], recheckErrors: [] }
  const limits = { maxLines: 30, maxBytes: 4096 }

  it('caps the problem list with "… N more"', () => {
    const lines = regressionMessage({ ...base, verdict: verdict(40), rollback: { matched: true, restored: ['src/a.ts'], deleted: [], failed: [], message: '' } }, limits).split('\n')
    expect(lines[0]).toBe('rolled back: typecheck failed after edit_file on src/a.ts')
    expect(lines).toHaveLength(32)
    expect(lines.at(-1)).toBe('… 10 more')
  })

  it('never claims a rollback that did not happen', () => {
    const none = regressionMessage({ ...base, verdict: verdict(1), rollback: undefined }, limits)
    expect(none).toBe('regression detected, NOT rolled back (no snapshot plugin)\nsrc/a.ts:1 TS2322 problem number 0')
    const unmatched = regressionMessage({ ...base, verdict: verdict(1), rollback: { matched: false, restored: [], deleted: [], failed: [], message: 'nothing to restore: no open capture' } }, limits)
    expect(unmatched.split('\n')[0]).toBe('regression detected, NOT rolled back (nothing to restore: no open capture)')
    const failed = regressionMessage({ ...base, verdict: verdict(1), rollback: { matched: true, restored: [], deleted: [], failed: [{ path: 'src/a.ts', error: 'EACCES' }], message: '' } }, limits)
    expect(failed.split('\n')[0]).toBe('rollback FAILED: typecheck failed after edit_file on src/a.ts; could not restore src/a.ts (EACCES)')
    const notBack = regressionMessage({ ...base, verdict: verdict(1), leftover: [d('src/a.ts', 1, 'still here')], rollback: { matched: true, restored: ['src/a.ts'], deleted: [], failed: [], message: '' } }, limits)
    expect(notBack.split('\n').slice(2)).toEqual(['WARNING: after the rollback the workspace is NOT back to the accepted state:', 'src/a.ts:1 TS2322 still here'])
  })
})

describe('the per-workspace queue', () => {
  it('runs tasks one at a time, in order, and survives a failing task', async () => {
    const q = new SerialQueue()
    const order: string[] = []
    const task = (name: string, ms: number, fail = false) => q.run(async () => {
      order.push(`start ${name}`)
      await new Promise(r => setTimeout(r, ms))
      order.push(`end ${name}`)
      if (fail) throw new Error(name)
    })
    const all = Promise.allSettled([task('a', 20, true), task('b', 1), task('c', 5)])
    await all
    expect(order).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c'])
    expect(q.pending).toBe(0)
  })
})
