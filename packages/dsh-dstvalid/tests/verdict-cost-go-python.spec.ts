/**
 * `go test` and pytest judge the after-state first (ADR 0019): a write the
 * compiler rejects runs no test; a write whose related tests pass never
 * measures the accepted state; only tests that fail after the write are
 * measured on the accepted content — `go test -overlay`, pytest in a copy
 * of the workspace — and a test failing before and after is not the write's.
 */
import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { goCommentOnly } from '../src/toolchains/go/comments.ts'
import { pyCommentOnly } from '../src/toolchains/python/comments.ts'
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
    expect(testRuns(h, true)).toEqual([['go test -json -vet=off ./report', 'workspace', 'pass']])

    expect(await h.exec('edit_file', { path: 'calc/calc.go', old_string: 'return a + b', new_string: 'return b + a' })).toEqual({ content: 'edited calc/calc.go' })
    expect(testRuns(h, true).slice(1)).toEqual([
      ['go test -json -vet=off ./calc ./report', 'workspace', 'fail'],
      ['go test -json -overlay -vet=off ./calc', 'workspace', 'fail'],
    ])
    expect(readText(root, 'calc/calc.go')).toContain('return b + a')
  })
})

describe('goCommentOnly: what in Go source is a comment', () => {
  const src = 'package p\n\n// Sum adds.\nfunc Sum(a, b int) int {\n\ts := "a // b /* c */"\n\treturn a + b + len(s)\n}\n'
  it.each([
    ['a doc comment reworded', '// Sum adds.', '// Sum returns\n// a + b.', true],
    ['a block comment inside a body, on its own line', '\treturn a', '\t/* never negative */\n\treturn a', true],
    ['a trailing comment', 'len(s)\n', 'len(s) // with s\n', true],
    ['a comment-like string', '"a // b /* c */"', '"a // b"', false],
    ['a directive', '// Sum adds.', '//go:noinline', false],
    ['a line break moved: Go inserts a semicolon there', 'return a + b + len(s)', 'return\n\ta + b + len(s)', false],
    ['a block comment with a line break where none was', 'return a', 'return /* one\nline */ a', false],
    ['a block comment with a line break where one was', 'int {', 'int { /* one\nline */', true],
  ])('%s', (_, from, to, same) => {
    expect(goCommentOnly('p/p.go', src, src.replace(from, to))).toBe(same)
  })
  it('a test file, a cgo file or the text before package never counts as comments only', () => {
    expect(goCommentOnly('p/p_test.go', src, src.replace('// Sum adds.', '// Sum.'))).toBe(false)
    const cgo = src.replace('package p\n', 'package p\n\n// #include <stdlib.h>\nimport "C"\n')
    expect(goCommentOnly('p/p.go', cgo, cgo.replace('// Sum adds.', '// Sum.'))).toBe(false)
    expect(goCommentOnly('p/p.go', src, `//go:build linux\n\n${src}`)).toBe(false)
    expect(goCommentOnly('p/p.go', `// Package p.\n${src}`, `// Package p sums.\n${src}`)).toBe(false)
  })
})

