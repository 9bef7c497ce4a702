import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { isolationSupport, readJsonl } from 'dsh-common'
import { checkTrace } from 'dsh-invariants'
import { CORE_ENTRIES, tempDir, writeScript } from 'dsh-testkit'
import { dsh, repoRoot } from './helpers.ts'

const bin = join(repoRoot, 'packages/dsh-cli/src/bin.ts')
const started: ChildProcess[] = []

/** Processes whose command line contains `marker` (zombies have none, so they never count). */
function survivors(marker: string): number[] {
  const out: number[] = []
  for (const pid of readdirSync('/proc').filter(n => /^\d+$/.test(n))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker)) out.push(Number(pid))
    } catch {
      // ENOENT: the process ended while we looked.
    }
  }
  return out
}

/** Whether `sleep <marker>` itself is running (not merely a shell whose script mentions it). */
function sleeping(marker: string): boolean {
  return survivors(marker).some(pid => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8') === `sleep\0${marker}\0`
    } catch {
      return false // ENOENT: the process ended while we looked.
    }
  })
}

async function waitFor(what: string, ok: () => boolean, cli: ChildProcess) {
  while (!ok()) {
    if (cli.exitCode !== null) throw new Error(`dsh exited (${cli.exitCode}) before ${what}`)
    await delay(50)
  }
}

/** The real CLI in its own process group, as a shell starts a foreground job. */
function startDsh(args: string[]) {
  const cli = spawn(process.execPath, ['--import', 'tsx', bin, ...args], { cwd: repoRoot, detached: true, env: { ...process.env, NODE_ENV: 'test' }, stdio: ['ignore', 'pipe', 'pipe'] })
  started.push(cli)
  let stderr = ''
  cli.stderr!.on('data', (d: Buffer) => { stderr += d })
  cli.stdout!.resume()
  const exited = new Promise<number | null>(resolve => cli.on('exit', code => resolve(code)))
  return { cli, exited, stderr: () => stderr }
}

function sessionLog(ws: string) {
  const dir = join(ws, '.dsh/sessions')
  const [file] = readdirSync(dir)
  const read = readJsonl<{ seq: number; type: string; data: Record<string, unknown> }>(join(dir, file!))
  expect(read.torn).toBe(false)
  return read.records
}

afterAll(() => {
  for (const c of started) if (c.exitCode === null && c.signalCode === null && c.pid) process.kill(-c.pid, 'SIGKILL')
})

/**
 * `dsh run` whose one write (`a.txt`: before → after) starts a check that hangs in `sleep <marker>`
 * (marker `3000.<pid><n>`), returned once the sleep runs. `entries`: cordis.yml entries before the
 * snapshot and dstvalid ones.
 */
async function hangingCheck(n: number, entries = '') {
  const dir = tempDir()
  const ws = join(dir, 'ws')
  mkdirSync(ws)
  writeFileSync(join(ws, 'a.txt'), 'before\n')
  const marker = `3000.${process.pid}${n}`
  const config = join(dir, 'cordis.yml')
  writeFileSync(config, `${CORE_ENTRIES}${entries}- id: snapshot\n  name: dsh-snapshot\n- id: dstvalid\n  name: dsh-dstvalid\n  config:\n    profiles: [generic]\n    compileCommand: "if grep -q after a.txt; then sleep ${marker}; fi"\n`)
  const script = writeScript(dir, [{ toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'after\n' } }] }, { text: 'never reached' }])
  const run = startDsh(['run', '--workspace', ws, '--script', script, '--config', config])
  await waitFor('the check started', () => sleeping(marker), run.cli)
  return { ws, marker, run }
}

