import { describe, expect, it } from 'vitest'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { formatProblem } from '../../src/problems.ts'
import { parseCargoMessages, parseCargoTest } from '../../src/toolchains/rust/check.ts'
import { parseGoDiagnostics } from '../../src/toolchains/go/check.ts'
import { parseGoTestJson, readGoTestRun } from '../../src/toolchains/go/events.ts'
import { parseJunit } from '../../src/toolchains/python/check.ts'
import { FILE_LEVEL } from '../../src/accepted.ts'
import { tempDir } from 'dsh-testkit'

describe('toolchain output parsers', () => {
  it('go build / go vet positions', () => {
    const out = '# example.com/shop/calc\n./calc/calc.go:6:13: undefined: c\nvet: calc/x.go:3:2: unreachable code\nnoise\n'
    expect(parseGoDiagnostics('compile', out).map(formatProblem)).toEqual(['calc/calc.go:6 go undefined: c', 'calc/x.go:3 go unreachable code'])
  })

  it('go test -json: failing tests with what they printed, passing ids, a package that does not build', () => {
    const events = [
      { Action: 'run', Package: 'm/calc', Test: 'TestA' },
      { Action: 'output', Package: 'm/calc', Test: 'TestA', Output: '=== RUN   TestA\n' },
      { Action: 'output', Package: 'm/calc', Test: 'TestA', Output: '    calc_test.go:9: Discount(999, 10):\n' },
      { Action: 'output', Package: 'm/calc', Test: 'TestA', Output: '        want: 899\n' },
      { Action: 'output', Package: 'm/calc', Test: 'TestA', Output: '         got: 900\n' },
      { Action: 'output', Package: 'm/calc', Test: 'TestA', Output: '--- FAIL: TestA (0.00s)\n' },
      { Action: 'fail', Package: 'm/calc', Test: 'TestA' },
      { Action: 'pass', Package: 'm/calc', Test: 'TestB' },
      { Action: 'fail', Package: 'm/calc' },
      { Action: 'output', Package: 'm', Output: 'FAIL\tm [build failed]\n' },
      { Action: 'fail', Package: 'm' },
    ].map(e => JSON.stringify(e)).join('\n')
    const m = parseGoTestJson('test', events, pkg => (pkg === 'm' ? 'm' : pkg.slice(2)), '# m [m.test]\n./r_test.go:3:1: undefined: y\n')
    expect(m.problems.map(formatProblem)).toEqual([
      'calc FAIL TestA — calc_test.go:9: Discount(999, 10): | want: 899 | got: 900',
      'm FAIL tests do not build: r_test.go:3: undefined: y',
    ])
    expect(m.problems[1]!.key).toBe(`m${FILE_LEVEL}`)
    expect(m.passed).toEqual([{ key: 'calc::TestB', file: 'calc' }])
    expect(m.scope).toEqual(['calc', 'm'])
  })

  // The three shapes of a test build failure (see src/checks/go-events.ts). Go 1.19 is
  // run for real in go-profile.spec; the newer streams are written from Go's
  // documented test2json format (cmd/test2json: build-output, build-fail, FailedBuild).
  const passingReport = [
    { Action: 'start', Package: 'm/report' },
    { Action: 'run', Package: 'm/report', Test: 'TestTotal' },
    { Action: 'pass', Package: 'm/report', Test: 'TestTotal' },
    { Action: 'pass', Package: 'm/report' },
  ].map(e => JSON.stringify(e))
  const buildStderr = '# m/calc [m/calc.test]\ncalc/calc_test.go:6:12: undefined: Add\ncalc/new_test.go:4:9: undefined: Mul\n'
  const expectBuildFailure = (stdout: string, stderr: string) => {
    const run = readGoTestRun('test', stdout, stderr, pkg => pkg.slice(2))
    expect(run.measurement.problems.map(formatProblem)).toEqual(['calc FAIL tests do not build: calc/calc_test.go:6: undefined: Add; calc/new_test.go:4: undefined: Mul'])
    expect(run.measurement.passed).toEqual([{ key: 'report::TestTotal', file: 'report' }])
    expect([...run.buildFailed.get('m/calc')!].map(e => e.file)).toEqual(['calc/calc_test.go', 'calc/new_test.go'])
  }

  it('go ≤ 1.21: the build failure is a plain-text FAIL line between the JSON events, errors on stderr', () => {
    expectBuildFailure(['FAIL\tm/calc [build failed]', ...passingReport].join('\n'), buildStderr)
  })

  it('go 1.22–1.23: the FAIL line is an output event of the package, errors on stderr', () => {
    const stdout = [
      { Action: 'start', Package: 'm/calc' },
      { Action: 'output', Package: 'm/calc', Output: 'FAIL\tm/calc [build failed]\n' },
      { Action: 'fail', Package: 'm/calc', Elapsed: 0 },
    ].map(e => JSON.stringify(e)).concat(passingReport).join('\n')
    expectBuildFailure(stdout, buildStderr)
  })

  it('go ≥ 1.24: build-output / build-fail events and FailedBuild, nothing on stderr', () => {
    const build = 'm/calc [m/calc.test]'
    const stdout = [
      { ImportPath: build, Action: 'build-output', Output: `# ${build}\n` },
      { ImportPath: build, Action: 'build-output', Output: 'calc/calc_test.go:6:12: undefined: Add\n' },
      { ImportPath: build, Action: 'build-output', Output: 'calc/new_test.go:4:9: undefined: Mul\n' },
      { ImportPath: build, Action: 'build-fail' },
      { Action: 'start', Package: 'm/calc' },
      { Action: 'output', Package: 'm/calc', Output: 'FAIL\tm/calc [build failed]\n' },
      { Action: 'fail', Package: 'm/calc', Elapsed: 0, FailedBuild: build },
    ].map(e => JSON.stringify(e)).concat(passingReport).join('\n')
    expectBuildFailure(stdout, '')
  })

  it('pytest junit xml, including a collection error', () => {
    const root = tempDir('dsh-junit-')
    mkdirSync(join(root, 'tests'))
    writeFileSync(join(root, 'tests', 'test_calc.py'), '')
    const xml = `<?xml version="1.0"?><testsuites><testsuite>
      <testcase classname="tests.test_calc" name="test_add" time="0.01" />
      <testcase classname="tests.test_calc.TestDiscount" name="test_round" time="0.01"><failure message="assert 900 == 899">long</failure></testcase>
      <testcase classname="tests.test_calc" name="test_skip"><skipped message="later" /></testcase>
      <testcase classname="tests.test_calc" name="test_fixture"><error message="failed on setup with &quot;file ${root}/tests/test_calc.py, line 4&quot;">E fixture</error></testcase>
      <testcase classname="" name="tests.test_calc"><error message="collection failure">ImportError while importing test module '${root}/tests/test_calc.py'.
Traceback:
tests/test_calc.py:1: in &lt;module&gt;
    from shop import frequencies
E   ImportError: cannot import name 'frequencies' from 'shop' (${root}/shop/__init__.py)</error></testcase>
    </testsuite></testsuites>`
    const m = parseJunit('test', root, xml)
    expect(m.passed).toEqual([{ key: 'tests/test_calc.py::test_add', file: 'tests/test_calc.py' }])
    expect(m.problems.map(p => [p.key, p.message])).toEqual([
      ['tests/test_calc.py::TestDiscount::test_round', 'TestDiscount::test_round — assert 900 == 899'],
      ['tests/test_calc.py::test_fixture', 'test_fixture — failed on setup with "file tests/test_calc.py, line 4"'],
      [`tests/test_calc.py${FILE_LEVEL}`, "test file failed to load: ImportError: cannot import name 'frequencies' from 'shop' (shop/__init__.py)"],
    ])
  })

  it('pytest junit xml: every character reference and CDATA decoded', () => {
    const root = tempDir('dsh-junit-')
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
