import { describe, expect, it } from 'vitest'
import { boot, expectRolledBack, makeWorkspace, readText, runs, STOPPED } from '../../helpers.ts'

describe('type-check guard', () => {
  it('keeps a good edit (snapshot committed), then rolls back a type-breaking edit with the exact message, byte for byte', async () => {
    const root = makeWorkspace()
    const h = await boot(root, { tests: 'off' })

    const good = await h.exec('edit_file', { path: 'src/money.ts', old_string: 'return a + b', new_string: 'return b + a' })
    expect(good).toEqual({ content: 'edited src/money.ts' })
    expect(readText(root, 'src/money.ts')).toContain('return b + a')
    // Baseline (cold worker), then the judgement (warm, incremental).
    expect(runs(h.session)).toEqual([
      expect.objectContaining({ check: 'typecheck', argv: ['tsc', '--noEmit', '-p', 'tsconfig.json', '(in-process, cold)'], exitCode: 0, outcome: 'pass' }),
      expect.objectContaining({ check: 'typecheck', argv: ['tsc', '--noEmit', '-p', 'tsconfig.json', '(in-process, incremental)'], exitCode: 0, outcome: 'pass', cwd: h.ctx.dstvalid.guardFor(root).options.root }),
    ])
    expect(h.results).toEqual([
      expect.objectContaining({ sessionId: h.session.id, tool: 'edit_file', paths: ['src/money.ts'], check: 'typecheck', outcome: 'pass', newProblems: [] }),
    ])
    expect(h.snapshot!.judged).toHaveLength(1)
    expect(h.snapshot!.log).toEqual([`commit call:${h.results[0]!.callId}`])
    expect(h.notices.filter(n => n.phase === 'start').map(n => n.text)).toEqual([
      'measuring the baseline state: type-checking…',
      'type-checking after edit_file src/money.ts…',
    ])

    await expectRolledBack(h, 'edit_file', { path: 'src/money.ts', old_string: 'export function add(a: Cents, b: Cents): Cents {', new_string: 'export function add(a: Cents, b: string): Cents {' },
      'rolled back: typecheck failed after edit_file on src/money.ts',
      "src/money.ts:5 TS2322 Type 'string' is not assignable to type 'number'.",
      // The edited file first: its new error decides, its importers (src/cart.ts) are not checked.
      STOPPED,
    )
    expect(h.results.slice(1).map(x => [x.check, x.outcome, x.newProblems.length])).toEqual([['typecheck', 'rolled-back', 1]])
    expect(h.snapshot!.log.at(-1)).toBe(`rollback call:${h.results[1]!.callId}: typecheck failed after edit_file on src/money.ts`)
    // The judgement only: the file is back byte for byte, so the accepted state is known without a re-check.
    expect(runs(h.session).slice(2).map(x => x.outcome)).toEqual(['fail'])
    expect(h.notices.at(-1)).toMatchObject({ level: 'info', text: 'accepted state confirmed: every file is back byte for byte (nothing re-checked)' })
  })
})
