import { chmodSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { tempDir, writeScript } from 'dsh-testkit'
import { dsh } from './helpers.ts'

/** A hand-written session log: `[type, data]` pairs get consecutive seqs. */
function writeLog(vault: string, id: string, entries: [string, unknown][]): void {
  mkdirSync(join(vault, 'sessions'), { recursive: true })
  const lines = entries.map(([type, data], seq) => JSON.stringify({ seq, time: 1_700_000_000_000 + seq, type, data }) + '\n')
  writeFileSync(join(vault, 'sessions', `${id}.jsonl`), lines.join(''))
}

function run(callId: string, command: string, exitCode: number): [string, unknown][] {
  return [
    ['tool/call', { callId, name: 'bash', arguments: { command } }],
    ['tool/result', { callId, name: 'bash', content: `[exit code ${exitCode}]`, isError: exitCode !== 0, exitCode }],
  ]
}

describe('dsh claims check', () => {
  it('marks claims a stored session log does not back, exit 1; --json prints the report', async () => {
    const vault = join(tempDir(), '.dsh')
    writeLog(vault, 's1', [...run('a', 'cd web && pnpm vitest run', 0), ...run('b', 'npx tsc --noEmit', 2)])
    writeLog(vault, 's2', [...run('c', 'npx tsc --noEmit', 0)])
    const args = ['claims', 'check', '--vault', vault, '--session', 's1',
      '--verified', 'auth — pnpm vitest run tests/auth.test.ts', '--verified', 'types — pnpm tsc --noEmit', '--verified', 'lint — pnpm lint']
    const text = await dsh(args)
    expect(text.stdout).toBe([
      'session s1: 2 of 3 claims marked',
      '- "types — pnpm tsc --noEmit": last run of `tsc --noEmit` did not pass (exit 2) — fix it or move the claim to failed.',
      '- "lint — pnpm lint": `lint` not seen run in this session — run it or drop the claim.',
      '- failed is empty, but a command failed in this session: `tsc --noEmit` (exit 2). Did something not work? If so, checkpoint again with it in failed.',
      '',
    ].join('\n'))
    expect(text.exitCode).toBe(1)

    const json = await dsh([...args, '--json', '--failed', 'tsc'])
    expect(JSON.parse(json.stdout)).toMatchObject({ sessionId: 's1', failing: ['types — pnpm tsc --noEmit'], unseen: ['lint — pnpm lint'], asked: false })

    // Another session of the same vault is checked on its own runs.
    const other = await dsh(['claims', 'check', '--vault', vault, '--session', 's2', '--verified', 'types — pnpm tsc --noEmit'])
    expect(other.stdout).toBe('session s2: 1 claim, none marked\n')
    expect(other.exitCode).toBe(0)
  })

  it('without --session: says which log and how old it is, and refuses a stale one unless asked', async () => {
    const vault = join(tempDir(), '.dsh')
    writeLog(vault, 'old', [...run('a', 'pnpm test', 0)])
    const file = join(vault, 'sessions', 'old.jsonl')
    const threeHoursAgo = new Date(Date.now() - 3 * 3600_000)
    utimesSync(file, threeHoursAgo, threeHoursAgo)
    const claim = ['--verified', 'tests — pnpm test']
    const stale = await dsh(['claims', 'check', '--vault', vault, ...claim])
    expect(stale).toMatchObject({ exitCode: 2, stdout: '', stderr: `dsh claims check: the newest session log, ${file}, was last written 3 h ago (over --max-age 60 min); name it with --session ID, or pass --any-age\n` })
    const anyAge = await dsh(['claims', 'check', '--vault', vault, '--any-age', ...claim])
    expect(anyAge).toMatchObject({ exitCode: 0, stdout: 'session old: 1 claim, none marked\n', stderr: `dsh claims check: newest session log ${file}, last written 3 h ago\n` })
    expect((await dsh(['claims', 'check', '--vault', vault, '--max-age', '240', ...claim])).exitCode).toBe(0)
    expect((await dsh(['claims', 'check', '--vault', vault, '--session', 'old', ...claim])).stderr).toBe('')
  })

  it('bad usage exits 2 with one line', async () => {
    const vault = join(tempDir(), '.dsh')
    const noClaims = await dsh(['claims', 'check', '--vault', vault])
    expect(noClaims).toMatchObject({ exitCode: 2, stderr: 'dsh claims check: give at least one --verified "CLAIM — COMMAND" (see dsh claims --help)\n' })
    const noLog = await dsh(['claims', 'check', '--vault', vault, '--verified', 'x — make'])
    expect(noLog).toMatchObject({ exitCode: 2, stderr: `dsh claims check: no session log in ${join(vault, 'sessions')}\n` })
    expect(await dsh(['claims', 'list'])).toMatchObject({ exitCode: 2, stderr: 'dsh claims: unknown subcommand "list"; use check or show (see dsh claims --help)\n' })
  })
})

describe('a checkpoint with an unsupported claim, handed to the next run', () => {
  it('dsh run records and marks it; the next dsh run starts with it; dsh claims show prints it', async () => {
    const ws = tempDir()
    mkdirSync(join(ws, 'node_modules', '.bin'), { recursive: true })
    writeFileSync(join(ws, 'node_modules', '.bin', 'vitest'), '#!/bin/sh\necho "ok"\n')
    chmodSync(join(ws, 'node_modules', '.bin', 'vitest'), 0o755)
    const first = writeScript(tempDir(), [
      { toolCalls: [{ name: 'bash', arguments: { command: 'node_modules/.bin/vitest run' } }] },
      { toolCalls: [{ name: 'checkpoint', arguments: { summary: 'tests added', verified: ['counts items — pnpm vitest run', 'types check — pnpm tsc --noEmit'], failed: [], next: ['wire it in'] } }] },
      { text: 'Done.' },
    ])
    const one = await dsh(['run', '--workspace', ws, '--script', first])
    expect(one.exitCode).toBe(0)
    expect(one.stdout).toContain('Recorded as given; 1 claim marked for the next agent:\n'
      + '      - "types check — pnpm tsc --noEmit": `tsc --noEmit` not seen run in this session — run it or drop the claim.')

    const two = await dsh(['run', '--workspace', ws, '--script', writeScript(tempDir(), [{ text: 'Hi.' }])])
    expect(two.exitCode).toBe(0)
    expect(two.stdout).toMatch(/\[claims\] Checkpoint left by session \S+ at \S+:\n {2}Summary: tests added\n/)
    expect(two.stdout).toContain('- types check — pnpm tsc --noEmit [unsupported: `tsc --noEmit` not seen run]')

    const show = await dsh(['claims', 'show', '--vault', join(ws, '.dsh')])
    expect(show.exitCode).toBe(0)
    expect(show.stdout).toContain('- counts items — pnpm vitest run\n- types check — pnpm tsc --noEmit [unsupported: `tsc --noEmit` not seen run]\n')
    const none = await dsh(['claims', 'show', '--vault', join(tempDir(), '.dsh')])
    expect(none.exitCode).toBe(1)
  })
})
