import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { setup } from './helpers.ts'

/** Running (a zombie waiting for its reaper counts as dead: it no longer runs). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z'
  } catch {
    return false
  }
}

async function waitDead(pid: number, ms = 5000): Promise<boolean> {
  const until = Date.now() + ms
  while (alive(pid)) {
    if (Date.now() > until) return false
    await new Promise(r => setTimeout(r, 50))
  }
  return true
}

describe('bash tool', () => {
  it('runs in the workspace and reports the exit code', async () => {
    const { ws, call } = await setup()
    const r = await call('bash', { command: 'pwd; echo oops >&2; exit 3' })
    expect(r).toEqual({ content: `${ws}\noops\n[exit code 3]`, isError: true, exitCode: 3 })
  })

  it('a timeout kills the whole process tree, even children that ignore SIGTERM', async () => {
    const { ws, call } = await setup({ bashTimeoutMs: 800 })
    // A child that ignores SIGTERM and a grandchild, both recording their pids.
    const command = [
      `trap '' TERM`,
      `(trap '' TERM; echo $BASHPID > grandchild.pid; while true; do sleep 0.1; done) &`,
      `echo $$ > child.pid`,
      `while true; do sleep 0.1; done`,
    ].join('\n')
    const started = Date.now()
    const r = await call('bash', { command })
    expect(r.isError).toBe(true)
    expect(r.exitCode).toBeNull()
    expect(r.content).toMatch(/\[timed out after 1 s \(process group killed\)\]$/)
    expect(Date.now() - started).toBeLessThan(10_000)
    const pids = ['child.pid', 'grandchild.pid'].map(f => Number(readFileSync(join(ws, f), 'utf8')))
    for (const pid of pids) expect(await waitDead(pid), `pid ${pid} still running`).toBe(true)
  })

  it('caps output with a visible truncation note', async () => {
    const { call } = await setup({ bashMaxOutputBytes: 1000 })
    const r = await call('bash', { command: 'head -c 5000 /dev/zero | tr "\\0" a' })
    expect(r.content).toContain('[… 4000 bytes truncated]')
    expect(r.content.startsWith('a'.repeat(1000))).toBe(true)
    expect(r.content.endsWith('[exit code 0]')).toBe(true)
  })
})

describe('bash environment', () => {
  it('does not expose the harness model credentials to the command', async () => {
    process.env.DSH_API_KEY = 'sk-secret-test'
    try {
      const { call } = await setup()
      const r = await call('bash', { command: 'echo "key=[${DSH_API_KEY:-unset}] path=[${PATH:+set}]"' })
      expect(r.content).toBe('key=[unset] path=[set]\n[exit code 0]')
    } finally {
      delete process.env.DSH_API_KEY
    }
  })
})