describe('stop signals', () => {
  it('SIGINT to the CLI\'s process group (Ctrl-C) while bash runs sleep: exit 130, no survivor, the log is complete and readable', async () => {
    const dir = tempDir()
    const ws = join(dir, 'ws')
    mkdirSync(ws)
    const marker = `3000.${process.pid}1`
    const config = join(dir, 'cordis.yml')
    writeFileSync(config, `${CORE_ENTRIES}- id: sessions-jsonl\n  name: dsh-session/jsonl\n`)
    const script = writeScript(dir, [{ toolCalls: [{ name: 'bash', arguments: { command: `sleep ${marker}` } }] }, { text: 'never reached' }])
    const run = startDsh(['run', '--workspace', ws, '--script', script, '--config', config])
    await waitFor('sleep started', () => sleeping(marker), run.cli)
    process.kill(-run.cli.pid!, 'SIGINT')
    expect(await run.exited).toBe(130)
    expect(survivors(marker)).toEqual([])
    const events = sessionLog(ws)
    expect(checkTrace(events)).toEqual([])
    expect(events.find(e => e.type === 'tool/result')?.data).toMatchObject({ name: 'bash', isError: true })
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'aborted' } })
    expect(run.stderr()).toMatch(/^dsh run: stopped by SIGINT · session \S+ · log \S+\.jsonl\n$/m)
  })

  it('SIGHUP while a check hangs after a write: exit 129, no survivor, log readable, dsh recover puts the workspace back', async () => {
    const { ws, marker, run } = await hangingCheck(2, '- id: sessions-jsonl\n  name: dsh-session/jsonl\n')
    process.kill(run.cli.pid!, 'SIGHUP')
    expect(await run.exited).toBe(129)
    expect(survivors(marker)).toEqual([])
    const events = sessionLog(ws)
    expect(events.filter(e => e.type === 'tool/call').map(e => e.data.name)).toEqual(['write_file'])
    expect(events.some(e => e.type === 'tool/result')).toBe(false)
    expect(run.stderr()).toContain(`dsh run: 1 tool call(s) did not finish (write_file); a write among them stays in the snapshot journal, unjudged: \`dsh recover --workspace ${ws}\` puts its files back (so does the next session on this workspace)\n`)
    expect(readFileSync(join(ws, 'a.txt'), 'utf8')).toBe('after\n')
    const recovered = await dsh(['recover', '--workspace', ws])
    expect(recovered.stdout).toContain('rolled back')
    expect(recovered.exitCode).toBe(0)
    expect(readFileSync(join(ws, 'a.txt'), 'utf8')).toBe('before\n')
    expect(existsSync(join(ws, '.dsh/.gitignore'))).toBe(true)
  })

  it.skipIf(isolationSupport().mode !== 'namespaces')('SIGKILL of dsh alone while a check hangs: the check (its own process group) ends with it (ADR 0015)', async () => {
    const { marker, run } = await hangingCheck(4)
    // No exit handler runs: only the kernel can end the check (its namespace's parent-death signal).
    process.kill(run.cli.pid!, 'SIGKILL')
    expect(await run.exited).toBe(null)
    await vi.waitFor(() => expect(survivors(marker)).toEqual([]), { timeout: 10_000, interval: 50 })
  })

  it('read_file of a FIFO no writer opens answers at once (not a regular file), and SIGTERM during the next call exits 143', async () => {
    const dir = tempDir()
    const ws = join(dir, 'ws')
    mkdirSync(ws)
    execFileSync('mkfifo', [join(ws, 'pipe')])
    const marker = `3000.${process.pid}3`
    const config = join(dir, 'cordis.yml')
    writeFileSync(config, `${CORE_ENTRIES}- id: sessions-jsonl\n  name: dsh-session/jsonl\n`)
    const script = writeScript(dir, [
      { toolCalls: [{ name: 'read_file', arguments: { path: 'pipe' } }] },
      { toolCalls: [{ name: 'bash', arguments: { command: `sleep ${marker}` } }] },
      { text: 'never reached' },
    ])
    const run = startDsh(['run', '--workspace', ws, '--script', script, '--config', config])
    await waitFor('sleep started', () => sleeping(marker), run.cli)
    process.kill(run.cli.pid!, 'SIGTERM')
    expect(await run.exited).toBe(143)
    expect(survivors(marker)).toEqual([])
    const results = sessionLog(ws).filter(e => e.type === 'tool/result').map(e => e.data)
    expect(results[0]).toMatchObject({ name: 'read_file', content: 'pipe: not a regular file (a FIFO); nothing was read', isError: true })
  })
})
