import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { harness } from 'dsh-testkit'

/** Running (a zombie waiting for its reaper counts as dead: it no longer runs). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z'
  } catch {
    return false
  }
}

describe('bash tool', () => {
  it('runs in the workspace and reports the exit code', async () => {
    const { workspace: ws, call } = await harness()
    const r = await call('bash', { command: 'pwd; echo oops >&2; exit 3' })
    expect(r).toEqual({ content: `${ws}\noops\n[exit code 3]`, isError: true, exitCode: 3 })
  })

  it('a timeout kills the whole process tree, even children that ignore SIGTERM', async () => {
    const { workspace: ws, call } = await harness({ workspaceTools: { bashTimeoutMs: 800 } })
    // A child that ignores SIGTERM and a grandchild, both recording their pids.
    const command = [
      `trap '' TERM`,
      `(trap '' TERM; echo $BASHPID > grandchild.pid; while true; do sleep 0.1; done) &`,
      `echo $$ > child.pid`,
      `while true; do sleep 0.1; done`,
    ].join('\n')
    const r = await call('bash', { command })
    expect(r.isError).toBe(true)
    expect(r.exitCode).toBeNull()
    expect(r.content).toMatch(/\[timed out after 1 s \(process group killed\)\]$/)
    const pids = ['child.pid', 'grandchild.pid'].map(f => Number(readFileSync(join(ws, f), 'utf8')))
    for (const pid of pids) await vi.waitFor(() => expect(alive(pid), `pid ${pid} still running`).toBe(false), { timeout: 5000, interval: 50 })
  })

  it('caps output with a visible truncation note', async () => {
    const { call } = await harness({ workspaceTools: { bashMaxOutputBytes: 1000 } })
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
      const { call } = await harness()
      const r = await call('bash', { command: 'echo "key=[${DSH_API_KEY:-unset}] path=[${PATH:+set}]"' })
      expect(r.content).toBe('key=[unset] path=[set]\n[exit code 0]')
    } finally {
      delete process.env.DSH_API_KEY
    }
  })

  it('hides every credential-looking variable; the Config allow-list lets named ones through', async () => {
    const secrets = { OPENAI_API_KEY: 'o', ANTHROPIC_API_KEY: 'a', GITHUB_TOKEN: 'g', AWS_SECRET_ACCESS_KEY: 's', NPM_CONFIG__AUTH: 'n', DB_PASSWORD: 'p', MY_SERVICE_CREDENTIALS: 'c', HF_TOKEN: 'h' }
    const plain = { DSH_PLAIN_SETTING: 'kept', KEYBOARD_LAYOUT: 'kept' }
    Object.assign(process.env, secrets, plain)
    try {
      const print = 'for v in OPENAI_API_KEY ANTHROPIC_API_KEY GITHUB_TOKEN AWS_SECRET_ACCESS_KEY NPM_CONFIG__AUTH DB_PASSWORD MY_SERVICE_CREDENTIALS HF_TOKEN DSH_PLAIN_SETTING KEYBOARD_LAYOUT; do printf "%s=%s " "$v" "${!v:-unset}"; done'
      const hidden = await (await harness()).call('bash', { command: print })
      expect(hidden.content).toBe('OPENAI_API_KEY=unset ANTHROPIC_API_KEY=unset GITHUB_TOKEN=unset AWS_SECRET_ACCESS_KEY=unset NPM_CONFIG__AUTH=unset DB_PASSWORD=unset MY_SERVICE_CREDENTIALS=unset HF_TOKEN=unset DSH_PLAIN_SETTING=kept KEYBOARD_LAYOUT=kept \n[exit code 0]')
      const allowed = await (await harness({ workspaceTools: { bashEnvAllow: ['HF_TOKEN'] } })).call('bash', { command: 'echo "${HF_TOKEN:-unset} ${GITHUB_TOKEN:-unset}"' })
      expect(allowed.content).toBe('h unset\n[exit code 0]')
    } finally {
      for (const name of [...Object.keys(secrets), ...Object.keys(plain)]) delete process.env[name]
    }
  })
})
