import { setTimeout as delay } from 'node:timers/promises'
import { afterEach, describe, expect, it } from 'vitest'
import { formatReport, type ConfigReloadReport, type DevReport } from 'dsh-cli/dev'
import { CORE_ENTRIES, listenerCounts } from 'dsh-testkit'
import { closeProjects, counterSource, counterState, devProject, edit, startProject, type DevProject } from './dev-helpers.ts'

afterEach(closeProjects)

const NO_CHANGE = { added: [], removed: [], disabled: [], enabled: [], reconfigured: [], renamed: [] }

function asConfig(report: DevReport): ConfigReloadReport {
  expect(report.kind).toBe('config')
  return report as ConfigReloadReport
}

function counterEntry(id: string, counter: string, extra = '', file = 'counter.ts'): string {
  return `- id: ${id}\n  name: ./plugins/${file}\n${extra}  config:\n    id: ${counter}\n`
}

/** Counts live in globalThis, so every test names its own counters (`prefix`-a, -b, …). */
function project(prefix: string): DevProject {
  const p = devProject(CORE_ENTRIES + counterEntry('a', `${prefix}-a`))
  p.write('plugins/lib/label.ts', `export const label = () => 'L'\n`)
  p.write('plugins/counter.ts', counterSource('C'))
  p.write('plugins/counter2.ts', counterSource('R'))
  return p
}

