import { describe, expect, it, vi } from 'vitest'
import type { SessionEvent } from 'dsh-session'
import { harness, tempDir } from 'dsh-testkit'

describe('session log', () => {
  it('assigns 0-based increasing seq and non-decreasing time, and emits session/event synchronously in order', async () => {
    const { ctx } = await harness({ workspaceTools: false })
    const seen: string[] = []
    ctx.on('session/event', (_s, e) => { seen.push(`${e.seq}:${e.type}`) })
    const s = ctx.sessions.create('a', { cwd: tempDir() })
    const first = s.append('user/message', { text: 'hi' })
    seen.push('after-first-append')
    s.append('turn/start', { turn: 0 })
    s.append('turn/end', { turn: 0, reason: 'completed' })
    expect(seen).toEqual(['0:user/message', 'after-first-append', '1:turn/start', '2:turn/end'])
    expect(first.seq).toBe(0)
    const times = s.events.map(e => e.time)
    expect([...times].sort((a, b) => a - b)).toEqual(times)
  })

  it('emits session/created, and get/list find the session', async () => {
    const { ctx } = await harness({ workspaceTools: false })
    const created: string[] = []
    ctx.on('session/created', s => { created.push(s.id) })
    const s = ctx.sessions.create('x')
    expect(created).toEqual(['x'])
    expect(ctx.sessions.get('x')).toBe(s)
    expect(ctx.sessions.list()).toEqual([s])
    expect(() => ctx.sessions.create('x')).toThrow(/already exists/)
  })

  it('a seeded session arrives with its events, emits no session/event for them, and continues their seq', async () => {
    const { ctx } = await harness({ workspaceTools: false })
    const events: SessionEvent[] = []
    ctx.on('session/event', (_s, e) => { events.push(e) })
    let lengthAtCreation = -1
    ctx.on('session/created', s => { lengthAtCreation = s.length })
    const seed = [
      { seq: 0, time: 1, type: 'user/message', data: { text: 'old' } },
      { seq: 1, time: 2, type: 'turn/start', data: { turn: 0 } },
    ]
    const s = ctx.sessions.create('seeded', { seed })
    expect(lengthAtCreation).toBe(2)
    expect(events).toEqual([])
    const next = s.append('turn/end', { turn: 0, reason: 'completed' })
    expect(next.seq).toBe(2)
    expect(events.map(e => e.seq)).toEqual([2])
  })

  it('rejects a seed whose seq does not increase', async () => {
    const { ctx } = await harness({ workspaceTools: false })
    const seed = [
      { seq: 0, time: 1, type: 'user/message', data: { text: 'a' } },
      { seq: 0, time: 2, type: 'user/message', data: { text: 'b' } },
    ]
    expect(() => ctx.sessions.create('bad', { seed })).toThrow(/seq 0 does not increase/)
    expect(ctx.sessions.get('bad')).toBeUndefined()
  })

  it('session/flush awaits every listener, in parallel', async () => {
    const { ctx } = await harness({ workspaceTools: false })
    const order: string[] = []
    let secondStarted!: () => void
    const started = new Promise<void>(resolve => { secondStarted = resolve })
    // The first listener can finish only once the second has started: one after the other, the second would never start.
    ctx.on('session/flush', async () => { order.push('first:start'); await started; order.push('first:end') })
    ctx.on('session/flush', async () => { order.push('second'); secondStarted() })
    const flushing = ctx.sessions.create().flush()
    await vi.waitFor(() => expect(order).toContain('second'))
    await flushing
    expect(order).toEqual(['first:start', 'second', 'first:end'])
  })
})