describe.skipIf(!hasGo)('go: a comment-only write', () => {
  const checksRun = (h: Awaited<ReturnType<typeof boot>>, from: number) => runs(h.session).slice(from).map(r => `${r.check} ${r.argv.slice(0, 2).join(' ')}`)

  it('runs no compile, vet or test; a directive or a comment in a _test.go file is code', async () => {
    const root = makeWorkspace('gomod')
    const h = await boot(root, { testArgs: [] })
    // The first write measures the baselines; later ones are judged against them.
    expect(await h.exec('edit_file', { path: 'calc/calc.go', old_string: '(amount*(100-percent) + 50) / 100', new_string: '(50 + amount*(100-percent)) / 100' })).toEqual({ content: 'edited calc/calc.go' })
    let from = runs(h.session).length
    expect(await h.exec('edit_file', { path: 'calc/calc.go', old_string: '// Add returns a + b.\nfunc Add(a, b int) int {\n\treturn a + b', new_string: '// Add returns the sum of a and b.\nfunc Add(a, b int) int {\n\t/* Cents never overflow here. */\n\treturn a + b // exact' })).toEqual({ content: 'edited calc/calc.go' })
    expect(checksRun(h, from)).toEqual([])
    expect(h.notices.map(n => n.text)).toEqual(expect.arrayContaining(['compile: not run: only comments and whitespace changed in calc/calc.go', 'test: not run: only comments and whitespace changed in calc/calc.go']))
    // A directive is code: //go:noinline changes what the compiler does.
    from = runs(h.session).length
    expect(await h.exec('edit_file', { path: 'calc/calc.go', old_string: 'func Add(', new_string: '//go:noinline\nfunc Add(' })).toEqual({ content: 'edited calc/calc.go' })
    expect(checksRun(h, from)).toEqual(expect.arrayContaining(['compile go build', 'vet go vet', 'test go test']))
    // An example's `// Output:` comment is its assertion: a comment in a _test.go file is code.
    expect(await h.exec('write_file', { path: 'calc/example_test.go', content: 'package calc\n\nimport "fmt"\n\nfunc ExampleAdd() {\n\tfmt.Println(Add(1, 2))\n\t// Output: 3\n}\n' })).toEqual({ content: 'created calc/example_test.go (88 bytes)' })
    from = runs(h.session).length
    await expectRolledBack(h, 'edit_file', { path: 'calc/example_test.go', old_string: '// Output: 3', new_string: '// Output: 4' },
      'rolled back: test failed after edit_file on calc/example_test.go',
      'calc FAIL ExampleAdd — got: | 3 | want: | 4')
    expect(checksRun(h, from)).toContain('test go test')
  })

  it('still runs the tests when the module\'s code may see a comment: a line number from runtime.Caller', async () => {
    const root = makeWorkspace('gomod', {
      'calc/where.go': 'package calc\n\nimport "runtime"\n\n// Line is the line it is called from.\nfunc Line() int {\n\t_, _, line, _ := runtime.Caller(1)\n\treturn line\n}\n',
      'calc/where_test.go': 'package calc\n\nimport "testing"\n\nfunc TestLine(t *testing.T) {\n\tif l := Line(); l != 6 {\n\t\tt.Fatalf("line %d", l)\n\t}\n}\n',
    })
    const h = await boot(root, { testArgs: [] })
    expect(await h.exec('edit_file', { path: 'calc/calc.go', old_string: '(amount*(100-percent) + 50) / 100', new_string: '(50 + amount*(100-percent)) / 100' })).toEqual({ content: 'edited calc/calc.go' })
    const from = runs(h.session).length
    expect(await h.exec('edit_file', { path: 'calc/calc.go', old_string: '// Add returns a + b.', new_string: '// Add returns the sum\n// of a and b.' })).toEqual({ content: 'edited calc/calc.go' })
    // Compile and vet cannot see a comment; the test of where.go sees the line it moved.
    expect(checksRun(h, from).filter(r => !r.startsWith('test '))).toEqual([])
    expect(checksRun(h, from)).toContain('test go test')
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
    // The kept write's results are the accepted state's: nothing is measured on the accepted content again.
    expect(testRuns(h, true).slice(2)).toEqual([
      ['python3 -m pytest -q -p no:cacheprovider --continue-on-collection-errors tests/test_calc.py tests/test_known.py tests/test_report.py', 'workspace', 'fail'],
    ])
  })
})

