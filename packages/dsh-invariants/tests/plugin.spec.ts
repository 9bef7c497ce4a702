import { afterEach, describe, expect, it } from 'vitest'
import type { Agent } from 'dsh-agent'
import { Context } from '@deepseek-ai/cordis'
import SessionService, { SessionError, type RawSessionEvent } from 'dsh-session'
import { InvariantError } from 'dsh-invariants'
import { appendAll, createHarness, listenerCounts, trace, type Harness } from './helpers.ts'

let harness: Harness | undefined
afterEach(async () => {
  await harness?.dispose()
  harness = undefined
})

async function start(config: { freeze?: boolean } | false = {}) {
  harness = await createHarness({ invariants: config })
  return harness
}

/** A stand-in for an agent: the tripwire only reads `id` from `agent/status`. */
const agent = (id: string) => ({ id }) as Agent

describe('the plugin on a live session', () => {
  it('passes a legal log and throws InvariantError at the first event that breaks the contract (the event stays logged)', async () => {
    const { ctx } = await start()
    const session = ctx.sessions.create('s1')
    appendAll(session, trace('user/message', 'turn/start 0', 'step/start 0.0', 'chunk', 'call c1', 'result c1'))
    let error: unknown
    try {
      session.append('tool/result', { callId: 'c7', name: 'bash', content: '', isError: false })
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(InvariantError)
    expect((error as InvariantError).code).toBe('INVARIANT')
    expect((error as InvariantError).rule).toBe('result-without-call')
    expect((error as InvariantError).seq).toBe(6)
    expect((error as InvariantError).message).toBe('invariant violated in session s1 at seq 6 (tool/result): [result-without-call] '
      + 'tool/result for callId "c7" has no earlier tool/call in step 0.0; '
      + 'last events: 2 step/start, 3 assistant/chunk, 4 tool/call, 5 tool/result, 6 tool/result')
    expect(session.events.at(-1)).toMatchObject({ seq: 6, type: 'tool/result' })
  })

  it('tracks sessions independently', async () => {
    const { ctx } = await start()
    const a = ctx.sessions.create('a')
    const b = ctx.sessions.create('b')
    a.append('turn/start', { turn: 0 })
    b.append('turn/start', { turn: 0 })
    b.append('step/start', { turn: 0, step: 0 })
    a.append('turn/end', { turn: 0, reason: 'completed' })
    expect(() => a.append('assistant/chunk', { text: 'x' })).toThrow('invariant violated in session a at seq 2 (assistant/chunk): [outside-step]')
    b.append('assistant/chunk', { text: 'still fine in b' })
    expect(() => b.append('turn/end', { turn: 0, reason: 'completed' })).toThrow('[turn-end-open-step] turn 0 ends while step 0.0 is open')
  })

  it('tracks agents independently and throws for a repeated status or leaving disposed', async () => {
    const { ctx } = await start()
    ctx.emit('agent/status', agent('a1'), 'running')
    ctx.emit('agent/status', agent('a2'), 'running')
    ctx.emit('agent/status', agent('a1'), 'idle')
    ctx.emit('agent/status', agent('a2'), 'disposed')
    expect(() => ctx.emit('agent/status', agent('a1'), 'idle')).toThrow(InvariantError)
    expect(() => ctx.emit('agent/status', agent('a2'), 'running')).toThrow(
      'invariant violated by agent a2: [agent-status] disposed → running leaves disposed; last statuses: running, disposed, running')
    expect(() => ctx.emit('agent/status', agent('a3'), 'idle')).toThrow('[agent-status] idle → idle repeats the current status')
  })
})

describe('seeded sessions', () => {
  it('accept a legal seed, including one that ends mid-step, and continue from it', async () => {
    const { ctx } = await start()
    const seed = trace('user/message', 'turn/start 0', 'step/start 0.0', 'chunk', 'call c1')
    const session = ctx.sessions.create('seeded', { seed })
    session.append('tool/result', { callId: 'c1', name: 'bash', content: '', isError: false })
    session.append('step/end', { turn: 0, step: 0 })
    session.append('turn/end', { turn: 0, reason: 'completed' })
    expect(session.events.map(e => e.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
  })

  it('make create() throw InvariantError for a seed that breaks the contract, and leave no session behind', async () => {
    const { ctx } = await start()
    const seed = trace('turn/start 0', 'step/start 0.0', 'step/end 0.0', 'turn/start 1', 'turn/end 1')
    expect(() => ctx.sessions.create('bad', { seed })).toThrow(
      'invariant violated in session bad at seq 3 (turn/start): [turn-overlap] turn 1 starts while turn 0 is open; '
      + 'last events: 0 turn/start, 1 step/start, 2 step/end, 3 turn/start')
    expect(ctx.sessions.get('bad')).toBeUndefined()
    const orphan = trace('turn/start 0', 'step/start 0.0', 'result c1')
    expect(() => ctx.sessions.create('orphan', { seed: orphan })).toThrow(InvariantError)
  })

  it('with a repeated seq make create() throw InvariantError, and leave no session behind', async () => {
    const seed = trace('user/message', 'turn/start 0', '@1 step/start 0.0')
    const { ctx } = await start()
    expect(() => ctx.sessions.create('dup', { seed })).toThrow(
      'invariant violated in session dup at seq 1 (step/start): [seq] seq 1 does not increase (previous seq 1)')
    expect(ctx.sessions.get('dup')).toBeUndefined()
  })

  it('with a repeated seq are still rejected by dsh-session alone (SessionError) when the tripwire is off', async () => {
    const seed = trace('user/message', 'turn/start 0', '@1 step/start 0.0')
    const ctx = new Context()
    await ctx.plugin(SessionService)
    expect(() => ctx.sessions.create('dup', { seed })).toThrow(SessionError)
    expect(ctx.sessions.get('dup')).toBeUndefined()
  })
})

describe('freeze', () => {
  it('on (default): appended and seeded events are deep-frozen, so mutating history throws', async () => {
    const { ctx } = await start()
    const seed: RawSessionEvent[] = trace('user/message')
    const session = ctx.sessions.create('f', { seed })
    session.append('turn/start', { turn: 0 })
    session.append('step/start', { turn: 0, step: 0 })
    const call = session.append('tool/call', { callId: 'c1', name: 'multi_edit', arguments: { edits: [{ path: 'a', old_string: 'x', new_string: 'y' }] } })
    const edits = (call.data.arguments as { edits: { path: string }[] }).edits
    expect(() => { edits[0]!.path = '/etc/passwd' }).toThrow(TypeError)
    expect(() => { edits.push({ path: 'b' }) }).toThrow(TypeError)
    expect(() => { (call as { seq: number }).seq = 99 }).toThrow(TypeError)
    expect(() => { (seed[0]!.data as { text: string }).text = 'rewritten' }).toThrow(TypeError)
    expect(Object.isFrozen(session.events[1]!.data)).toBe(true)
  })

  it('off: events are checked but stay mutable', async () => {
    const { ctx } = await start({ freeze: false })
    const session = ctx.sessions.create('nf')
    const event = session.append('user/message', { text: 'a' })
    event.data.text = 'b'
    expect(session.events[0]!.data).toEqual({ text: 'b' })
    expect(Object.isFrozen(event)).toBe(false)
    expect(() => session.append('step/end', { turn: 0, step: 0 })).toThrow(InvariantError)
  })
})

describe('lifecycle', () => {
  it('adds one listener per event and removes them on dispose (twice); afterwards nothing is asserted or frozen', async () => {
    const { ctx } = await start(false)
    const before = listenerCounts(ctx)
    const fiber = await harness!.loadInvariants()
    expect(listenerCounts(ctx)).toEqual(Object.fromEntries(Object.entries(before).map(([k, v]) => [k, v + 1])))
    await fiber.dispose()
    await fiber.dispose()
    expect(listenerCounts(ctx)).toEqual(before)
    const session = ctx.sessions.create('after')
    const event = session.append('step/end', { turn: 4, step: 2 })
    expect(Object.isFrozen(event)).toBe(false)
    ctx.emit('agent/status', agent('x'), 'idle')
    ctx.emit('agent/status', agent('x'), 'idle')
  })

  it('a dispose → re-apply in the middle of a step rebuilds state: the next chunk passes, a real violation is still caught', async () => {
    const { ctx } = await start()
    const session = ctx.sessions.create('mid')
    appendAll(session, trace('user/message', 'turn/start 0', 'step/start 0.0', 'chunk', 'call c1'))
    await harness!.invariants!.dispose()
    session.append('assistant/chunk', { text: 'logged while unguarded' })
    const fiber = await harness!.loadInvariants()
    session.append('assistant/chunk', { text: 'next chunk' })
    session.append('tool/result', { callId: 'c1', name: 'bash', content: '', isError: false })
    expect(() => session.append('tool/result', { callId: 'c1', name: 'bash', content: '', isError: false }))
      .toThrow('[result-without-call] tool/result for callId "c1" repeats a result already logged in step 0.0')
    expect(Object.isFrozen(session.events[5])).toBe(true) // adopted history is frozen at apply
    await fiber.dispose()
  })

  it('a re-apply over a history that already broke the contract warns instead of failing to start', async () => {
    const { ctx } = await start(false)
    const warnings: string[] = []
    ctx.logger.exporter({ colors: false, levels: { default: 2 }, export: message => { if (message.type === 'warn') warnings.push(String(message.args[0])) } })
    const session = ctx.sessions.create('broken')
    session.append('step/end', { turn: 0, step: 0 })
    const fiber = await harness!.loadInvariants()
    expect(warnings.join('\n')).toContain('already broke the event contract')
    session.append('turn/start', { turn: 0 })
    expect(() => session.append('turn/start', { turn: 1 })).toThrow(InvariantError)
    await fiber.dispose()
  })
})
