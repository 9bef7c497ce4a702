import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { applyHostSettings, hookPaths, readHostSettings, writeHostSettings } from 'dsh-host-hooks'
import { tempDir } from 'dsh-testkit'

describe('the workspace\'s host settings (<vault>/hooks/settings.json)', () => {
  it('are none when the file is absent: the environment and cordis.yml decide', () => {
    const vault = join(tempDir('dsh-host-settings-'), '.dsh')
    expect(readHostSettings(vault)).toEqual({ settings: {}, problems: [] })
    const env: NodeJS.ProcessEnv = { DSH_BACKGROUND: '1' }
    applyHostSettings(readHostSettings(vault).settings, env)
    expect(env).toEqual({ DSH_BACKGROUND: '1' })
  })

  it('written, are read back and set over what the host inherited', () => {
    const vault = join(tempDir('dsh-host-settings-'), '.dsh')
    writeHostSettings(vault, { background: false, verdicts: 'strict' })
    expect(statSync(hookPaths(vault).dir).mode & 0o777).toBe(0o700)
    expect(JSON.parse(readFileSync(hookPaths(vault).settings, 'utf8'))).toEqual({ background: false, verdicts: 'strict' })
    const read = readHostSettings(vault)
    expect(read).toEqual({ settings: { background: false, verdicts: 'strict' }, problems: [] })
    const env: NodeJS.ProcessEnv = { DSH_BACKGROUND: '1', DSH_VERDICTS: 'turn', HOME: '/h' }
    applyHostSettings(read.settings, env)
    expect(env).toEqual({ DSH_BACKGROUND: '0', DSH_VERDICTS: 'strict', HOME: '/h' })
    writeHostSettings(vault, { background: true })
    applyHostSettings(readHostSettings(vault).settings, env)
    expect(env.DSH_BACKGROUND).toBe('1')
  })

  it('leave out what they do not know, saying so; a file that is not a JSON object applies nothing', () => {
    const vault = join(tempDir('dsh-host-settings-'), '.dsh')
    const file = hookPaths(vault).settings
    mkdirSync(hookPaths(vault).dir, { recursive: true })
    writeFileSync(file, JSON.stringify({ background: 'no', verdicts: 'strict', tests: 'off' }))
    expect(readHostSettings(vault)).toEqual({
      settings: { verdicts: 'strict' },
      problems: [
        `${file}: background: "no" is not a setting (background: true | false; verdicts: "turn" | "strict"); left out`,
        `${file}: tests: "off" is not a setting (background: true | false; verdicts: "turn" | "strict"); left out`,
      ],
    })
    writeFileSync(file, '{ background: false')
    const bad = readHostSettings(vault)
    expect(bad.settings).toEqual({})
    expect(bad.problems).toHaveLength(1)
    expect(bad.problems[0]).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not JSON \\(.+\\); its settings are not applied$`))
    writeFileSync(file, '[false]')
    expect(readHostSettings(vault)).toEqual({ settings: {}, problems: [`${file} is not a JSON object; its settings are not applied`] })
  })
})
