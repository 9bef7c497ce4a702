import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { boot, makeWorkspace, readText, runs } from '../../helpers.ts'

const hasGo = spawnSync('go', ['version']).status === 0
if (!hasGo) console.warn('go-profile.spec: skipped — `go` is not on PATH (CI installs Debian\'s golang-go)')

describe.skipIf(!hasGo)('Go profile (go.mod → go build, go vet, go test -json)', () => {
  it('keeps a good edit; rolls back compile and test breaks, naming only their new problems', async () => {
    const root = makeWorkspace('gomod')
    const h = await boot(root, { testArgs: [] })

    const kept = await h.exec('edit_file', { path: 'calc/calc.go', old_string: '(amount*(100-percent) + 50) / 100', new_string: '(50 + amount*(100-percent)) / 100' })
    expect(kept).toEqual({ content: 'edited calc/calc.go' })
    // A change in calc re-tests calc and its importer report, nothing else.
    const related = runs(h.session).filter(r => r.argv[1] === 'test').at(-1)!
    expect(related.argv.slice(-2)).toEqual(['./calc', './report'])

    const before = readText(root, 'calc/calc.go')
    const compile = await h.exec('edit_file', { path: 'calc/calc.go', old_string: 'return a + b', new_string: 'return a + c' })
    // report imports calc: Go skips it silently; the judgement names it.
    expect(compile.content).toBe('rolled back: compile failed after edit_file on calc/calc.go\ncalc/calc.go:6 go undefined: c\nreport go not checked: imports example.com/shop/calc, which does not build')
    expect(readText(root, 'calc/calc.go')).toBe(before)

    const test = await h.exec('edit_file', { path: 'report/report.go', old_string: '"%d cents"', new_string: '"%d cent"' })
    expect(test.content).toBe('rolled back: test failed after edit_file on report/report.go\nreport FAIL TestTotal — report_test.go:7: Total = "3 cent"')
    expect(readText(root, 'report/report.go')).toContain('"%d cents"')

    const commands = runs(h.session).map(r => r.argv.slice(0, 3).join(' '))
    expect(commands).toContain('go build ./...')
    expect(commands).toContain('go vet ./...')
    expect(commands).toContain('go test -json')
  })
  it('a test build failure is a regression; the root package is named by its import path; a failing test shows what it printed', async () => {
    const root = makeWorkspace('gomod', {
      'calc/double.go': 'package calc\n\nfunc double(x int) int { return 2 * x }\n',
      'calc/double_test.go': 'package calc\n\nimport "testing"\n\nfunc TestDouble(t *testing.T) {\n\tif double(2) != 4 {\n\t\tt.Fatal("double")\n\t}\n}\n',
      'shop.go': 'package shop\n\n// Greeting says hello.\nfunc Greeting() string { return "hello" }\n',
      'shop_test.go': 'package shop\n\nimport "testing"\n\nfunc TestGreeting(t *testing.T) {\n\tif got := Greeting(); got != "hello" {\n\t\tt.Errorf("Greeting()\\n got: %q\\nwant: %q", got, "hello")\n\t}\n}\n',
    })
    const h = await boot(root, { testArgs: [] })

    // Only a test calls double: go build passes, vet's finding is in a test file the write did not touch: the write's, not
    // test-first work, so vet rolls it back and no test runs (ADR 0037).
    const tests = () => runs(h.session).filter(r => r.argv[1] === 'test').length
    const before = tests()
    const renamed = await h.exec('edit_file', { path: 'calc/double.go', old_string: 'func double(', new_string: 'func twice(' })
    expect(renamed.content).toBe('rolled back: vet failed after edit_file on calc/double.go\ncalc/double_test.go:6 vet undeclared name: double')
    expect(readText(root, 'calc/double.go')).toContain('func double(')
    expect(tests()).toBe(before)

    const greeting = await h.exec('edit_file', { path: 'shop.go', old_string: 'return "hello"', new_string: 'return "hi"' })
    expect(greeting.content).toBe('rolled back: test failed after edit_file on shop.go\nexample.com/shop FAIL TestGreeting — shop_test.go:7: Greeting() | got: "hi" | want: "hello"')

    // Go's own test cache decides what re-runs (it is keyed by content).
    expect(runs(h.session).filter(r => r.argv[1] === 'test').every(r => !r.argv.includes('-count=1'))).toBe(true)
  })

  it('test-first in a package with tests: the new test file is left out (overlay), the other tests are still judged', async () => {
    const root = makeWorkspace('gomod')
    const h = await boot(root, { testArgs: [] })
    const mulTest = 'package calc\n\nimport "testing"\n\nfunc TestMul(t *testing.T) {\n\tif Mul(2, 3) != 6 {\n\t\tt.Fatal("Mul")\n\t}\n}\n'
    const pending = await h.exec('write_file', { path: 'calc/mul_test.go', content: mulTest })
    expect(pending.content.split('\n')).toEqual([
      'created calc/mul_test.go (104 bytes)',
      'warning: kept, but vet has new problems in tests (test-first work? make them pass):',
      'calc/mul_test.go:6 vet undeclared name: Mul',
      'warning: kept, but test has new problems in tests (test-first work? make them pass):',
      'calc/mul_test.go:6 FAIL test file does not build yet (left out of the run): calc/mul_test.go:6: undefined: Mul',
    ])
    expect(readText(root, 'calc/mul_test.go')).toBe(mulTest)
    // The log tells both: vet found something (its run failed), the verdict tolerated it (pass, with the warning).
    expect(runs(h.session).filter(r => r.check === 'vet').at(-1)!.outcome).toBe('fail')
    const verdicts = h.session.ofType('verify/verdict').map(e => e.data)
    expect(verdicts.map(v => [v.check, v.outcome, v.newProblems])).toEqual([
      ['compile', 'pass', []],
      ['vet', 'pass', ['calc/mul_test.go:6 vet undeclared name: Mul']],
      ['test', 'pass', ['calc/mul_test.go:6 FAIL test file does not build yet (left out of the run): calc/mul_test.go:6: undefined: Mul']],
    ])
    expect(verdicts).toEqual(h.results)

    const broken = await h.exec('edit_file', { path: 'calc/calc.go', old_string: '100-percent', new_string: '100+percent' })
    expect(broken.content).toBe('rolled back: test failed after edit_file on calc/calc.go\ncalc FAIL TestDiscount — calc_test.go:13: Discount = 1099, want 899')
    expect(readText(root, 'calc/calc.go')).toContain('100-percent')

    // The implementation arrives: the pending file builds, its test passes, the warning is gone.
    const mul = await h.exec('edit_file', { path: 'calc/calc.go', old_string: '// Add returns', new_string: '// Mul returns a * b.\nfunc Mul(a, b int) int { return a * b }\n\n// Add returns' })
    expect(mul.content).toBe('edited calc/calc.go')
    expect(h.ctx.dstvalid.guardFor(root).accepted('test')!.problems).toEqual([])
    expect(h.ctx.dstvalid.guardFor(root).accepted('test')!.passed('calc::TestMul')).toBe(true)
  })
})
