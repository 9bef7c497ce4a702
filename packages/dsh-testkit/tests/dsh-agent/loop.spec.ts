import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { harness as boot, logged } from 'dsh-testkit'

/** The real core harness with a scripted model (dsh-testkit); `ws` is the session's workspace. */
async function harness(script: object[], agent: { maxSteps?: number } = {}) {
  const h = await boot({ script, agent })
  return { ...h, ws: h.workspace }
}

describe('agent loop', () => {
  it('a two-step turn with tool calls appends the core events in order', async () => {
    const h = await harness([
      { text: 'writing', toolCalls: [
        { id: 'w', name: 'write_file', arguments: { path: 'a.txt', content: 'one' } },
        { id: 'e', name: 'edit_file', arguments: { path: 'a.txt', old_string: 'one', new_string: 'two' } },
      ] },
      { text: 'done' },
    ])
    const statuses: string[] = []
    h.ctx.on('agent/status', (_a, s) => { statuses.push(s) })
    const hooks: string[] = []
    h.ctx.on('agent/turn-start', async (_a, turn) => { hooks.push(`turn-start ${turn}`) })
    h.ctx.on('agent/step-end', async (_a, turn, step) => { hooks.push(`step-end ${turn}.${step}`) })
    h.ctx.on('agent/turn-end', async (_a, turn, reason) => { hooks.push(`turn-end ${turn} ${reason}`) })
    expect(await h.agent.send('go')).toBe('completed')
    expect(h.types()).toEqual([
      'user/message', 'turn/start',
      'step/start', 'assistant/chunk', 'usage', 'assistant/message', 'tool/call', 'tool/call', 'tool/result', 'tool/result', 'step/end',
      'step/start', 'assistant/chunk', 'usage', 'assistant/message', 'step/end',
      'turn/end',
    ])
    expect(h.session.events.map(e => e.seq)).toEqual(h.session.events.map((_, i) => i))
    expect(h.session.ofType('tool/result').map(e => [e.data.callId, e.data.isError])).toEqual([['w', false], ['e', false]])
    expect(readFileSync(join(h.ws, 'a.txt'), 'utf8')).toBe('two')
    expect(statuses).toEqual(['running', 'idle'])
    expect(hooks).toEqual(['turn-start 0', 'step-end 0.0', 'step-end 0.1', 'turn-end 0 completed'])
  })

  it('a disposed agent leaves agents.list(): many short sessions do not accumulate', async () => {
    const h = await harness([{ text: 'hi' }])
    expect(h.ctx.agents.list()).toEqual([h.agent])
    for (let i = 0; i < 3; i++) await h.ctx.agents.create(h.ctx.sessions.create(undefined, { cwd: h.ws })).dispose()
    expect(h.ctx.agents.list()).toEqual([h.agent])
    await h.agent.dispose()
    expect(h.ctx.agents.list()).toEqual([])
  })

  it('tool/result holds what the waterfall returned, rewritten by a plugin', async () => {
    const h = await harness([{ toolCalls: [{ id: 'b', name: 'bash', arguments: { command: 'echo hi' } }] }])
    h.ctx.on('tools/execute', async (exec, next) => ({ ...(await next()), content: 'rewritten' }))
    await h.agent.send('go')
    expect(h.session.ofType('tool/result')[0]!.data).toEqual({ callId: 'b', name: 'bash', content: 'rewritten', isError: false, exitCode: 0 })
  })

  it('a throwing tools/execute listener ends the turn with an error event and reason error; the loop keeps working', async () => {
    const h = await harness([
      { toolCalls: [{ id: 'x', name: 'bash', arguments: { command: 'echo 1' } }] },
      { text: 'second turn' },
    ])
    const off = h.ctx.on('tools/execute', async () => { throw new Error('plugin exploded') })
    expect(await h.agent.send('go')).toBe('error')
    expect(h.types().slice(-5)).toEqual(['assistant/message', 'tool/call', 'error', 'step/end', 'turn/end'])
    expect(h.session.ofType('error')[0]!.data).toEqual({ message: 'plugin exploded', source: 'agent' })
    expect(h.session.ofType('turn/end')[0]!.data.reason).toBe('error')
    off()
    expect(await h.agent.send('again')).toBe('completed')
    expect(h.agent.status).toBe('idle')
  })

  it('when a step fails partway, the calls that already ran keep their results in the log', async () => {
    const h = await harness([
      { toolCalls: [
        { id: 'ran', name: 'write_file', arguments: { path: 'a.txt', content: 'written' } },
        { id: 'boom', name: 'bash', arguments: { command: 'echo never' } },
      ] },
    ])
    h.ctx.on('tools/execute', async (exec, next) => {
      if (exec.callId === 'boom') throw new Error('plugin exploded')
      return next()
    })
    expect(await h.agent.send('go')).toBe('error')
    expect(h.types().slice(-7)).toEqual(['assistant/message', 'tool/call', 'tool/call', 'tool/result', 'error', 'step/end', 'turn/end'])
    expect(h.session.ofType('tool/result').map(e => [e.data.callId, e.data.content])).toEqual([['ran', 'created a.txt (7 bytes)']])
    expect(readFileSync(join(h.ws, 'a.txt'), 'utf8')).toBe('written')
  })

  it('a log listener that throws on turn/start ends the turn with an error; send never rejects', async () => {
    const h = await harness([{ text: 'hi' }])
    h.ctx.on('session/event', (_s, e) => { if (e.type === 'turn/start') throw new Error('tripwire') })
    expect(await h.agent.send('go')).toBe('error')
    expect(h.session.ofType('error').map(e => e.data.message)).toEqual(['tripwire'])
    expect(h.agent.status).toBe('idle')
  })

  it('abort mid-turn ends it with reason aborted; dispose with reason disposed', async () => {
    const h = await harness([
      { toolCalls: [{ id: 's', name: 'bash', arguments: { command: 'sleep 5' } }] },
      { text: 'never' },
    ])
    const turn = h.agent.send('go')
    await h.waitFor('tool/call')
    h.agent.abort()
    expect(await turn).toBe('aborted')
    expect(h.session.ofType('turn/end').at(-1)!.data.reason).toBe('aborted')

    const h2 = await harness([{ toolCalls: [{ id: 's', name: 'bash', arguments: { command: 'sleep 5' } }] }])
    const statuses: string[] = []
    h2.ctx.on('agent/status', (_a, s) => { statuses.push(s) })
    const t2 = h2.agent.send('go')
    await h2.waitFor('tool/call')
    await h2.agent.dispose()
    expect(await t2).toBe('disposed')
    expect(statuses).toEqual(['running', 'idle', 'disposed'])
  })

  it('feeds the conversation back to the model: results of the previous step reach the next request', async () => {
    const h = await harness([
      { toolCalls: [{ id: 'r', name: 'bash', arguments: { command: 'echo marker-42' } }] },
      { text: 'ok' },
    ])
    const requests: string[] = []
    h.ctx.on('agent/request', async (req, next) => { requests.push(JSON.stringify(req.messages)); return next() })
    await h.agent.send('go')
    expect(requests[1]).toContain('marker-42')
  })

  it('maxSteps ends a turn whose model keeps calling tools, with an error naming the limit', async () => {
    const step = { toolCalls: [{ name: 'bash', arguments: { command: 'true' } }] }
    const h = await harness([step, step, step, { text: 'never reached' }], { maxSteps: 2 })
    expect(await h.agent.send('go')).toBe('error')
    expect(h.session.ofType('step/start')).toHaveLength(2)
    expect(h.session.ofType('error').map(e => e.data.message)).toEqual(['step limit reached: maxSteps is 2 (dsh-agent config)'])
  })

  it('agent/request: listeners nest in the order they were added; the outermost result is what the model is sent', async () => {
    const h = await harness([{ text: 'ok' }])
    const sent: string[] = []
    const order: string[] = []
    h.ctx.on('agent/request', async (_req, next) => {
      order.push('outer')
      const r = await next()
      sent.push(r.messages.at(-1)!.content)
      return r
    })
    h.ctx.on('agent/request', async (_req, next) => {
      order.push('inner')
      const r = await next()
      return { ...r, messages: [...r.messages, { role: 'user' as const, content: 'appended by a plugin' }] }
    })
    await h.agent.send('go')
    expect(order).toEqual(['outer', 'inner'])
    expect(sent).toEqual(['appended by a plugin'])
  })

  it("agent/step-results: a plugin rewrites a step's results before they are logged, once per step (empty for a step without calls)", async () => {
    const h = await harness([
      { toolCalls: [{ id: 'a', name: 'bash', arguments: { command: 'echo one' } }, { id: 'b', name: 'bash', arguments: { command: 'echo two' } }] },
      { text: 'done' },
    ])
    const batches: string[][] = []
    h.ctx.on('agent/step-results', async (batch, next) => {
      const results = await next()
      batches.push(results.map(r => r.call.callId))
      return results.map(r => r.call.callId === 'b' ? { ...r, result: { ...r.result, content: 'rewritten b' } } : r)
    })
    await h.agent.send('go')
    expect(batches).toEqual([['a', 'b'], []])
    expect(h.session.ofType('tool/result').map(e => [e.data.callId, e.data.content])).toEqual([['a', 'one\n[exit code 0]'], ['b', 'rewritten b']])
  })

  it('a failed flush after a turn is a warning, unless a host that reports it itself answers agent/flush-failed', async () => {
    const h = await harness([{ text: 'one' }, { text: 'two' }])
    const warnings = logged(h.ctx, 'warn')
    h.ctx.on('session/flush', async () => { throw new Error('ENOSPC: no space left on device') })
    expect(await h.agent.send('go')).toBe('completed')
    expect(warnings).toEqual([`flush of session ${h.session.id} failed: ENOSPC: no space left on device`])
    const seen: string[] = []
    h.ctx.on('agent/flush-failed', (agent, error) => { seen.push(`${agent === h.agent} ${error.message}`); return true })
    expect(await h.agent.send('again')).toBe('completed')
    expect(seen).toEqual(['true ENOSPC: no space left on device'])
    expect(warnings).toHaveLength(1)
  })

  it('a resumed session continues its turn numbering and its seq', async () => {
    const first = await harness([{ text: 'one' }, { text: 'two' }])
    await first.agent.send('a')
    await first.agent.send('b')
    const seed = first.session.events.map(e => ({ ...e }))
    const resumed = await boot({ script: [{ text: 'three' }] })
    const session = resumed.ctx.sessions.create(undefined, { cwd: first.workspace, seed })
    const agent = resumed.ctx.agents.create(session)
    await agent.send('c')
    expect(session.ofType('turn/start').map(e => e.data.turn)).toEqual([0, 1, 2])
    expect(session.ofType('step/start').map(e => [e.data.turn, e.data.step])).toEqual([[0, 0], [1, 0], [2, 0]])
    expect(session.ofType('turn/end').map(e => e.data.reason)).toEqual(['completed', 'completed', 'completed'])
    expect(session.events.map(e => e.seq)).toEqual(session.events.map((_, i) => i))
  })
})
