import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { hookPaths, writeHostSettings } from 'dsh-host-hooks'
import { tempDir } from 'dsh-testkit'
import { dsh } from './helpers.ts'

describe('dsh hooks status: the workspace\'s host settings', () => {
  it('says what .dsh/hooks/settings.json makes the host do, and what in it is left out; nothing when there is none', async () => {
    const ws = tempDir('dsh-hooks-status-')
    const home = tempDir('dsh-hooks-status-home-')
    const status = (json = false) => dsh(['hooks', 'status', '--workspace', ws, ...(json ? ['--json'] : [])], { env: { HOME: home } })
    const none = await status()
    expect(none.exitCode).toBe(1)
    expect(none.stdout).not.toContain('settings:')
    writeHostSettings(join(ws, '.dsh'), { background: false, verdicts: 'strict' })
    const off = await status()
    expect(off.stdout.split('\n').at(-2)).toBe('settings: background verdicts off: each write waits for its whole verdict, verdicts strict (.dsh/hooks/settings.json, read when the host starts)')
    expect(JSON.parse((await status(true)).stdout)).toMatchObject({ settings: { background: false, verdicts: 'strict' } })
    mkdirSync(hookPaths(join(ws, '.dsh')).dir, { recursive: true })
    writeFileSync(hookPaths(join(ws, '.dsh')).settings, JSON.stringify({ background: true, tests: 'off' }))
    const file = hookPaths(join(ws, '.dsh')).settings
    expect((await status()).stdout.split('\n').at(-2)).toBe(`settings: background verdicts on (.dsh/hooks/settings.json, read when the host starts); ${file}: tests: "off" is not a setting (background: true | false; verdicts: "turn" | "strict"); left out`)
    expect(JSON.parse((await status(true)).stdout)).toMatchObject({ settings: { background: true }, settingsProblems: [`${file}: tests: "off" is not a setting (background: true | false; verdicts: "turn" | "strict"); left out`] })
  })
})
