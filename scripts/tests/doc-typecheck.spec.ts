import { describe, expect, it } from 'vitest'
import { collectTsBlocks, optOutLine, typecheckDocs } from '../lib/doc-blocks.ts'
import { main } from '../doc-typecheck.ts'
import { captureMain, fixture, fixtureLine, runScript } from './helpers.ts'

describe('doc-typecheck on a clean tree', () => {
  it('checks every ts block of README.md, docs/** and packages/*/README.md, each as its own module', () => {
    const report = typecheckDocs({ root: fixture('docs-ok') })
    expect(report.blocks.map(b => `${b.file}:${b.fenceLine}${b.optOut ? ' (opt-out)' : ''}`)).toEqual([
      'README.md:5',
      'README.md:12 (opt-out)',
      'docs/guide/deep.md:7',
      'packages/fx-greet/README.md:5',
      'packages/fx-greet/README.md:14',
    ])
    expect(report.diagnostics).toEqual([])
    expect(report.general).toEqual([])
    expect(report.lines).toEqual([
      'opt-out: 1/5 blocks (20%)',
      'doc-typecheck: 4 blocks checked, 0 failing',
      'doc-typecheck: ok',
    ])
    expect(report.ok).toBe(true)
  })
})

describe('doc-typecheck on broken blocks', () => {
  const root = fixture('docs-broken')
  const report = typecheckDocs({ root })

  it('reports each error as <file> (block at line N, +l:c) message', () => {
    expect(report.lines.slice(0, 3)).toEqual([
      "README.md (block at line 12, +3:28) TS2345: Argument of type 'string' is not assignable to parameter of type 'number'.",
      "README.md (block at line 21, +1:7) TS2322: Type 'string' is not assignable to type 'boolean'.",
      'packages/fx-a/README.md (block at line 5, +1:15) TS2305: Module \'"fx-a"\' has no exported member \'subtract\'.',
    ])
    expect(report.ok).toBe(false)
    expect(report.lines.at(-1)).toBe('doc-typecheck: FAILED')
  })

  it('points at the offending line of the Markdown file (fence line + l)', () => {
    const [first, indented, pkg] = report.diagnostics
    expect(fixtureLine(fixture('docs-broken', 'README.md'), first.block.fenceLine + first.line).slice(first.column - 1)).toBe("'2')")
    // Columns count from the block's own indentation (the fence's indent is stripped).
    expect(fixtureLine(fixture('docs-broken', 'README.md'), indented.block.fenceLine + indented.line).trim().slice(indented.column - 1)).toMatch(/^flag/)
    expect(fixtureLine(fixture('docs-broken', 'packages/fx-a/README.md'), pkg.block.fenceLine + pkg.line).slice(pkg.column - 1)).toMatch(/^subtract/)
  })

  it('does not check an ignore-check block, but counts it', () => {
    expect(report.diagnostics.some(d => d.block.optOut)).toBe(false)
    expect(report.lines).toContain('opt-out: 1/5 blocks (20%)')
    expect(report.lines).toContain('doc-typecheck: 4 blocks checked, 3 failing')
  })
})

describe('the opt-out ratio', () => {
  it('fails above 20% even when every checked block compiles', () => {
    const report = typecheckDocs({ root: fixture('docs-optout') })
    expect(report.diagnostics).toEqual([])
    expect(report.lines).toEqual([
      'opt-out: 1/4 blocks (25%)',
      'too many opted-out blocks: above 20% (make the sketches compile, or cut them)',
      'doc-typecheck: 3 blocks checked, 0 failing',
      'doc-typecheck: FAILED',
    ])
    expect(report.ok).toBe(false)
    expect(typecheckDocs({ root: fixture('docs-optout'), maxOptOutRatio: 0.25 }).ok).toBe(true)
  })

  it('prints the ratio', () => {
    expect(optOutLine(0, 0)).toBe('opt-out: 0/0 blocks (0%)')
    expect(optOutLine(1, 3)).toBe('opt-out: 1/3 blocks (33.3%)')
    expect(collectTsBlocks(fixture('docs-optout')).filter(b => b.optOut)).toHaveLength(1)
  })
})

describe('scripts/doc-typecheck.ts', () => {
  it('exits 1 with the located errors on a broken tree (run through tsx)', async () => {
    const broken = await runScript('doc-typecheck', ['--root', fixture('docs-broken')])
    expect(broken.exitCode).toBe(1)
    expect(broken.stdout).toContain('README.md (block at line 12, +3:28) TS2345')
  })

  it('exits 0 on a clean tree, and 2 on a bad --max-opt-out', async () => {
    const clean = await captureMain(main, ['--root', fixture('docs-ok')])
    expect(clean.exitCode).toBe(0)
    expect(clean.stdout).toContain('opt-out: 1/5 blocks (20%)')
    const loose = await captureMain(main, ['--root', fixture('docs-optout'), '--max-opt-out', '0.25'])
    expect(loose.exitCode).toBe(0)
    const bad = await captureMain(main, ['--max-opt-out', 'lots'])
    expect(bad).toEqual({ exitCode: 2, stdout: '' })
  })
})
