import { describe, expect, it } from 'vitest'
import { boot, expectRolledBack, makeWorkspace, readText, runs, STOPPED } from './helpers.ts'

/** Already broken before the agent arrives: two type errors. */
const legacy = `import { formatCents } from './format.ts'

export function receiptLine(label: string, amount: number): string {
  const padded: number = label.padEnd(20)
  return \`\${padded}\${formatCents(amount)}\`
}

export function receiptTotal(amount: number): string {
  return formatCents(amount.toFixed(2))
}
`

describe('judged against the measured baseline of an already-broken project', () => {
  it('keeps unrelated good edits and fixes; rolls back new errors, fix-one-add-one, and re-broken fixes', async () => {
    const root = makeWorkspace('shop', { 'src/legacy.ts': legacy })
    const h = await boot(root, { tests: 'off' })

    // An unrelated good edit is kept: the baseline measured the two existing errors, the check after saw the same two.
    expect(await h.exec('edit_file', { path: 'src/greeting.ts', old_string: 'Hello', new_string: 'Hi' })).toEqual({ content: 'edited src/greeting.ts' })
    expect(runs(h.session).map(x => [x.outcome, x.exitCode])).toEqual([['fail', 2], ['fail', 2]])
    expect(h.results.map(x => x.outcome)).toEqual(['pass'])

    // A new error is rolled back, and only it is named.
    await expectRolledBack(h, 'edit_file', { path: 'src/greeting.ts', old_string: 'return `Hi, ${name}!`', new_string: 'return name.lenght' },
      'rolled back: typecheck failed after edit_file on src/greeting.ts',
      "src/greeting.ts:2 TS2551 Property 'lenght' does not exist on type 'string'. Did you mean 'length'?",
      STOPPED,
    )

    // Fixing one error while adding another is still worse.
    const swap = {
      path: 'src/legacy.ts',
      old_string: '  const padded: number = label.padEnd(20)\n',
      new_string: '  const padded: string = label.padEnd(20)\n  const wide: boolean = padded.length\n',
    }
    await expectRolledBack(h, 'edit_file', swap, 'rolled back: typecheck failed after edit_file on src/legacy.ts', "src/legacy.ts:5 TS2322 Type 'number' is not assignable to type 'boolean'.", STOPPED)
    expect(readText(root, 'src/legacy.ts')).toBe(legacy)

    // A fix inside the broken file is kept, and the accepted state advances…
    expect(await h.exec('edit_file', { path: 'src/legacy.ts', old_string: 'const padded: number', new_string: 'const padded: string' })).toEqual({ content: 'edited src/legacy.ts' })
    // …so re-introducing the fixed error is now a regression.
    await expectRolledBack(h, 'edit_file', { path: 'src/legacy.ts', old_string: 'const padded: string', new_string: 'const padded: number' },
      'rolled back: typecheck failed after edit_file on src/legacy.ts',
      "src/legacy.ts:4 TS2322 Type 'string' is not assignable to type 'number'.",
      STOPPED,
    )
    expect(readText(root, 'src/legacy.ts')).toContain('const padded: string')
  })
})
