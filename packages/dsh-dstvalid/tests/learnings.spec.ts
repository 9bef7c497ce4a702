import { describe, expect, it } from 'vitest'
import { boot, makeWorkspace } from './helpers.ts'

/** A cheap generic profile: "compile" fails while a file named `broken` exists. */
const generic = { profiles: ['generic' as const], compileCommand: 'test ! -e broken' }

describe('learnings (verify/learning)', () => {
  it('one per kept, verified write; never after a rollback; not when no check could judge', async () => {
    const root = makeWorkspace('')
    const h = await boot(root, { ...generic, learnings: true })
    await h.exec('write_file', { path: 'a.txt', content: 'x' })
    expect(h.learnings).toEqual([{ sessionId: h.session.id, paths: ['a.txt'], tool: 'write_file', checks: ['compile'] }])

    const rolled = await h.exec('write_file', { path: 'broken', content: '' })
    expect(rolled.content.split('\n')[0]).toBe('rolled back: compile failed after write_file on broken')
    expect(h.results.at(-1)).toMatchObject({ check: 'compile', outcome: 'rolled-back' })
    expect(h.learnings).toHaveLength(1)

    await h.exec('multi_edit', { edits: [{ path: 'a.txt', old_string: 'x', new_string: 'y' }] })
    expect(h.learnings.at(-1)).toEqual({ sessionId: h.session.id, paths: ['a.txt'], tool: 'multi_edit', checks: ['compile'] })
  })

  it('a write kept only because no check could judge it is not a learning', async () => {
    const root = makeWorkspace('')
    const h = await boot(root, { profiles: ['generic'], testCommand: 'sleep 5', timeoutMs: 300, learnings: true })
    const r = await h.exec('write_file', { path: 'a.txt', content: 'x' })
    expect(r.content).toContain('warning: not verified')
    expect(h.learnings).toEqual([])
  })

  it('costs nothing when off (the default): no event', async () => {
    const root = makeWorkspace('')
    const h = await boot(root, generic)
    await h.exec('write_file', { path: 'a.txt', content: 'x' })
    expect(h.results.map(r => r.outcome)).toEqual(['pass'])
    expect(h.learnings).toEqual([])
  })
})