describe('pyCommentOnly: what in Python source is a comment', () => {
  const src = 'import os\n\n\ndef total(items):\n    """Sum of the prices."""\n    s = "a # b"\n    return sum(i.price for i in items)  # cents\n'
  it.each([
    ['a comment on its own line, indented', '    s = "a # b"\n', '    s = "a # b"\n    # never negative\n', true],
    ['a trailing comment reworded', '# cents', '# in cents, never negative', true],
    ['a trailing comment removed', '  # cents', '', true],
    ['blank lines added', '\n\ndef total', '\n\n\n\ndef total', true],
    ['a comment-like string', '"a # b"', '"a # c"', false],
    ['a docstring (doctest and __doc__ read it)', '"""Sum of the prices."""', '"""Sum of all prices."""', false],
    ['a line moved out of its block (indentation is code)', '    return sum', 'return sum', false],
    ['a statement commented out', '    s = "a # b"\n', '    # s = "a # b"\n', false],
    ['code after a string that ends in a quote', 'i.price for', 'i.cost for', false],
  ])('%s', (_what, from, to, same) => {
    expect(src.includes(from)).toBe(true)
    expect(pyCommentOnly('p/m.py', src, src.replace(from, to))).toBe(same)
  })

  it('an encoding declaration, a comment on a line with a formatted string and a string left open are code', () => {
    expect(pyCommentOnly('m.py', `# -*- coding: utf-8 -*-\n${src}`, `# -*- coding: latin-1 -*-\n${src}`)).toBe(false)
    expect(pyCommentOnly('m.py', `# a module\n${src}`, `# the module\n${src}`)).toBe(true)
    const f = 'x = f"{d["#"]}"  # first\n'
    expect(pyCommentOnly('m.py', f, f.replace('first', 'second'))).toBe(false)
    expect(pyCommentOnly('m.py', 'x = "open\n', 'x = "open\n# more\n')).toBe(false)
    expect(pyCommentOnly('m.txt', src, `${src}# more\n`)).toBe(false)
  })
})

describe.skipIf(!hasPytest)('pytest: a comment-only write', () => {
  const checksRun = (h: Awaited<ReturnType<typeof boot>>, from: number) => runs(h.session).slice(from).map(r => r.check)

  it('runs no compile and no test; a docstring is code', async () => {
    const h = await boot(makeWorkspace('pyproj'), { testArgs: [] })
    // The first write measures the baselines; later ones are judged against them.
    expect(await h.exec('edit_file', { path: 'calc.py', old_string: 'return a + b', new_string: 'return b + a' })).toEqual({ content: 'edited calc.py' })
    let from = runs(h.session).length
    expect(await h.exec('edit_file', { path: 'calc.py', old_string: 'def discount(amount, percent):\n', new_string: '# Rounds half up.\ndef discount(amount, percent):  # cents\n    # never negative\n' })).toEqual({ content: 'edited calc.py' })
    expect(checksRun(h, from)).toEqual([])
    expect(h.notices.map(n => n.text)).toEqual(expect.arrayContaining(['compile: not run: only comments and whitespace changed in calc.py', 'test: not run: only comments and whitespace changed in calc.py']))
    from = runs(h.session).length
    expect(await h.exec('edit_file', { path: 'calc.py', old_string: 'def add(a, b):\n', new_string: 'def add(a, b):\n    """The sum."""\n' })).toEqual({ content: 'edited calc.py' })
    expect(checksRun(h, from)).toEqual(['compile', 'test'])
  })

  it('still runs the tests when the project\'s code may see a comment: a line number from inspect', async () => {
    const h = await boot(makeWorkspace('pyproj', {
      'where.py': 'import inspect\n\n\ndef line():\n    return inspect.currentframe().f_back.f_lineno\n',
      'tests/test_where.py': 'from where import line\n\n\ndef test_line():\n    assert line() == 5\n',
    }), { testArgs: [] })
    expect(await h.exec('edit_file', { path: 'calc.py', old_string: 'return a + b', new_string: 'return b + a' })).toEqual({ content: 'edited calc.py' })
    const from = runs(h.session).length
    await expectRolledBack(h, 'edit_file', { path: 'tests/test_where.py', old_string: 'def test_line():', new_string: '# Where it is called from.\ndef test_line():' },
      'rolled back: test failed after edit_file on tests/test_where.py',
      'tests/test_where.py FAIL test_line — assert 6 == 5 + where 6 = line()')
    // compile cannot see a comment; the test sees the line it moved.
    expect(checksRun(h, from).filter(c => c === 'compile')).toEqual([])
  })
})
