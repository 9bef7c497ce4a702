import { describe, expect, it } from 'vitest'
import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { listJournals, Snapshots } from 'dsh-snapshot'
import { content } from './fixtures/crash-plan.ts'
import { deadOwner, workspace } from './helpers.ts'

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
const DSH = join(REPO, 'packages/dsh-cli/bin/dsh.mjs')

function dsh(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise(done => {
    const child = spawn(process.execPath, [DSH, ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => { stdout += d })
    child.stderr.on('data', (d: Buffer) => { stderr += d })
    child.on('exit', code => done({ code, stdout, stderr }))
  })
}

const BYTES = 200 * 1024

describe('dsh recover', () => {
  it('resolves the journal of a dsh run killed mid-write: every file wholly one version', async () => {
    const root = workspace({ 'a.txt': content('a', 0, BYTES) })
    const script = join(workspace(), 'script.jsonl')
    writeFileSync(script, Array.from({ length: 45 }, (_, x) => JSON.stringify({
      toolCalls: [
        { name: 'write_file', arguments: { path: 'a.txt', content: content('a', x + 1, BYTES) } },
        { name: 'write_file', arguments: { path: 'd/b.txt', content: content('b', x + 1, BYTES) } },
      ],
    })).join('\n') + '\n')
    const child = spawn(process.execPath, [DSH, 'run', '--workspace', root, '--script', script], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] })
    let seen = 0
    let stderr = ''
    child.stderr.on('data', (d: Buffer) => { stderr += d })
    const exited = new Promise<string>(done => child.on('exit', (code, signal) => done(signal ?? `exit ${code}`)))
    await new Promise<void>((enough, fail) => {
      child.stdout.on('data', (d: Buffer) => {
        seen += d.toString().split('wrote a.txt').length - 1
        if (seen >= 3) enough()
      })
      child.on('exit', () => fail(new Error(`dsh run ended before the kill: ${stderr}`)))
    })
    await new Promise(r => setTimeout(r, Math.floor(Math.random() * 60)))
    child.kill('SIGKILL')
    expect(await exited).toBe('SIGKILL')
    expect(listJournals(join(root, '.dsh'))).toHaveLength(1)

    const first = await dsh(['recover', '--workspace', root])
    expect(first.stderr).toBe('')
    expect(first.code).toBe(0)
    expect(first.stdout).toMatch(/^[^\n]+\.journal \(session [^,]+, pid \d+\):\n/)
    expect(first.stdout.endsWith('  journal removed\n')).toBe(true)
    expect(listJournals(join(root, '.dsh'))).toEqual([])

    const versions = Array.from({ length: 46 }, (_, v) => v)
    const a = readFileSync(join(root, 'a.txt'), 'utf8')
    expect(versions.some(v => a === content('a', v, BYTES)), 'a.txt is wholly one version').toBe(true)
    if (existsSync(join(root, 'd/b.txt'))) {
      const b = readFileSync(join(root, 'd/b.txt'), 'utf8')
      expect(versions.some(v => b === content('b', v, BYTES)), 'd/b.txt is wholly one version').toBe(true)
    }
    for (const dir of [root, join(root, 'd')]) {
      if (existsSync(dir)) expect(readdirSync(dir).filter(n => n.endsWith('.tmp'))).toEqual([])
    }

    const again = await dsh(['recover', '--workspace', root])
    expect(again).toEqual({ code: 0, stdout: `nothing to recover in ${join(root, '.dsh', 'snapshots')}\n`, stderr: '' })
  }, 60_000)

  it('a moved workspace: exit 1, the journal kept, and what to do', async () => {
    const root = workspace({ 'a.txt': 'old' })
    new Snapshots({ root, vault: join(root, '.dsh'), sessionId: 'm', fsync: 'off' }, deadOwner()).capture({ key: 'call:c1', callId: 'c1' }, ['a.txt'])
    writeFileSync(join(root, 'a.txt'), 'new')
    const moved = `${root}-moved`
    renameSync(root, moved)
    const [file] = listJournals(join(moved, '.dsh'))
    const r = await dsh(['recover', '--workspace', moved])
    expect(r.stdout.split('\n').slice(1)).toEqual([
      `  workspace ${root} no longer exists (moved or deleted?); journal kept: move the workspace back to ${root} and run dsh recover --workspace ${root} again, or delete ${file} if none of its writes matter any more`,
      '',
    ])
    expect(r.code).toBe(1)
    expect(listJournals(join(moved, '.dsh'))).toEqual([file])
  }, 60_000)

  it('bad usage exits 2 with one line', async () => {
    expect(await dsh(['recover'])).toEqual({ code: 2, stdout: '', stderr: 'dsh recover: --workspace DIR is required (see dsh recover --help)\n' })
    const missing = join(workspace(), 'nope')
    expect(await dsh(['recover', '--workspace', missing])).toEqual({ code: 2, stdout: '', stderr: `dsh recover: workspace ${missing} does not exist\n` })
  }, 30_000)
})
