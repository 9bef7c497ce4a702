import { spawnSync } from 'node:child_process'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { boot, cleanupWorkspaces, makeWorkspace, readText, runs, type Harness } from './helpers.ts'

const hasGo = spawnSync('go', ['version']).status === 0
if (!hasGo) console.warn('go-profile.spec: skipped — `go` is not on PATH (CI installs Debian\'s golang-go)')

let h: Harness | undefined
afterEach(async () => { await h?.dispose(); h = undefined })
afterAll(cleanupWorkspaces)

describe.skipIf(!hasGo)('Go profile (go.mod → go build, go vet, go test -json)', () => {
  it('keeps a good edit; rolls back compile and test breaks, naming only their new problems', async () => {
    const root = makeWorkspace('gomod')
    h = await boot(root, { testArgs: [] })

    const kept = await h.exec('edit_file', { path: 'calc/calc.go', old_string: '// Add returns a + b.', new_string: '// Add returns the sum of a and b.' })
    expect(kept).toEqual({ content: 'edited calc/calc.go' })
    // A change in calc re-tests calc and its importer report, nothing else.
    const related = runs(h.session).filter(r => r.argv[1] === 'test').at(-1)!
    expect(related.argv.slice(-2)).toEqual(['./calc', './report'])

    const before = readText(root, 'calc/calc.go')
    const compile = await h.exec('edit_file', { path: 'calc/calc.go', old_string: 'return a + b', new_string: 'return a + c' })
    expect(compile.content).toBe('rolled back: compile failed after edit_file on calc/calc.go\ncalc/calc.go:6 go undefined: c')
    expect(readText(root, 'calc/calc.go')).toBe(before)

    const test = await h.exec('edit_file', { path: 'report/report.go', old_string: '"%d cents"', new_string: '"%d cent"' })
    expect(test.content).toBe('rolled back: test failed after edit_file on report/report.go\nreport FAIL TestTotal — report_test.go:7: Total = "3 cent"')
    expect(readText(root, 'report/report.go')).toContain('"%d cents"')

    const commands = runs(h.session).map(r => r.argv.slice(0, 3).join(' '))
    expect(commands).toContain('go build ./...')
    expect(commands).toContain('go vet ./...')
    expect(commands).toContain('go test -json')
  })
})
