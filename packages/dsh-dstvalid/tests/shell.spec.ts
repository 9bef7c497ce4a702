import { describe, expect, it } from 'vitest'
import { boot, makeWorkspace, readText, runs, STOPPED } from './helpers.ts'

const breakGreeting = `sed -i 's/return .*/return name.lenght/' src/greeting.ts`

describe('shell calls', () => {
  it('with shell: false, are not judged, but the state they leave is re-measured before the next write is judged', async () => {
    const root = makeWorkspace()
    const h = await boot(root, { tests: 'off', shell: false })
    await h.ready()
    const shell = await h.exec('bash', { command: breakGreeting })
    expect(shell.exitCode).toBe(0)
    expect(readText(root, 'src/greeting.ts')).toContain('name.lenght')
    // The break came from the shell, not from this edit: it is measured first, and the edit is kept.
    expect(await h.exec('edit_file', { path: 'src/money.ts', old_string: 'return a + b', new_string: 'return b + a' })).toEqual({ content: 'edited src/money.ts' })
    expect(runs(h.session).map(r => r.outcome)).toEqual(['pass', 'fail', 'fail'])
  })

  it('without a snapshot plugin that tracks shell calls, a shell call that changed files is still judged (files found by comparing stats)', async () => {
    const root = makeWorkspace()
    const h = await boot(root, { tests: 'off' })
    const r = await h.exec('bash', { command: breakGreeting })
    // The stand-in snapshot captures only declared write paths, so there is nothing to restore.
    expect(r.isError).toBe(true)
    expect(r.content.split('\n')).toEqual([
      expect.stringMatching(/^regression detected, NOT rolled back \(nothing to restore for call:c\d+\)$/),
      "src/greeting.ts:2 TS2551 Property 'lenght' does not exist on type 'string'. Did you mean 'length'?",
      STOPPED,
    ])
    expect(h.results.map(x => [x.tool, x.paths, x.outcome])).toEqual([['bash', ['src/greeting.ts'], 'fail']])
    // A shell call that changed nothing is not judged.
    expect((await h.exec('bash', { command: 'true' })).content).toBe('[exit code 0]')
    expect(h.results).toHaveLength(1)
  })
})
