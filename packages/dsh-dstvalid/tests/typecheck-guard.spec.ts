import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { boot, cleanupWorkspaces, makeWorkspace, readText, runs, type Harness } from './helpers.ts'

let h: Harness | undefined
afterEach(async () => { await h?.dispose(); h = undefined })
afterAll(cleanupWorkspaces)

describe('type-check guard', () => {
  it('keeps a good edit, records what ran, and commits the snapshot', async () => {
    const root = makeWorkspace()
    h = await boot(root, { tests: 'off' })
    const r = await h.exec('edit_file', { path: 'src/money.ts', old_string: 'return a + b', new_string: 'return b + a' })
    expect(r).toEqual({ content: 'edited src/money.ts' })
    expect(readText(root, 'src/money.ts')).toContain('return b + a')
    const ran = runs(h.session)
    // Baseline (cold), then the judgement (incremental).
    expect(ran.map(x => [x.check, x.argv.at(-1), x.outcome])).toEqual([
      ['typecheck', '(in-process, cold)', 'pass'],
      ['typecheck', '(in-process, incremental)', 'pass'],
    ])
    expect(ran[1]).toMatchObject({ argv: ['tsc', '--noEmit', '-p', 'tsconfig.json', '(in-process, incremental)'], exitCode: 0 })
    expect(h.results).toEqual([
      expect.objectContaining({ sessionId: h.session.id, tool: 'edit_file', paths: ['src/money.ts'], check: 'typecheck', outcome: 'pass', newProblems: [] }),
    ])
    expect(h.snapshot!.judged).toHaveLength(1)
    expect(h.snapshot!.log).toEqual([`commit call:${h.results[0]!.callId}`])
  })

  it('rolls back a type-breaking edit with the exact message, restoring the file byte for byte', async () => {
    const root = makeWorkspace()
    h = await boot(root, { tests: 'off' })
    const before = readText(root, 'src/money.ts')
    const r = await h.exec('edit_file', { path: 'src/money.ts', old_string: 'export function add(a: Cents, b: Cents): Cents {', new_string: 'export function add(a: Cents, b: string): Cents {' })
    expect(r.isError).toBe(true)
    expect(r.content).toBe([
      'rolled back: typecheck failed after edit_file on src/money.ts',
      "src/money.ts:5 TS2322 Type 'string' is not assignable to type 'number'.",
      "src/cart.ts:10 TS2345 Argument of type 'number' is not assignable to parameter of type 'string'.",
    ].join('\n'))
    expect(readText(root, 'src/money.ts')).toBe(before)
    expect(h.results.map(x => [x.check, x.outcome])).toEqual([['typecheck', 'rolled-back']])
    // Baseline, judgement, re-check after the rollback.
    expect(runs(h.session).map(x => x.outcome)).toEqual(['pass', 'fail', 'pass'])
  })
})
