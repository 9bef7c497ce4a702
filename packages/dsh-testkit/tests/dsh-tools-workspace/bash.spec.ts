import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { harness, tempDir } from 'dsh-testkit'
import { isolationSupport } from 'dsh-common'

/** Processes running (not zombies) whose command line contains `marker`. */
function running(marker: string): number[] {
  return readdirSync('/proc').filter(n => /^\d+$/.test(n)).map(Number).filter(pid => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z' && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker)
    } catch {
      return false // ENOENT: it ended while we looked.
    }
  })
}

/** Run `fn` with bash's namespaces switched off (the fallback: the marker sweep). */
async function withoutNamespaces<T>(fn: () => Promise<T>): Promise<T> {
  process.env.DSH_ISOLATION = 'off'
  try {
    return await fn()
  } finally {
    delete process.env.DSH_ISOLATION
  }
}

const namespaces = isolationSupport().mode === 'namespaces'

describe('bash tool', () => {
  it('runs in the workspace and reports the exit code', async () => {
    const { workspace: ws, call } = await harness()
    const r = await call('bash', { command: 'pwd; echo oops >&2; exit 3' })
    expect(r).toEqual({ content: `${ws}\noops\n[exit code 3]`, isError: true, exitCode: 3 })
  })

  it('a timeout kills the whole process tree, even children that ignore SIGTERM', async () => {
    const { call } = await harness({ workspaceTools: { bashTimeoutMs: 800 } })
    const marker = `dsh-tree-${process.pid}-${Date.now()}`
    // A child that ignores SIGTERM and a grandchild, each named by the marker.
    const command = [
      `trap '' TERM`,
      `bash -c 'trap "" TERM; while true; do sleep 0.1; done' ${marker}-grandchild &`,
      `exec bash -c 'trap "" TERM; while true; do sleep 0.1; done' ${marker}-child`,
    ].join('\n')
    const r = await call('bash', { command })
    expect(r.isError).toBe(true)
    expect(r.exitCode).toBeNull()
    expect(r.content).toMatch(/\[timed out after 1 s \(process group killed\)\]$/)
    await vi.waitFor(() => expect(running(marker)).toEqual([]), { timeout: 5000, interval: 50 })
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

describe('bash: nothing a command started outlives its call', () => {
  const modes = [['in namespaces', namespaces, (fn: () => Promise<void>) => fn()], ['without namespaces (marker sweep)', true, withoutNamespaces]] as const
  for (const [mode, available, around] of modes) {
    it.skipIf(!available)(`${mode}: a setsid'd background process ends when the command does`, () => around(async () => {
      const { call } = await harness()
      const marker = `4${process.pid}${Date.now() % 100000}`
      const r = await call('bash', { command: `(setsid sleep ${marker} &); echo started` })
      expect(r).toEqual({ content: 'started\n[exit code 0]', isError: false, exitCode: 0 })
      await vi.waitFor(() => expect(running(`sleep\0${marker}`)).toEqual([]), { timeout: 5000, interval: 50 })
    }))

    it.skipIf(!available)(`${mode}: a timeout ends a setsid'd process too`, () => around(async () => {
      const { call } = await harness({ workspaceTools: { bashTimeoutMs: 800 } })
      const marker = `5${process.pid}${Date.now() % 100000}`
      const r = await call('bash', { command: `(setsid sleep ${marker} &); sleep 30` })
      expect(r.content).toBe('[timed out after 1 s (process group killed)]')
      await vi.waitFor(() => expect(running(`sleep\0${marker}`)).toEqual([]), { timeout: 5000, interval: 50 })
    }))
  }
})

describe('bash: the vault is the harness\'s', () => {
  it.skipIf(!namespaces)('in namespaces the vault is read-only and the key store hidden; the workspace stays writable', async () => {
    const state = tempDir()
    process.env.DSH_STATE_DIR = state
    try {
      writeFileSync(join(state, 'seal.key'), 'k'.repeat(32))
      const { workspace: ws, call } = await harness()
      mkdirSync(join(ws, '.dsh'))
      writeFileSync(join(ws, '.dsh/proofchain.jsonl'), 'real\n')
      const r = await call('bash', { command: `echo forged > .dsh/proofchain.jsonl; rm -f .dsh/proofchain.jsonl; cat ${state}/seal.key; umount ${state} 2>/dev/null; echo ok > a.txt` })
      expect(r.content).toContain('.dsh/proofchain.jsonl: Read-only file system')
      expect(r.content).not.toContain('kkkk')
      expect(readFileSync(join(ws, '.dsh/proofchain.jsonl'), 'utf8')).toBe('real\n')
      expect(readFileSync(join(ws, 'a.txt'), 'utf8')).toBe('ok\n')
    } finally {
      delete process.env.DSH_STATE_DIR
    }
  })

  it('without namespaces a change to the proof chain or a checkpoint is put back and said; lines appended to the chain are left to the seal', () => withoutNamespaces(async () => {
    const { workspace: ws, call } = await harness()
    mkdirSync(join(ws, '.dsh/checkpoints'), { recursive: true })
    writeFileSync(join(ws, '.dsh/proofchain.jsonl'), 'real\n')
    writeFileSync(join(ws, '.dsh/checkpoints/s1.json'), '{"summary":"real"}\n')
    const r = await call('bash', { command: 'echo forged > .dsh/proofchain.jsonl; rm .dsh/checkpoints/s1.json; echo "{}" > .dsh/checkpoints/s2.json; echo ok > a.txt' })
    expect(r).toEqual({ content: "[exit code 0]\n[the command changed dsh's vault (checkpoints/s1.json, checkpoints/s2.json, proofchain.jsonl): put back — the vault holds the harness's records, not the workspace's]", isError: true, exitCode: 0 })
    expect(readFileSync(join(ws, '.dsh/proofchain.jsonl'), 'utf8')).toBe('real\n')
    expect(readdirSync(join(ws, '.dsh/checkpoints'))).toEqual(['s1.json'])
    expect(readFileSync(join(ws, 'a.txt'), 'utf8')).toBe('ok\n')
    const appended = await call('bash', { command: 'echo more >> .dsh/proofchain.jsonl' })
    expect(appended.content).toBe('[exit code 0]')
  }))

  it('write_file, edit_file and multi_edit refuse the vault', async () => {
    const { workspace: ws, call } = await harness()
    mkdirSync(join(ws, '.dsh'))
    writeFileSync(join(ws, '.dsh/proofchain.jsonl'), 'real\n')
    expect(await call('write_file', { path: '.dsh/proofchain.jsonl', content: 'forged\n' })).toEqual({ content: "refused: .dsh/proofchain.jsonl is inside dsh's vault (the harness's own records); nothing was touched", isError: true })
    expect(await call('edit_file', { path: '.dsh/proofchain.jsonl', old_string: 'real', new_string: 'x' })).toEqual({ content: "refused: .dsh/proofchain.jsonl is inside dsh's vault (the harness's own records); nothing was touched", isError: true })
    expect(await call('multi_edit', { edits: [{ path: './.dsh/proofchain.jsonl', old_string: 'real', new_string: 'x' }] })).toEqual({ content: "refused: ./.dsh/proofchain.jsonl is inside dsh's vault (the harness's own records); nothing was touched", isError: true })
    expect(readFileSync(join(ws, '.dsh/proofchain.jsonl'), 'utf8')).toBe('real\n')
  })
})
