import { describe, expect, it } from 'vitest'
import type { ToolDefinition } from 'dsh-tools'
import { harness } from 'dsh-testkit'
import { echoTool } from './helpers.ts'

/** Sessions and the tool registry alone: no workspace tools, so a test registers exactly the tools it names. */
const registry = () => harness({ workspaceTools: false })


/** A write tool (its path in the call's arguments). */
const writer: ToolDefinition<{ path: string }> = {
  name: 'touch', description: 't', effects: 'write', paths: a => [a.path],
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  execute: () => ({ content: 'ok' }),
}

describe('tools/execute waterfall', () => {
  it('nests listeners outermost-first around the tool', async () => {
    const { ctx, call } = await registry()
    ctx.tools.register(echoTool)
    const order: string[] = []
    ctx.on('tools/execute', async (exec, next) => { order.push('a:before'); const r = await next(); order.push('a:after'); return r })
    ctx.on('tools/execute', async (exec, next) => { order.push('b:before'); const r = await next(); order.push('b:after'); return r })
    const r = await call('echo', { text: 'x' })
    expect(r).toEqual({ content: 'x' })
    expect(order).toEqual(['a:before', 'b:before', 'b:after', 'a:after'])
  })

  it('a listener that does not call next vetoes the call; the tool never runs', async () => {
    const { ctx, call } = await registry()
    let ran = false
    ctx.tools.register({ ...echoTool, execute: () => { ran = true; return { content: 'ran' } } })
    ctx.on('tools/execute', async () => ({ content: 'vetoed by policy', isError: true }))
    const r = await call('echo', { text: 'x' })
    expect(r).toEqual({ content: 'vetoed by policy', isError: true })
    expect(ran).toBe(false)
  })

  it('a listener may rewrite the result', async () => {
    const { ctx, call } = await registry()
    ctx.tools.register(echoTool)
    ctx.on('tools/execute', async (exec, next) => ({ ...(await next()), content: 'rewritten' }))
    const r = await call('echo', { text: 'x' })
    expect(r.content).toBe('rewritten')
  })

  it('passes the definition and effect metadata to listeners', async () => {
    const { ctx, call } = await registry()
    ctx.tools.register(writer)
    const seen: string[][] = []
    ctx.on('tools/execute', async (exec, next) => {
      if (exec.tool?.effects === 'write') seen.push(exec.tool.paths!(exec.arguments as { path: string }))
      return next()
    })
    await call('touch', { path: 'a.txt' })
    expect(seen).toEqual([['a.txt']])
  })

  it('a guarded call (write or shell) waits for verify/settle of its session before it enters the waterfall; a read, an unknown tool do not', async () => {
    const { ctx, call } = await registry()
    ctx.tools.register(writer)
    ctx.tools.register({ ...echoTool, name: 'sh', effects: 'shell' })
    ctx.tools.register(echoTool)
    const order: string[] = []
    let release!: () => void
    let held = new Promise<void>(resolve => { release = resolve })
    let asked!: () => void
    const settling = new Promise<void>(resolve => { asked = resolve })
    ctx.on('verify/settle', async sessionId => {
      order.push(`settle ${sessionId}`)
      asked()
      await held
      order.push('settled')
    })
    ctx.on('tools/execute', async (exec, next) => { order.push(`enter ${exec.name}`); return next() })
    const write = call('touch', { path: 'a.txt' })
    await settling
    await new Promise(resolve => setImmediate(resolve))
    // Held: the write has not entered the waterfall (no snapshot, no check, no tool) while a verdict is pending.
    expect(order).toEqual([expect.stringMatching(/^settle \S+$/)])
    // A read runs at once, pending verdicts or not; an unknown tool says so.
    expect(await call('echo', { text: 'x' })).toEqual({ content: 'x' })
    expect((await call('nope', {})).isError).toBe(true)
    expect(order.slice(1)).toEqual(['enter echo', 'enter nope'])
    release()
    expect(await write).toEqual({ content: 'ok' })
    expect(order.slice(3)).toEqual(['settled', 'enter touch'])
    held = Promise.resolve()
    order.length = 0
    expect(await call('sh', { text: 'y' })).toEqual({ content: 'y' })
    expect(order).toEqual([expect.stringMatching(/^settle \S+$/), 'settled', 'enter sh'])
  })

  it('unknown tool, invalid arguments and a throwing tool become isError results', async () => {
    const { ctx, call } = await registry()
    ctx.tools.register(echoTool)
    ctx.tools.register({ ...echoTool, name: 'boom', execute: () => { throw new Error('disk on fire') } })
    expect(await call('nope', {}))
      .toEqual({ content: 'unknown tool "nope"; available: boom, echo', isError: true })
    expect(await call('echo', { text: 3 }))
      .toEqual({ content: 'invalid arguments for echo: /text must be string', isError: true })
    expect(await call('boom', { text: 'x' }))
      .toEqual({ content: 'boom failed: disk on fire', isError: true })
  })
})

describe('tool registry', () => {
  it('register returns a disposer, rejects duplicates, and emits tools/change', async () => {
    const { ctx } = await registry()
    let changes = 0
    ctx.on('tools/change', () => { changes++ })
    const dispose = ctx.tools.register(echoTool)
    expect(() => ctx.tools.register(echoTool)).toThrow('tool "echo" is already registered')
    expect(ctx.tools.schemas().map(s => s.name)).toEqual(['echo'])
    dispose()
    expect(ctx.tools.get('echo')).toBeUndefined()
    expect(changes).toBe(2)
  })

  it('a writer without paths() is refused', async () => {
    const { ctx } = await registry()
    expect(() => ctx.tools.register({ ...echoTool, name: 'w', effects: 'write' }))
      .toThrow("tool \"w\" declares effects 'write' but no paths(args)")
  })

  it('disposing the registering plugin unregisters its tools', async () => {
    const { ctx } = await registry()
    const fiber = ctx.plugin({ inject: ['tools'], apply: (c) => { c.tools.register(echoTool) } })
    await fiber
    expect(ctx.tools.get('echo')).toBeDefined()
    await fiber.dispose()
    expect(ctx.tools.get('echo')).toBeUndefined()
  })
})
