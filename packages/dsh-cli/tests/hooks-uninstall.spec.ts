/**
 * `dsh hooks uninstall` stops the project's host once no hook of ours is
 * left that would call it: a real host (started by install), a real
 * SIGTERM, the process gone when uninstall returns. Taking out one agent of
 * two leaves it running for the other.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import { hostStatus, type HostStatus } from 'dsh-host-hooks'
import { tempDir } from 'dsh-testkit'
import { dsh } from './helpers.ts'

/** Whether a process runs (a zombie does not). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    // ESRCH: gone.
    return false
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2))
  } catch {
    // ENOENT: reaped meanwhile.
    return false
  }
}

async function hostUp(vault: string): Promise<HostStatus> {
  // The host boots the suite in the background of install (a few seconds on a busy machine).
  for (let i = 0; i < 600; i++) {
    const s = await hostStatus(vault)
    if (s.state === 'up') return s
    await new Promise(r => setTimeout(r, 200))
  }
  throw new Error(`the host did not come up: ${JSON.stringify(await hostStatus(vault))}`)
}

describe('dsh hooks uninstall: the project\'s host', { timeout: 240_000 }, () => {
  it('goes with the last agent\'s hooks: uninstall stops it (SIGTERM) and says so; with an agent left it keeps running', async () => {
    const ws = tempDir('dsh-hooks-uninstall-')
    const home = tempDir('dsh-hooks-uninstall-home-')
    writeFileSync(join(ws, 'package.json'), '{ "name": "w", "private": true, "type": "module" }\n')
    const vault = join(ws, '.dsh')
    const run = (args: string[]) => dsh(['hooks', ...args, '--workspace', ws], { env: { HOME: home } })
    onTestFinished(async () => {
      const s = await hostStatus(vault)
      if (s.pid && running(s.pid)) process.kill(s.pid, 'SIGKILL')
    })

    expect((await run(['install', '--agent', 'claude-code'])).exitCode).toBe(0)
    expect((await run(['install', '--agent', 'gemini', '--no-start'])).exitCode).toBe(0)
    const { pid } = await hostUp(vault)
    expect(pid).toBeGreaterThan(0)

    // Claude Code's hooks are still there: its host stays.
    const one = await run(['uninstall', '--agent', 'gemini'])
    expect(one.exitCode).toBe(0)
    expect(one.stdout).not.toContain('stopped')
    expect(running(pid!)).toBe(true)
    expect((await hostStatus(vault)).pid).toBe(pid)

    const all = await run(['uninstall'])
    expect(all.exitCode).toBe(0)
    expect(all.stdout.split('\n').at(-2)).toBe(`stopped the guard of this project (pid ${pid})`)
    expect(running(pid!)).toBe(false)
    expect((await hostStatus(vault)).state).toBe('down')
  })
})
