import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { isolationSupport } from '../src/isolation.ts'

const support = isolationSupport()
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href
const runModule = pathToFileURL(fileURLToPath(new URL('../src/run.ts', import.meta.url))).href

/** Pids whose command line carries `token` (this user's processes, Linux /proc). */
function carrying(token: string): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'latin1').includes(token)) pids.push(Number(entry))
    } catch {
      // Ended while we looked.
    }
  }
  return pids
}

async function until(done: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms
  while (!done()) {
    if (Date.now() > end) return false
    await new Promise(r => setTimeout(r, 50))
  }
  return true
}

describe.skipIf(support.mode !== 'namespaces')('an isolated command when the process that started it is SIGKILLed', () => {
  const dirs: string[] = []
  const leftovers: number[] = []
  afterEach(() => {
    for (const pid of leftovers.splice(0)) try { process.kill(pid, 'SIGKILL') } catch { /* already gone */ }
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
  })

  it('ends with it: the namespace, a setsid child and all, is gone (no exit handler runs on SIGKILL)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-isolation-kill-'))
    dirs.push(dir)
    const token = `dsh-kill-token-${process.pid}-${Date.now()}`
    // Inside: a setsid'd grandchild and a plain child, both long-lived; `ready` once both started.
    const command = `(setsid sh -c 'sleep 300; : ${token}' &); sh -c 'sleep 300; : ${token}' & touch ready; wait`
    const script = `const { runCommand } = await import(${JSON.stringify(runModule)}); await runCommand(['/bin/sh', '-c', ${JSON.stringify(command)}], { cwd: ${JSON.stringify(dir)}, isolate: {} })`
    const parent = spawn(process.execPath, ['--import', tsx, '--input-type=module', '-e', script], { stdio: 'ignore' })
    try {
      expect(await until(() => existsSync(join(dir, 'ready')) && carrying(token).length >= 3, 30_000)).toBe(true)
      parent.kill('SIGKILL')
      const gone = await until(() => carrying(token).length === 0, 10_000)
      leftovers.push(...carrying(token))
      expect(gone).toBe(true)
    } finally {
      parent.kill('SIGKILL')
    }
  }, 60_000)
})
