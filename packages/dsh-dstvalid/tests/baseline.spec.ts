import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { boot, cleanupWorkspaces, makeWorkspace, readText, runs, type Harness } from './helpers.ts'

let h: Harness | undefined
afterEach(async () => { await h?.dispose(); h = undefined })
afterAll(cleanupWorkspaces)

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

async function brokenWorkspace() {
  const root = makeWorkspace('shop', { 'src/legacy.ts': legacy })
  h = await boot(root, { tests: 'off' })
  return root
}

describe('judged against the measured baseline of an already-broken project', () => {
  it('keeps an unrelated good edit', async () => {
    await brokenWorkspace()
    const r = await h!.exec('edit_file', { path: 'src/greeting.ts', old_string: 'Hello', new_string: 'Hi' })
    expect(r).toEqual({ content: 'edited src/greeting.ts' })
    // The baseline measured the two existing errors; the check after the edit saw the same two.
    expect(runs(h!.session).map(x => [x.outcome, x.exitCode])).toEqual([['fail', 2], ['fail', 2]])
    expect(h!.results.map(x => x.outcome)).toEqual(['pass'])
  })

  it('rolls back a new error, naming only it', async () => {
    const root = await brokenWorkspace()
    const r = await h!.exec('edit_file', { path: 'src/greeting.ts', old_string: 'return `Hello, ${name}!`', new_string: 'return name.lenght' })
    expect(r.content).toBe([
      'rolled back: typecheck failed after edit_file on src/greeting.ts',
      "src/greeting.ts:2 TS2551 Property 'lenght' does not exist on type 'string'. Did you mean 'length'?",
    ].join('\n'))
    expect(readText(root, 'src/greeting.ts')).toContain('Hello, ${name}!')
  })

  it('rolls back an edit that fixes one error and adds another', async () => {
    const root = await brokenWorkspace()
    const r = await h!.exec('edit_file', {
      path: 'src/legacy.ts',
      old_string: '  const padded: number = label.padEnd(20)\n',
      new_string: '  const padded: string = label.padEnd(20)\n  const wide: boolean = padded.length\n',
    })
    expect(r.content).toBe([
      'rolled back: typecheck failed after edit_file on src/legacy.ts',
      "src/legacy.ts:5 TS2322 Type 'number' is not assignable to type 'boolean'.",
    ].join('\n'))
    expect(readText(root, 'src/legacy.ts')).toBe(legacy)
  })

  it('keeps a fix inside the broken file, and the accepted state advances', async () => {
    const root = await brokenWorkspace()
    const fix = await h!.exec('edit_file', { path: 'src/legacy.ts', old_string: 'const padded: number', new_string: 'const padded: string' })
    expect(fix).toEqual({ content: 'edited src/legacy.ts' })
    // Re-introducing the fixed error is now a regression: the accepted state has one error left.
    const again = await h!.exec('edit_file', { path: 'src/legacy.ts', old_string: 'const padded: string', new_string: 'const padded: number' })
    expect(again.content).toBe([
      'rolled back: typecheck failed after edit_file on src/legacy.ts',
      "src/legacy.ts:4 TS2322 Type 'string' is not assignable to type 'number'.",
    ].join('\n'))
    expect(readText(root, 'src/legacy.ts')).toContain('const padded: string')
  })
})
