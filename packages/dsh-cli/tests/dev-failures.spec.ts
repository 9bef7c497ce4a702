import { unlinkSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { formatReport, type DevReport, type PluginReloadReport } from 'dsh-cli/dev'
import { CORE_ENTRIES } from 'dsh-testkit'
import { closeProjects, counterSource, counterState, devProject, edit, greeterSource, startProject, type DevProject } from './dev-helpers.ts'

afterEach(closeProjects)

const entries = (counter: string) => CORE_ENTRIES
  + `- id: greeter\n  name: ./plugins/greeter.ts\n`
  + `- id: counter\n  name: ./plugins/counter.ts\n  config:\n    id: ${counter}\n`

const THROWING = `export const name = 'greeter'
export const inject = ['tools']
export function apply() {
  throw new Error('greeter cannot start: no greeting configured')
}
`

async function greet(dev: Awaited<ReturnType<typeof startProject>>): Promise<string> {
  const { ctx } = dev.harness
  const session = ctx.sessions.get('probe') ?? ctx.sessions.create('probe', { cwd: dev.harness.workspace })
  const result = await ctx.tools.execute({ session, callId: `c${session.length}`, name: 'greet', arguments: {} })
  return `${result.isError ? 'error: ' : ''}${result.content}`
}

/** Save a working greeter again: the reload succeeds and `greet` answers `reply`. */
async function recoverGreeter(dev: Awaited<ReturnType<typeof startProject>>, project: DevProject, reply: string): Promise<void> {
  const fixed = (await edit(dev, () => project.write('plugins/greeter.ts', greeterSource(reply)))) as PluginReloadReport
  expect(fixed.entries).toEqual([{ id: 'greeter', outcome: 'reloaded' }])
  expect(await greet(dev)).toBe(reply)
}

/** The counter plugin was reloaded: applied `applies` times (each earlier one disposed), last with `tag`. */
function expectCounterReloaded(report: DevReport, counter: string, applies: number, tag: string): void {
  expect((report as PluginReloadReport).entries).toEqual([{ id: 'counter', outcome: 'reloaded' }])
  expect(counterState(counter)).toMatchObject({ applies, disposals: applies - 1 })
  expect(counterState(counter)!.tags.at(-1)).toBe(tag)
}

/** A project whose counter plugin counts under `counter` (one per test: the counts live in globalThis). */
function setup(counter: string) {
  const project = devProject(entries(counter))
  project.write('plugins/greeter.ts', greeterSource('hello v1'))
  project.write('plugins/lib/label.ts', `export const label = () => 'L'\n`)
  project.write('plugins/counter.ts', counterSource('T'))
  return project
}

describe('dsh dev: failing reloads', () => {
  it('a syntax error is shown with file, line and column, keeps the previous version running, and the next good save recovers', async () => {
    const project = setup('failures-1')
    const dev = await startProject(project)
    const broken = (await edit(dev, () => project.write('plugins/greeter.ts', greeterSource('hello v2', 'const broken = (1 +;')))) as PluginReloadReport
    expect(broken.entries).toEqual([{
      id: 'greeter', outcome: 'failed', stage: 'import', running: 'previous',
      error: { message: 'Unexpected ";"', file: join(project.dir, 'plugins/greeter.ts'), line: 4, column: 20 },
    }])
    expect(formatReport(broken, project.dir)).toEqual([
      'reload of greeter failed: plugins/greeter.ts:4:20: Unexpected ";" — the previous version keeps running; fix it and save again',
    ])
    expect(await greet(dev)).toBe('hello v1')
    expect(counterState('failures-1')).toMatchObject({ applies: 1, disposals: 0 })
    await recoverGreeter(dev, project, 'hello v3')
  })

  it('a syntax error in an imported helper names the helper; fixing the helper reloads the plugin that imports it', async () => {
    const project = setup('failures-2')
    const dev = await startProject(project)
    const broken = (await edit(dev, () => project.write('plugins/lib/label.ts', `export const label = () => {\n  return 'L2'\n`))) as PluginReloadReport
    expect(broken.entries).toEqual([{
      id: 'counter', outcome: 'failed', stage: 'import', running: 'previous',
      error: { message: 'Unexpected end of file', file: join(project.dir, 'plugins/lib/label.ts'), line: 3, column: 1 },
    }])
    expect(counterState('failures-2')).toMatchObject({ applies: 1, disposals: 0 })
    const fixed = await edit(dev, () => project.write('plugins/lib/label.ts', `export const label = () => {\n  return 'L3'\n}\n`))
    expectCounterReloaded(fixed, 'failures-2', 2, 'T:L3')
  })

  it('deleting an imported helper fails the reload (the previous version keeps running); writing it back recovers', async () => {
    const project = setup('failures-5')
    const dev = await startProject(project)
    const label = join(project.dir, 'plugins/lib/label.ts')
    const gone = (await edit(dev, () => unlinkSync(label))) as PluginReloadReport
    expect(gone.files).toEqual([label])
    expect(gone.entries).toMatchObject([{ id: 'counter', outcome: 'failed', stage: 'import', running: 'previous' }])
    expect(formatReport(gone, project.dir)).toEqual([
      `reload of counter failed: Cannot find module '${label}' imported from ${join(project.dir, 'plugins/counter.ts')} — the previous version keeps running; fix it and save again`,
    ])
    expect(dev.watcher.files).toContain(label)
    const back = await edit(dev, () => project.write('plugins/lib/label.ts', `export const label = () => 'back'\n`))
    expectCounterReloaded(back, 'failures-5', 2, 'T:back')
  })

  it('a throwing apply is shown at the throw, stops only that plugin (the others keep running), and the next good save recovers', async () => {
    const project = setup('failures-3')
    const dev = await startProject(project)
    const { ctx } = dev.harness
    const failed = (await edit(dev, () => project.write('plugins/greeter.ts', THROWING))) as PluginReloadReport
    expect(failed.entries).toEqual([{
      id: 'greeter', outcome: 'failed', stage: 'apply', running: 'none',
      error: { message: 'greeter cannot start: no greeting configured', file: join(project.dir, 'plugins/greeter.ts'), line: 4, column: 9 },
    }])
    expect(formatReport(failed, project.dir)).toEqual([
      'reload of greeter failed: plugins/greeter.ts:4:9: greeter cannot start: no greeting configured — greeter is stopped; fix it and save again',
    ])
    expect(ctx.tools.get('greet')).toBeUndefined()
    expect(await greet(dev)).toMatch(/^error: unknown tool "greet"/)
    expect(counterState('failures-3')).toMatchObject({ applies: 1, disposals: 0 })
    await recoverGreeter(dev, project, 'hello again')
  })

  it('a burst of saves is one reload; a file no plugin imports reloads nothing', async () => {
    const project = setup('failures-4')
    const dev = await startProject(project, { debounceMs: 150 })
    const next = dev.nextReport()
    for (let i = 1; i <= 5; i++) project.write('plugins/counter.ts', counterSource(`B${i}`))
    expectCounterReloaded(await next, 'failures-4', 2, 'B5:L')
    // No second report from the burst: the next one is this later save's.
    expectCounterReloaded(await edit(dev, () => project.write('plugins/counter.ts', counterSource('B6'))), 'failures-4', 3, 'B6:L')
    expect(dev.reports).toHaveLength(2)
    expect(await dev.reloader.reloadFiles([join(project.dir, 'package.json')])).toBeUndefined()
  })
})