describe('dsh dev: cordis.yml changes', () => {
  afterEach(() => {
    delete process.env.DSH_DEV_SPEC_OFF
    delete process.env.DSH_DEV_SPEC_LEVEL
  })

  it('disable, re-enable, add, reconfigure, rename and remove entries in place, never rewriting the file, leaving no listener behind', async () => {
    const p = project('cfg')
    const dev = await startProject(p)
    // A comment and a blank line: what a loader write-back (a YAML dump) would lose.
    const apply = async (entries: string) => {
      const text = `# the dev spec's harness\n\n${entries}`
      const report = asConfig(await edit(dev, () => p.write('cordis.yml', text)))
      await delay(50) // the loader schedules its config write-backs on a 0 ms timer
      expect(p.read('cordis.yml')).toBe(text)
      return report
    }
    const before = listenerCounts(dev.harness.ctx)
    expect(counterState('cfg-a')).toMatchObject({ applies: 1, disposals: 0 })

    const disabled = await apply(CORE_ENTRIES + counterEntry('a', 'cfg-a', '  disabled: true\n'))
    expect(disabled.diff).toEqual({ ...NO_CHANGE, disabled: ['a'] })
    expect(formatReport(disabled, p.dir)[0]).toMatch(/^cordis\.yml: disabled a in \d+ ms$/)
    expect(counterState('cfg-a')).toMatchObject({ applies: 1, disposals: 1 })

    const enabled = await apply(CORE_ENTRIES + counterEntry('a', 'cfg-a'))
    expect(enabled.diff).toEqual({ ...NO_CHANGE, enabled: ['a'] })
    expect(counterState('cfg-a')).toMatchObject({ applies: 2, disposals: 1 })

    const added = await apply(CORE_ENTRIES + counterEntry('a', 'cfg-a') + counterEntry('b', 'cfg-b'))
    expect(added.diff).toEqual({ ...NO_CHANGE, added: ['b'] })
    expect(counterState('cfg-b')).toMatchObject({ applies: 1, disposals: 0 })
    expect(dev.watcher.files).toContain(p.dir + '/plugins/counter.ts')

    const reconfigured = await apply(CORE_ENTRIES + counterEntry('a', 'cfg-a', '', 'counter.ts').replace('    id: cfg-a\n', '    id: cfg-a\n    level: 2\n') + counterEntry('b', 'cfg-b'))
    expect(reconfigured.diff).toEqual({ ...NO_CHANGE, reconfigured: ['a'] })
    expect(counterState('cfg-a')).toMatchObject({ applies: 3, disposals: 2 })
    expect(counterState('cfg-a')!.configs.at(-1)).toEqual({ id: 'cfg-a', level: 2 })
    expect(counterState('cfg-b')).toMatchObject({ applies: 1, disposals: 0 })

    const renamed = await apply(CORE_ENTRIES + counterEntry('a', 'cfg-a').replace('    id: cfg-a\n', '    id: cfg-a\n    level: 2\n') + counterEntry('b', 'cfg-b', '', 'counter2.ts'))
    expect(renamed.diff).toEqual({ ...NO_CHANGE, renamed: ['b'] })
    expect(counterState('cfg-b')).toMatchObject({ applies: 2, disposals: 1 })
    expect(counterState('cfg-b')!.tags.at(-1)).toBe('R:L')
    expect(dev.watcher.files).toContain(p.dir + '/plugins/counter2.ts')

    const removed = await apply(CORE_ENTRIES + counterEntry('a', 'cfg-a').replace('    id: cfg-a\n', '    id: cfg-a\n    level: 2\n'))
    expect(removed.diff).toEqual({ ...NO_CHANGE, removed: ['b'] })
    expect(removed.entries).toEqual([])
    expect(counterState('cfg-b')).toMatchObject({ applies: 2, disposals: 2 })
    expect(counterState('cfg-a')).toMatchObject({ applies: 3, disposals: 2 })
    expect(dev.watcher.files).not.toContain(p.dir + '/plugins/counter2.ts')

    expect(listenerCounts(dev.harness.ctx)).toEqual(before)
  })

  it('an invalid file or an unknown plugin is reported with its line and changes nothing; the next good save applies', async () => {
    const p = project('inv')
    const dev = await startProject(p)
    const good = p.read('cordis.yml')
    const invalid = asConfig(await edit(dev, () => p.write('cordis.yml', good + '- id: b\n  name: [unclosed\n')))
    expect(invalid.diff).toBeUndefined()
    expect(invalid.error?.message).toMatch(/cordis\.yml:\d+:\d+: invalid YAML/)
    expect(formatReport(invalid, p.dir)[0]).toMatch(/ — not applied, the running plugins are unchanged; fix it and save again$/)

    const unknown = asConfig(await edit(dev, () => p.write('cordis.yml', good + '- id: b\n  name: ./plugins/missing.ts\n')))
    expect(unknown.error?.message).toBe(`${p.config}:${good.split('\n').length + 1}: plugin "./plugins/missing.ts" (entry b) is not installed`)
    expect(counterState('inv-a')).toMatchObject({ applies: 1, disposals: 0 })

    const fixed = asConfig(await edit(dev, () => p.write('cordis.yml', good + counterEntry('b', 'inv-b2'))))
    expect(fixed.diff).toEqual({ ...NO_CHANGE, added: ['b'] })
    expect(counterState('inv-b2')).toMatchObject({ applies: 1 })
  })

  it('`!!js` toggles and config values follow the environment: evaluated at boot, a toggle again when cordis.yml changes', async () => {
    const p = project('env')
    const level = `    level: !!js "Number(process.env.DSH_DEV_SPEC_LEVEL || 1)"\n`
    const toggled = CORE_ENTRIES + counterEntry('a', 'env-a') + level + counterEntry('c', 'env-c', `  disabled: !!js process.env.DSH_DEV_SPEC_OFF === '1'\n`)
    p.write('cordis.yml', toggled)
    process.env.DSH_DEV_SPEC_OFF = '1'
    process.env.DSH_DEV_SPEC_LEVEL = '3'
    const dev = await startProject(p)
    expect(counterState('env-c')).toBeUndefined()
    expect(counterState('env-a')!.configs).toEqual([{ id: 'env-a', level: 3 }])
    process.env.DSH_DEV_SPEC_OFF = '0'
    const report = asConfig(await edit(dev, () => p.write('cordis.yml', `# tests turned the variable off\n${toggled}`)))
    expect(report.diff).toEqual({ ...NO_CHANGE, enabled: ['c'] })
    expect(counterState('env-c')).toMatchObject({ applies: 1, disposals: 0 })
    expect(counterState('env-a')).toMatchObject({ applies: 1, disposals: 0 })
  })
})
