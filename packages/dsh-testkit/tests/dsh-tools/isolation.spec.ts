import { Context } from '@deepseek-ai/cordis'
import { describe, expect, it } from 'vitest'
import SessionService from 'dsh-session'
import ToolService from 'dsh-tools'
import { harness, tempDir } from 'dsh-testkit'
import { echoTool } from './helpers.ts'

// A host (dsh-host-deepseek) gives the suite its own `sessions` and `tools` in a
// child context isolated from the harness's services of the same names: the
// services' events must reach only listeners that see the same service.
describe('isolated sessions and tools', () => {
  it('events of an isolated service reach listeners inside its scope only', async () => {
    const root = new Context()
    const inner = root.isolate('sessions').isolate('tools')
    await inner.plugin(SessionService)
    await inner.plugin(ToolService)
    const seen: string[] = []
    root.on('session/created', () => { seen.push('outer:created') })
    root.on('session/event', () => { seen.push('outer:event') })
    root.on('tools/change', () => { seen.push('outer:change') })
    root.on('tools/execute', (_exec, next) => { seen.push('outer:execute'); return next() })
    inner.on('session/created', () => { seen.push('inner:created') })
    inner.on('session/event', () => { seen.push('inner:event') })
    inner.on('tools/change', () => { seen.push('inner:change') })
    inner.on('tools/execute', (_exec, next) => { seen.push('inner:execute'); return next() })

    inner.tools.register(echoTool)
    const session = inner.sessions.create('s1', { cwd: tempDir('dsh-iso-') })
    session.append('user/message', { text: 'hi' })
    const result = await inner.tools.execute({ session, callId: 'c1', name: 'echo', arguments: { text: 'x' } })

    expect(result).toEqual({ content: 'x' })
    expect(seen).toEqual(['inner:change', 'inner:created', 'inner:event', 'inner:execute'])
  })

  it('without isolation every listener still sees them (the lean harness)', async () => {
    const { ctx, call } = await harness({ workspaceTools: false })
    const seen: string[] = []
    const child = ctx.extend({})
    child.on('session/created', () => { seen.push('created') })
    child.on('tools/execute', (_exec, next) => { seen.push('execute'); return next() })
    ctx.tools.register(echoTool)
    await call('echo', { text: 'x' })
    expect(seen).toEqual(['created', 'execute'])
  })
})
