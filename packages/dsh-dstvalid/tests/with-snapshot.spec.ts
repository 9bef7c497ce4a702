import { describe, expect, it } from 'vitest'
import { boot, makeWorkspace, readText } from './helpers.ts'

const typeBreak = { path: 'src/money.ts', old_string: 'export function add(a: Cents, b: Cents): Cents {', new_string: 'export function add(a: Cents, b: string): Cents {' }

describe('with the real dsh-snapshot plugin', () => {
  it('per call: a regression is rolled back through snapshot/rollback, a good write committed', async () => {
    const root = makeWorkspace()
    const h = await boot(root, { tests: 'off' }, { snapshot: { real: {} } })
    const restored: unknown[] = []
    h.ctx.on('snapshot/restored', info => { restored.push(info) })
    const before = readText(root, 'src/money.ts')
    const bad = await h.exec('edit_file', typeBreak)
    expect(bad.content.split('\n')[0]).toBe('rolled back: typecheck failed after edit_file on src/money.ts')
    expect(readText(root, 'src/money.ts')).toBe(before)
    expect(restored).toEqual([expect.objectContaining({ sessionId: h.session.id, restored: ['src/money.ts'], failed: [] })])
    // A new file a rolled-back write created is deleted.
    const created = await h.exec('write_file', { path: 'src/extra/bad.ts', content: 'export const x: number = "no"\n' })
    expect(created.content.split('\n')[0]).toBe('rolled back: typecheck failed after write_file on src/extra/bad.ts')
    expect(() => readText(root, 'src/extra/bad.ts')).toThrow(/ENOENT/)
    expect(await h.exec('edit_file', { path: 'src/money.ts', old_string: 'return a + b', new_string: 'return b + a' })).toEqual({ content: 'edited src/money.ts' })
  })

  it("per step with snapshot scope 'step': the whole step goes back", async () => {
    const root = makeWorkspace()
    const script = JSON.stringify({ toolCalls: [
      { id: 'ok', name: 'write_file', arguments: { path: 'src/new.ts', content: 'export const one = 1\n' } },
      { id: 'bad', name: 'edit_file', arguments: typeBreak },
    ] })
    const h = await boot(root, { per: 'step', tests: 'off' }, { snapshot: { real: { scope: 'step' } }, script })
    const before = readText(root, 'src/money.ts')
    await h.ctx.agents.create(h.session).send('go')
    const results = h.session.ofType('tool/result').map(e => [e.data.callId, e.data.isError, e.data.content.split('\n')[0]])
    expect(results).toEqual([
      ['ok', true, 'rolled back: typecheck failed after write_file, edit_file on src/new.ts, src/money.ts'],
      ['bad', true, 'rolled back: typecheck failed after write_file, edit_file on src/new.ts, src/money.ts'],
    ])
    expect(readText(root, 'src/money.ts')).toBe(before)
    expect(() => readText(root, 'src/new.ts')).toThrow(/ENOENT/)
  })
})
