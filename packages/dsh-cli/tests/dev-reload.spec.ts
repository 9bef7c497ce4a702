import { realpathSync } from 'node:fs'
import { createRequire } from 'node:module'
import { setTimeout as delay } from 'node:timers/promises'
import { afterEach, describe, expect, it } from 'vitest'
import { TraceChecker } from 'dsh-invariants'
import { formatReport, type PluginReloadReport } from 'dsh-cli/dev'
import { CORE_ENTRIES, listenerCounts } from 'dsh-testkit'
import {
  armGate, closeProjects, counterSource, counterState, devProject, edit, GATE_SOURCE, greeterSource, startProject,
} from './dev-helpers.ts'

afterEach(closeProjects)

const greeterEntry = `- id: greeter\n  name: ./plugins/greeter.ts\n`
const counterEntry = `- id: counter\n  name: ./plugins/counter.ts\n`
const gateEntry = `- id: gate\n  name: ./plugins/gate.ts\n`
const invariantsEntry = `- id: invariants\n  name: dsh-invariants\n`

function asPlugins(report: unknown): PluginReloadReport {
  expect(report).toMatchObject({ kind: 'plugins' })
  return report as PluginReloadReport
}

function violations(events: readonly unknown[]) {
  const checker = new TraceChecker()
  return events.flatMap(e => checker.check(e))
}

describe('dsh dev: plugin source reload', () => {
  it('mid-turn: an edited tool plugin answers the next call of the same turn; the session, the agent and dsh-invariants (itself reloaded) see a valid log', async () => {
    const project = devProject(CORE_ENTRIES + invariantsEntry + gateEntry + greeterEntry)
    project.write('plugins/gate.ts', GATE_SOURCE)
    const greeter = project.write('plugins/greeter.ts', greeterSource('hello v1'))
    const script = project.script([
      { text: 'waiting', toolCalls: [{ name: 'hold', arguments: {} }] },
      { toolCalls: [{ name: 'greet', arguments: {} }] },
      { text: 'done' },
    ])
    const dev = await startProject(project, { script })
    const { ctx } = dev.harness
    const { session, agent } = dev.harness.createSession('mid-turn')
    const gate = armGate()
    const turn = agent.send('go')
    await gate.entered
    expect(agent.status).toBe('running')

    // Edit the greeter while the turn is blocked inside `hold` (saved by rename, as editors do).
    const report = asPlugins(await edit(dev, () => project.saveByRename('plugins/greeter.ts', greeterSource('hello v2'))))
    expect(report.files).toEqual([greeter])
    expect(report.entries).toEqual([{ id: 'greeter', outcome: 'reloaded' }])
    expect(report.restarted).toEqual([])

    // Reload dsh-invariants itself mid-turn: a fresh module, applied while the turn is open.
    const invariantsFile = realpathSync(createRequire(import.meta.url).resolve('dsh-invariants'))
    const again = await dev.reloader.reloadFiles([invariantsFile])
    expect(again?.entries).toEqual([{ id: 'invariants', outcome: 'reloaded' }])
    expect(again?.errors).toEqual([])

    gate.release()
    expect(await turn).toBe('completed')
    const results = session.ofType('tool/result').map(e => [e.data.name, e.data.content, e.data.isError])
    expect(results).toEqual([['hold', 'released', false], ['greet', 'hello v2', false]])
    expect(ctx.sessions.get('mid-turn')).toBe(session)
    expect(agent.status).toBe('idle')
    expect(session.ofType('error')).toEqual([])
    expect(violations(session.events)).toEqual([])
    // The reloaded tripwire is live: history stays frozen.
    expect(Object.isFrozen(session.events.at(-1))).toBe(true)
    expect(dev.logs.filter(l => l.startsWith('error'))).toEqual([])
  })

  it('20 reloads (entry file and an imported helper, alternately) leave no listener, tool or effect behind', async () => {
    const config = `# a comment a loader write-back would drop\n${CORE_ENTRIES}${counterEntry}${greeterEntry}`
    const project = devProject(config)
    project.write('plugins/lib/label.ts', `export const label = () => 'L0'\n`)
    project.write('plugins/counter.ts', counterSource('T0'))
    project.write('plugins/greeter.ts', greeterSource('hello'))
    const dev = await startProject(project)
    const { ctx } = dev.harness
    const before = listenerCounts(ctx)
    const tools = ctx.tools.list().map(t => t.name)
    expect(counterState()).toMatchObject({ applies: 1, disposals: 0, tags: ['T0:L0'] })
    for (let i = 1; i <= 20; i++) {
      const report = asPlugins(await edit(dev, () => {
        if (i % 2) project.write('plugins/counter.ts', counterSource(`T${i}`))
        else project.write('plugins/lib/label.ts', `export const label = () => 'L${i}'\n`)
      }))
      expect(report.entries).toEqual([{ id: 'counter', outcome: 'reloaded' }])
    }
    const state = counterState()!
    expect(state.applies).toBe(21)
    expect(state.disposals).toBe(20)
    expect(state.tags.at(-1)).toBe('T19:L20')
    expect(listenerCounts(ctx)).toEqual(before)
    expect(ctx.tools.list().map(t => t.name)).toEqual(tools)
    await delay(50) // the loader schedules config write-backs on a 0 ms timer
    expect(project.read('cordis.yml')).toBe(config)
  })

  it('reloading a service provider restarts the plugins that inject it, says which, and leaves the same tools and listener counts', async () => {
    const project = devProject(CORE_ENTRIES + greeterEntry)
    project.write('plugins/greeter.ts', greeterSource('hello'))
    const dev = await startProject(project)
    const { ctx } = dev.harness
    const before = listenerCounts(ctx)
    const tools = ctx.tools.list().map(t => t.name).sort()
    const { agent } = dev.harness.createSession()
    const toolsFile = realpathSync(createRequire(import.meta.url).resolve('dsh-tools'))
    const report = await dev.reloader.reloadFiles([toolsFile])
    expect(report?.entries).toEqual([{ id: 'tools', outcome: 'reloaded' }])
    expect([...report!.restarted].sort()).toEqual(['agents', 'greeter', 'workspace-tools'])
    expect(formatReport(report!, project.dir)).toEqual([
      `reloaded tools (${toolsFile}) in ${Math.round(report!.durationMs)} ms`,
      `  also restarted (they inject a reloaded service): ${report!.restarted.join(', ')}`,
    ])
    expect(ctx.tools.list().map(t => t.name).sort()).toEqual(tools)
    expect(listenerCounts(ctx)).toEqual(before)
    // The agents service restarted too: agents it made are disposed, new ones work.
    expect(agent.status).toBe('disposed')
    expect(dev.harness.createSession().agent.status).toBe('idle')
  })
})
