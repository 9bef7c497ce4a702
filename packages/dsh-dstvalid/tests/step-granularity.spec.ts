import { describe, expect, it } from 'vitest'
import { boot, makeWorkspace, readText, STOPPED } from './helpers.ts'

const line = (value: unknown) => JSON.stringify(value)

describe("per: 'step'", () => {
  it('judges all writes of a step once, rolls the whole step back, and rewrites each affected result', async () => {
    const root = makeWorkspace()
    const script = [
      line({ text: 'Two writes in one step.', toolCalls: [
        { id: 'w1', name: 'write_file', arguments: { path: 'src/tax.ts', content: "import { add } from './money.ts'\n\nexport const withTax = (a: number) => add(a, 1)\n" } },
        { id: 'r1', name: 'read_file', arguments: { path: 'src/money.ts' } },
        { id: 'w2', name: 'edit_file', arguments: { path: 'src/money.ts', old_string: 'export function add(a: Cents, b: Cents): Cents {', new_string: 'export function add(a: Cents, b: string): Cents {' } },
      ] }),
      line({ text: 'A good step.', toolCalls: [
        { id: 'w3', name: 'edit_file', arguments: { path: 'src/greeting.ts', old_string: 'Hello', new_string: 'Hi' } },
      ] }),
      line({ text: 'Done.' }),
    ].join('\n')
    const h = await boot(root, { per: 'step', tests: 'off' }, { script })
    const agent = h.ctx.agents.create(h.session)
    expect(await agent.send('go')).toBe('completed')
    const results = Object.fromEntries(h.session.ofType('tool/result').map(e => [e.data.callId, e.data]))
    const message = [
      'rolled back: typecheck failed after write_file, edit_file on src/tax.ts, src/money.ts',
      "src/money.ts:5 TS2322 Type 'string' is not assignable to type 'number'.",
      "src/tax.ts:3 TS2345 Argument of type 'number' is not assignable to parameter of type 'string'.",
      // The written files first, together: the write is worse, their importers are not checked.
      STOPPED,
    ].join('\n')
    expect(results.w1).toMatchObject({ isError: true, content: message })
    expect(results.w2).toMatchObject({ isError: true, content: message })
    expect(results.r1).toMatchObject({ isError: false })
    expect(results.w3).toMatchObject({ isError: false, content: 'edited src/greeting.ts' })
    // The baseline, one judgement for the first step (its rollback is byte for byte: no re-check), one for the second.
    expect(h.session.ofType('verify/run').map(e => e.data.outcome)).toEqual(['pass', 'fail', 'pass'])
    expect(h.snapshot!.log).toEqual([
      'rollback step:0: typecheck failed after write_file, edit_file on src/tax.ts, src/money.ts',
      'commit step:1',
    ])
    expect(() => readText(root, 'src/tax.ts')).toThrow(/ENOENT/)
    expect(readText(root, 'src/money.ts')).toContain('b: Cents')
    // verify/result: one per check per judged write call.
    expect(h.results.map(r => [r.callId, r.outcome])).toEqual([['w1', 'rolled-back'], ['w2', 'rolled-back'], ['w3', 'pass']])
    // The tool/result events come after the step's judgement, in call order.
    expect(h.session.events.filter(e => e.type === 'tool/result' || e.type === 'verify/run').map(e => e.type === 'tool/result' ? e.data.callId : 'run'))
      .toEqual(['run', 'run', 'w1', 'r1', 'w2', 'run', 'w3'])
  })
})
