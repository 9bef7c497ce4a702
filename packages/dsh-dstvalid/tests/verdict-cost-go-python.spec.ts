/**
 * `go test` and pytest judge the after-state first (ADR 0019): a write the
 * compiler rejects runs no test; a write whose related tests pass never
 * measures the accepted state; only tests that fail after the write are
 * measured on the accepted content — `go test -overlay`, pytest in a copy
 * of the workspace — and a test failing before and after is not the write's.
 */
import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { boot, expectRolledBack, makeWorkspace, readText, runs, testRuns } from './helpers.ts'

const hasGo = spawnSync('go', ['version']).status === 0
const hasPytest = spawnSync('python3', ['-m', 'pytest', '--version']).status === 0
if (!hasGo) console.warn('verdict-cost-go-python.spec: Go cases skipped — `go` is not on PATH')
if (!hasPytest) console.warn('verdict-cost-go-python.spec: pytest cases skipped — `python3 -m pytest` is not available')

describe.skipIf(!hasGo)('go test: only the checks that can change the verdict', () => {
  it('a write the compiler rejects runs no test; a byte-identical rollback re-checks nothing', async () => {
    const root = makeWorkspace('gomod')
    const h = await boot(root, { testArgs: [] })
    await expectRolledBack(h, 'edit_file', { path: 'calc/calc.go', old_string: 'func Add(', new_string: 'func Plus(' },
      'rolled back: compile failed after edit_file on calc/calc.go',
      'report/report.go:12 go undefined: calc.Add')
    expect(testRuns(h, true)).toEqual([])
    // The baseline and the after-state (its unchecked packages listed); nothing after the rollback.
    expect(runs(h.session).map(r => `${r.check} ${r.argv.slice(0, 2).join(' ')}`)).toEqual(['compile go build', 'vet go vet', 'compile go build', 'compile go list'])
    expect(h.notices.map(n => n.text)).toContain('accepted state confirmed: every file is back byte for byte (nothing re-checked)')
  })

  it('a passing after-state never measures the accepted state; a test failing before and after is not a regression', async () => {
    const root = makeWorkspace('gomod', {
      'calc/known_test.go': 'package calc\n\nimport "testing"\n\nfunc TestKnown(t *testing.T) {\n\tif Add(1, 1) != 3 {\n\t\tt.Fatal("known to fail")\n\t}\n}\n',
    })
    const h = await boot(root, { testArgs: [] })
    expect(await h.exec('edit_file', { path: 'report/report.go', old_string: 'package report', new_string: '// Package report formats totals.\npackage report' })).toEqual({ content: 'edited report/report.go' })
    expect(testRuns(h, true)).toEqual([['go test -json ./report', 'workspace', 'pass']])

    expect(await h.exec('edit_file', { path: 'calc/calc.go', old_string: 'return a + b', new_string: 'return b + a' })).toEqual({ content: 'edited calc/calc.go' })
    expect(testRuns(h, true).slice(1)).toEqual([
      ['go test -json ./calc ./report', 'workspace', 'fail'],
      ['go test -json -overlay -vet=off ./calc', 'workspace', 'fail'],
    ])
    expect(readText(root, 'calc/calc.go')).toContain('return b + a')
  })
})

describe.skipIf(!hasPytest)('pytest: only the checks that can change the verdict', () => {
  it('a syntax error runs no test; a passing after-state never measures the accepted state', async () => {
    const root = makeWorkspace('pyproj')
    const h = await boot(root, { testArgs: [] })
    await expectRolledBack(h, 'edit_file', { path: 'calc.py', old_string: 'return a + b', new_string: 'return a +' },
      'rolled back: compile failed after edit_file on calc.py',
      'calc.py:2 SyntaxError invalid syntax')
    expect(testRuns(h, true)).toEqual([])
    expect(await h.exec('edit_file', { path: 'calc.py', old_string: 'return a + b', new_string: 'return b + a' })).toEqual({ content: 'edited calc.py' })
    expect(testRuns(h, true)).toEqual([['python3 -m pytest -q -p no:cacheprovider --continue-on-collection-errors tests/test_calc.py tests/test_report.py', 'workspace', 'pass']])
  })

  it('a failing test is measured on the accepted content in a copy: failing before and after is kept, passing before is rolled back', async () => {
    const root = makeWorkspace('pyproj', { 'tests/test_known.py': 'from calc import add\n\n\ndef test_known():\n    assert add(1, 1) == 3\n' })
    const h = await boot(root, { testArgs: [], confirmFlaky: false })
    expect(await h.exec('edit_file', { path: 'calc.py', old_string: 'return a + b', new_string: 'return b + a' })).toEqual({ content: 'edited calc.py' })
    expect(testRuns(h, true)).toEqual([
      ['python3 -m pytest -q -p no:cacheprovider --continue-on-collection-errors tests/test_calc.py tests/test_known.py tests/test_report.py', 'workspace', 'fail'],
      ['python3 -m pytest -q -p no:cacheprovider --continue-on-collection-errors tests/test_known.py', 'copy', 'fail'],
    ])
    await expectRolledBack(h, 'edit_file', { path: 'calc.py', old_string: 'return b + a', new_string: 'return b - a' },
      'rolled back: test failed after edit_file on calc.py',
      'tests/test_calc.py FAIL test_add — assert 125 == 425 + where 125 = add(150, 275)',
      "tests/test_report.py FAIL test_total — AssertionError: assert '1 cents' == '3 cents' - 3 cents ? ^ + 1 cents ? ^")
    // The kept write's results are the accepted state's (ADR 0014): nothing is measured on the accepted content again.
    expect(testRuns(h, true).slice(2)).toEqual([
      ['python3 -m pytest -q -p no:cacheprovider --continue-on-collection-errors tests/test_calc.py tests/test_known.py tests/test_report.py', 'workspace', 'fail'],
    ])
  })
})
