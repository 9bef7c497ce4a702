/**
 * A vet failure the project already had is never new: `go test` runs with
 * `-vet=off` after the write and on the accepted content alike (vet does
 * not read `-overlay`), and vet's findings are judged by the vet check
 * against its own accepted state.
 */
import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { boot, expectRolledBack, makeWorkspace, readText, testRuns } from '../../helpers.ts'

const hasGo = spawnSync('go', ['version']).status === 0
if (!hasGo) console.warn('go-vet-accepted.spec: skipped — `go` is not on PATH (CI installs Debian\'s golang-go)')

describe.skipIf(!hasGo)('go: a package whose test build already fails vet', () => {
  it('keeps a comment elsewhere, still runs that package\'s tests, and names only a new vet failure', async () => {
    const root = makeWorkspace('gomod', {
      // go test's own vet runs the printf check: report's tests do not build under a plain `go test`.
      'report/colors.go': 'package report\n\nimport "fmt"\n\n// Colors says how many colors a terminal has.\nvar Colors = fmt.Sprintf("%d colors", "many")\n',
      // A stack trace: a comment that moves lines can change what a test sees, so a comment runs the tests.
      'report/trace.go': 'package report\n\nimport "runtime/debug"\n\n// Trace is the caller\'s stack.\nfunc Trace() string { return string(debug.Stack()) }\n',
    })
    const plain = spawnSync('go', ['test', './report'], { cwd: root, encoding: 'utf8' })
    expect(plain.stdout + plain.stderr).toContain('report/colors.go:6:14: fmt.Sprintf format %d has arg "many" of wrong type string')
    const h = await boot(root, { testArgs: [] })

    expect(await h.exec('edit_file', { path: 'calc/calc.go', old_string: '// Add returns a + b.', new_string: '// Add returns a + b,\n// in cents.' })).toEqual({ content: 'edited calc/calc.go' })
    // report reaches calc: its tests run (and pass) despite the vet failure; nothing is measured on the accepted content.
    expect(testRuns(h)).toEqual([['go test -json -vet=off ./calc ./report', 'pass']])
    expect(h.ctx.dstvalid.guardFor(root).accepted('test')!.passed('report::TestTotal')).toBe(true)

    await expectRolledBack(h, 'edit_file', { path: 'report/report.go', old_string: '"%d cents"', new_string: '"%s cents"' },
      'rolled back: vet failed after edit_file on report/report.go',
      'report/report.go:12 vet fmt.Sprintf format %s has arg calc.Add(a, b) of wrong type int')
    expect(testRuns(h)).toHaveLength(1)

    // A behaviour break in the package vet faults is the test's to find.
    await expectRolledBack(h, 'edit_file', { path: 'report/report.go', old_string: '"%d cents"', new_string: '"%d cent"' },
      'rolled back: test failed after edit_file on report/report.go',
      'report FAIL TestTotal — report_test.go:7: Total = "3 cent"')
    expect(readText(root, 'report/colors.go')).toContain('"%d colors", "many"')
  })
})
