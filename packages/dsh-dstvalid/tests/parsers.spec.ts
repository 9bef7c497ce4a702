import { describe, expect, it } from 'vitest'
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { formatProblem, parseCargoMessages, parseCargoTest, parseGoDiagnostics, parseGoTestJson, parseJunit, FILE_LEVEL } from 'dsh-dstvalid'

describe('toolchain output parsers', () => {
  it('go build / go vet positions', () => {
    const out = '# example.com/shop/calc\n./calc/calc.go:6:13: undefined: c\nvet: calc/x.go:3:2: unreachable code\nnoise\n'
    expect(parseGoDiagnostics('compile', out).map(formatProblem)).toEqual(['calc/calc.go:6 go undefined: c', 'calc/x.go:3 go unreachable code'])
  })

  it('go test -json: failing tests, passing ids, and a package that does not build', () => {
    const events = [
      { Action: 'run', Package: 'm/calc', Test: 'TestA' },
      { Action: 'output', Package: 'm/calc', Test: 'TestA', Output: '    calc_test.go:9: got 1, want 2\n' },
      { Action: 'fail', Package: 'm/calc', Test: 'TestA' },
      { Action: 'pass', Package: 'm/calc', Test: 'TestB' },
      { Action: 'fail', Package: 'm/calc' },
      { Action: 'output', Package: 'm/report', Output: 'FAIL\tm/report [build failed]\n' },
      { Action: 'fail', Package: 'm/report' },
    ].map(e => JSON.stringify(e)).join('\n')
    const m = parseGoTestJson('test', events, pkg => pkg.slice(2), 'report/r.go:3:1: syntax error\n')
    expect(m.problems.map(formatProblem)).toEqual(['calc FAIL TestA — calc_test.go:9: got 1, want 2', 'report FAIL package failed: report/r.go:3:1: syntax error'])
    expect(m.problems[1]!.key).toBe(`report${FILE_LEVEL}`)
    expect(m.passed).toEqual([{ key: 'calc::TestB', file: 'calc' }])
    expect(m.scope).toEqual(['calc', 'report'])
  })

  it('pytest junit xml, including a collection error', () => {
    const root = mkdtempSync(join(tmpdir(), 'dsh-junit-'))
    mkdirSync(join(root, 'tests'))
    writeFileSync(join(root, 'tests', 'test_calc.py'), '')
    const xml = `<?xml version="1.0"?><testsuites><testsuite>
      <testcase classname="tests.test_calc" name="test_add" time="0.01" />
      <testcase classname="tests.test_calc.TestDiscount" name="test_round" time="0.01"><failure message="assert 900 == 899">long</failure></testcase>
      <testcase classname="tests.test_calc" name="test_skip"><skipped message="later" /></testcase>
      <testcase classname="" name="tests.test_calc"><error message="collection failure">ImportError</error></testcase>
    </testsuite></testsuites>`
    const m = parseJunit('test', root, xml)
    expect(m.passed).toEqual([{ key: 'tests/test_calc.py::test_add', file: 'tests/test_calc.py' }])
    expect(m.problems.map(p => [p.key, p.message])).toEqual([
      ['tests/test_calc.py::TestDiscount::test_round', 'TestDiscount::test_round — assert 900 == 899'],
      [`tests/test_calc.py${FILE_LEVEL}`, 'test file failed: collection failure'],
    ])
  })

  it('pytest junit xml: every character reference and CDATA decoded', () => {
    const root = mkdtempSync(join(tmpdir(), 'dsh-junit-'))
    writeFileSync(join(root, 'test_text.py'), '')
    const xml = `<testsuites><testsuite>
      <testcase classname="test_text" name="test_quote"><failure message="assert &#x27;a&#x27; == &#39;b&#39;&#10;  &#8212; diff">long</failure></testcase>
      <testcase classname="test_text" name="test_cdata"><failure><![CDATA[
AssertionError: a && b < c
more]]></failure></testcase>
    </testsuite></testsuites>`
    expect(parseJunit('test', root, xml).problems.map(p => p.message)).toEqual([
      "test_quote — assert 'a' == 'b' — diff",
      'test_cdata — AssertionError: a && b < c',
    ])
  })

  it('cargo check json and libtest output', () => {
    const msg = (level: string, code: string | null, text: string, spans: unknown[]) => JSON.stringify({ reason: 'compiler-message', message: { level, message: text, code: code ? { code } : null, spans } })
    const out = [
      msg('error', 'E0425', 'cannot find value `c` in this scope', [{ file_name: 'src/lib.rs', line_start: 3, is_primary: true }]),
      msg('warning', null, 'unused variable', [{ file_name: 'src/lib.rs', line_start: 9, is_primary: true }]),
      msg('error', null, 'aborting due to 1 previous error', []),
      JSON.stringify({ reason: 'build-finished', success: false }),
    ].join('\n')
    expect(parseCargoMessages('compile', out).map(formatProblem)).toEqual(['src/lib.rs:3 E0425 cannot find value `c` in this scope'])
    // stdout and stderr as cargo writes them; how they interleave is not used.
    const test = parseCargoTest('test', [
      'running 2 tests',
      'test tests::adds ... ok',
      'test tests::discounts ... FAILED',
      'running 1 test',
      'test totals ... ok',
    ].join('\n'), [
      '     Running unittests src/lib.rs (target/debug/deps/shop-1)',
      '     Running tests/api.rs (target/debug/deps/api-2)',
    ].join('\n'))
    expect(test.passed!.map(p => p.key)).toEqual(['src/lib.rs::tests::adds', 'tests/api.rs::totals'])
    expect(test.problems.map(p => p.key)).toEqual(['src/lib.rs::tests::discounts'])
  })
})
