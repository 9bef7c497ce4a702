/**
 * The warm test runner on a library whose vitest config has three projects,
 * one of which cannot start here (dsh-testkit's layouts.ts `library`: its `dom`
 * project needs happy-dom, which is not installed), with its solution
 * tsconfig: the project is announced once and left out, test ids carry their
 * project, and checks that cannot change the verdict do not run.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { WarmVitestCheck } from 'dsh-dstvalid'
import { tempDir } from 'dsh-testkit'
import { generateLayout, type Edit, type Layout } from 'dsh-testkit'
import { bootForSuite, runs } from '../../helpers.ts'

// A cold type-check of the solution's programs plus vitest's start: seconds alone, minutes on a shared machine.
vi.setConfig({ testTimeout: 240_000, hookTimeout: 240_000 })

describe('warm runner: vitest projects, one of which cannot start (the testkit library layout)', () => {
  let l: Layout
  // The harness's default `--pool=threads`; the warm runner is the default.
  const suite = bootForSuite(() => (l = generateLayout('library', tempDir('dsh-warm-projects-'))).root)

  const edit = (e: Edit) => suite.h.exec('edit_file', { ...e })
  const testRuns = () => runs(suite.h.session).filter(r => r.check === 'test')
  const deadNotices = () => suite.h.notices.map(n => n.text).filter(t => t.startsWith('vitest project "dom"'))
  const warm = () => {
    const check = suite.h.ctx.dstvalid.guardFor(l.root).checks.find(c => c.name === 'test')
    if (!(check instanceof WarmVitestCheck)) throw new Error('the test check is not the warm runner')
    return check
  }

  it('keeps a good edit; the project that cannot start is announced once and left out of every later run', async () => {
    const { h } = suite
    expect(await edit(l.scenarios.good)).toEqual({ content: `edited ${l.scenarios.good.path}` })
    expect(deadNotices()).toEqual([expect.stringMatching(/^vitest project "dom" cannot start here \(Error: Cannot find package 'happy-dom'.*\); its tests are left out — a pre-existing problem of that project$/)])
    expect([...warm().brokenProjects.keys()]).toEqual(['dom'])
    // The write only (its tests pass: their accepted state cannot change the verdict), warm.
    expect(testRuns().map(r => r.argv.join(' '))).toEqual(['vitest related src/printer.ts --run (warm)'])
    expect(h.results.map(r => [r.check, r.outcome])).toEqual([['typecheck', 'pass'], ['test', 'pass']])
  })

  it('rolls back a behaviour change byte for byte, naming the failing test and its project; related tests measured before are not measured again', async () => {
    const { h } = suite
    const before = readFileSync(join(l.root, l.scenarios.behaviour.path), 'utf8')
    const r = await edit(l.scenarios.behaviour)
    expect(r).toEqual({
      isError: true,
      content: [
        'rolled back: test failed after edit_file on src/parser.ts',
        'test/node/evaluate.test.ts:5 FAIL evaluate > computes with precedence [node] — AssertionError: expected 5 to be 14 // Object.is equality',
        'test/node/evaluate.test.ts:6 FAIL evaluate > honours parentheses [node] — AssertionError: expected 5 to be 20 // Object.is equality',
        "test/unit/parser.test.ts:6 FAIL parse > binds * tighter than + [unit] — AssertionError: expected '(1 + 2)' to be '(1 + (2 * 3))' // Object.is equality",
      ].join('\n'),
    })
    expect(readFileSync(join(l.root, l.scenarios.behaviour.path), 'utf8')).toBe(before)
    // The write, then the newly failing tests alone in their project, file by file until one repeats (that
    // decides the rollback: parser.test.ts is not re-run). Their accepted results are current (the last write
    // measured them): not measured again; no re-check: the file is back byte for byte.
    expect(testRuns().slice(1).map(r => r.argv.join(' '))).toEqual([
      'vitest related src/parser.ts --run --project unit --project node (warm)',
      'vitest run test/node/evaluate.test.ts -t ^(evaluate computes with precedence|evaluate honours parentheses)$ --project node (warm)',
    ])
    expect(deadNotices()).toHaveLength(1)
  })

  it('a write whose type-check regresses runs no test after it', async () => {
    const { h } = suite
    const before = testRuns().length
    const r = await edit(l.scenarios.renameExport)
    expect(r.isError).toBe(true)
    expect(r.content.split('\n')[0]).toBe('rolled back: typecheck failed after edit_file on src/tokens.ts')
    expect(h.results.at(-1)).toMatchObject({ check: 'typecheck', outcome: 'rolled-back' })
    // Not a single test: the type-check decided.
    expect(testRuns().slice(before)).toEqual([])
  })

  it('a write that only touched a test file runs only that test file, once', async () => {
    const { h } = suite
    const before = testRuns().length
    const r = await edit({ path: 'test/unit/tokens.test.ts', old_string: "describe('tokenize', () => {", new_string: "// Token boundaries.\ndescribe('tokenize', () => {" })
    expect(r).toEqual({ content: 'edited test/unit/tokens.test.ts' })
    // One run, after the write.
    expect(testRuns().slice(before).map(r => r.argv.join(' '))).toEqual(['vitest related test/unit/tokens.test.ts --run --project unit --project node (warm)'])
    expect(warm().lastPhases?.files).toBe(1)
    expect(h.results.slice(-2).map(x => [x.check, x.outcome])).toEqual([['typecheck', 'pass'], ['test', 'pass']])
  })

  it('after a change no import graph sees (a fixture a test may read), a write whose tests pass still runs them once', async () => {
    const { h } = suite
    expect(await h.exec('write_file', { path: 'test/fixtures/expressions.txt', content: '2 + 3 * 4\n' })).toEqual({ content: 'created test/fixtures/expressions.txt (10 bytes)' })
    const before = testRuns().length
    const r = await edit({ path: 'src/evaluate.ts', old_string: 'export function evaluate(input: string): number {', new_string: '/** Parse and evaluate. */\nexport function evaluate(input: string): number {' })
    expect(r).toEqual({ content: 'edited src/evaluate.ts' })
    expect(testRuns().slice(before).map(r => r.argv.join(' '))).toEqual(['vitest related src/evaluate.ts --run --project unit --project node (warm)'])
  })
})
