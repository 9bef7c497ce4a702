import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { CoverageCheck } from 'dsh-dstvalid'
import { parseCoverProfile } from '../../src/toolchains/go/check.ts'
import { parseCoverageSummary } from '../../src/toolchains/vitest/check.ts'
import { boot, makeWorkspace, runs, type Harness } from '../helpers.ts'

/** An untested function in src/money.ts (tested at 100% in the fixture). */
const addRefund = {
  path: 'src/money.ts',
  old_string: 'export function applyDiscount',
  new_string: [
    'export function refund(amount: Cents, reason: string): Cents {',
    "  if (reason === 'damaged') return amount",
    "  if (reason === 'late') return Math.round(amount / 2)",
    '  return 0',
    '}',
    '',
    'export function applyDiscount',
  ].join('\n'),
}
const warned = 'warning: kept, but coverage has 1 new problem (not rolled back; fix it):'
const coverageArgs = (h: Harness) => runs(h.session).filter(r => r.check === 'test').map(r => r.argv.filter(a => a.startsWith('--coverage.include')).join(' ') || (r.argv.includes('--coverage.enabled=true') ? 'all' : 'none'))

describe('coverage mode (vitest v8 coverage of the targeted tests)', () => {
  it('warns — never rolls back — when a changed file falls below the threshold; staying below is not new', async () => {
    const root = makeWorkspace('shop', {}, { nodeModules: 'package' })
    const h = await boot(root, { tsconfig: 'tsconfig.full.json', coverage: { threshold: 80, maxDrop: 100 } })
    const r = await h.exec('edit_file', addRefund)
    expect(r).toEqual({ content: ['edited src/money.ts', warned, 'src/money.ts coverage 63.6% of lines covered, below the threshold of 80%'].join('\n') })
    const coverage = h.ctx.dstvalid.guardFor(root).checks.find(c => c.name === 'coverage') as CoverageCheck
    expect(coverage.accepted('src/money.ts')).toBe(63.63)
    expect(h.results.filter(x => x.check === 'coverage').map(x => [x.outcome, x.newProblems])).toEqual([
      ['pass', ['src/money.ts coverage 63.6% of lines covered, below the threshold of 80%']],
    ])
    // Still below, not lower: nothing new to say.
    expect(await h.exec('edit_file', { path: 'src/money.ts', old_string: 'return 0', new_string: 'return 0 // nothing back' })).toEqual({ content: 'edited src/money.ts' })
    // The accepted coverage of the changed file, measured before the first write (no whole-suite run);
    // each write only the changed file, in the same (targeted) test run.
    expect(coverageArgs(h)).toEqual(['--coverage.include=src/money.ts', '--coverage.include=src/money.ts', '--coverage.include=src/money.ts'])
  }, 120_000)

  it('warns when a changed file drops more than maxDrop points from its accepted coverage', async () => {
    const root = makeWorkspace('shop', {}, { nodeModules: 'package' })
    const h = await boot(root, { tsconfig: 'tsconfig.full.json', coverage: { threshold: 50, maxDrop: 5 } })
    expect(await h.exec('edit_file', addRefund)).toEqual({
      content: ['edited src/money.ts', warned, 'src/money.ts coverage 63.6% of lines covered, down from 100% (more than 5 points)'].join('\n'),
    })
  }, 120_000)

  it('threshold 0 switches the mode off: no coverage run, no coverage check', async () => {
    const root = makeWorkspace('shop', {}, { nodeModules: 'package' })
    const h = await boot(root, { tsconfig: 'tsconfig.full.json', coverage: { threshold: 0, maxDrop: 5 } })
    expect(h.ctx.dstvalid.guardFor(root).checks.map(c => c.name)).toEqual(['typecheck', 'test'])
    expect(await h.exec('edit_file', addRefund)).toEqual({ content: 'edited src/money.ts' })
    // One run, after the write: a passing after-state never measures the accepted state (ADR 0019).
    expect(coverageArgs(h)).toEqual(['none'])
  }, 120_000)
})

const hasGo = spawnSync('go', ['version']).status === 0

describe.skipIf(!hasGo)('coverage mode (go test -coverprofile)', () => {
  it('warns when a changed Go file falls below the threshold', async () => {
    const root = makeWorkspace('gomod')
    const h = await boot(root, { testArgs: [], coverage: { threshold: 80, maxDrop: 5 } })
    const r = await h.exec('edit_file', { path: 'calc/calc.go', old_string: '// Add returns a + b.', new_string: '// Sign is untested.\nfunc Sign(n int) int {\n\tif n < 0 {\n\t\treturn -1\n\t}\n\treturn 1\n}\n\n// Add returns a + b.' })
    expect(r).toEqual({ content: ['edited calc/calc.go', warned, 'calc/calc.go coverage 40% of statements covered, down from 100% and below the threshold of 80%'].join('\n') })
  })
})

describe('coverage reports', () => {
  it('reads vitest json-summary lines and Go cover profiles per file', () => {
    const summary = JSON.stringify({
      total: { lines: { total: 7, covered: 6, pct: 85.71 } },
      '/w/src/a.ts': { lines: { total: 6, covered: 6, pct: 100 } },
      '/w/src/b.ts': { lines: { total: 1, covered: 0, pct: 0 } },
    })
    expect(parseCoverageSummary(summary, abs => abs.slice(3))).toEqual({ 'src/a.ts': 100, 'src/b.ts': 0 })
    const profile = [
      'mode: set',
      'example.com/shop/calc/calc.go:5.24,7.2 1 1',
      'example.com/shop/calc/calc.go:10.40,12.2 3 0',
      'example.com/shop/calc/calc.go:10.40,12.2 3 1',
      'example.com/shop/report/report.go:11.30,13.2 1 0',
      'example.com/other/x.go:1.1,2.2 1 1',
    ].join('\n')
    const dirOf: Record<string, string> = { 'example.com/shop/calc': 'calc', 'example.com/shop/report': 'report' }
    expect(parseCoverProfile(profile, f => (dirOf[f.slice(0, f.lastIndexOf('/'))] ? `${dirOf[f.slice(0, f.lastIndexOf('/'))]}/${f.slice(f.lastIndexOf('/') + 1)}` : undefined)))
      .toEqual({ 'calc/calc.go': 100, 'report/report.go': 0 })
  })
})
