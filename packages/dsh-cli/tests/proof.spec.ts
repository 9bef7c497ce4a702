import { cpSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { Readable } from 'node:stream'
import { ProofChain, proofChainPath } from 'dsh-proofchain'
import { main } from 'dsh-cli'
import { tempDir } from 'dsh-testkit'
import { dsh } from './helpers.ts'

/** Run `dsh …` in this process with captured output (the real-process path is covered once below). */
async function run(argv: string[]) {
  let stdout = ''
  let stderr = ''
  const exitCode = await main(argv, {
    stdout: t => { stdout += t }, stderr: t => { stderr += t }, stdin: Readable.from([]), stderrIsTTY: false, env: process.env,
  })
  return { exitCode, stdout, stderr }
}

async function vaultWithProofs(): Promise<string> {
  const vault = join(tempDir(), '.dsh')
  const chain = ProofChain.open({ file: proofChainPath(vault) })
  await chain.appendMany([
    { sessionId: 's1', kind: 'typecheck', subject: 'typecheck src/a.ts', outcome: 'fail', detail: 'rolled back after edit_file: 1 new problem: src/a.ts:1 TS2322 nope' },
    { sessionId: 's1', kind: 'test', subject: 'test tests/a.test.ts', outcome: 'ok', detail: 'passed after edit_file (5 ms)' },
    { sessionId: 's2', kind: 'typecheck', subject: 'typecheck src/a.ts', outcome: 'ok', detail: 'passed after edit_file (4 ms)' },
  ])
  return vault
}

describe('dsh proof', () => {
  it('show prints the summary of a session, or of every session', async () => {
    const vault = await vaultWithProofs()
    const one = await run(['proof', 'show', '--vault', vault, '--session', 's1'])
    expect(one.exitCode).toBe(0)
    expect(one.stdout).toBe([
      'Proof chain — latest harness-verified result per check in this session (failures first):',
      '✗ typecheck src/a.ts — rolled back after edit_file: 1 new problem: src/a.ts:1 TS2322 nope',
      '✓ test tests/a.test.ts',
      'Each ✗ failed on its latest run: fix it and let the harness re-check it before you call it done.',
      '',
    ].join('\n'))
    const all = await run(['proof', 'show', '--vault', vault, '--json'])
    expect(all.exitCode).toBe(0)
    const json = JSON.parse(all.stdout)
    expect(json).toMatchObject({ sessionId: null, failing: 0, verified: 2 })
    expect(json.latest.map((e: { subject: string; sessionId: string }) => `${e.sessionId} ${e.subject}`)).toEqual(['s2 typecheck src/a.ts', 's1 test tests/a.test.ts'])
  })

  it('verify is green on an intact chain and red, naming the first bad entry, on a tampered copy (real dsh process)', async () => {
    const vault = await vaultWithProofs()
    const ok = await run(['proof', 'verify', '--vault', vault])
    expect(ok.exitCode).toBe(0)
    expect(ok.stdout).toBe(`ok ${proofChainPath(vault)}: 3 entries, head seq 2 ${ok.stdout.match(/[0-9a-f]{12}…/)![0]}\n  sealed by dsh at seq 2 (key store ${process.env.DSH_STATE_DIR})\n`)

    const copy = join(tempDir(), '.dsh')
    cpSync(vault, copy, { recursive: true })
    const file = proofChainPath(copy)
    writeFileSync(file, readFileSync(file, 'utf8').replace('TS2322 nope', 'TS2322 fine'))
    const bad = await dsh(['proof', 'verify', '--vault', copy])
    expect(bad.exitCode).toBe(1)
    expect(bad.stdout).toMatch(new RegExp(`^FAILED ${file}\\n  first bad entry: line 1 \\(seq 0\\): hash mismatch — stored [0-9a-f]{12}…, recomputed [0-9a-f]{12}…\\n  0 entries verified before it\\n$`))
    const json = JSON.parse((await run(['proof', 'verify', '--vault', copy, '--json'])).stdout)
    expect(json).toMatchObject({ ok: false, problem: { line: 1, seq: 0, kind: 'hash mismatch' } })
  })

  it('says plainly when there is no chain, and rejects bad usage', async () => {
    const empty = join(tempDir(), '.dsh')
    const none = await run(['proof', 'verify', '--vault', empty])
    expect(none.exitCode).toBe(1)
    expect(none.stderr).toBe(`dsh proof: no proof chain at ${proofChainPath(empty)}\n`)
    const show = await run(['proof', 'show', '--vault', empty])
    expect(show.exitCode).toBe(1)
    expect(show.stderr).toBe(`dsh proof: no proof chain at ${proofChainPath(empty)} (nothing recorded yet, or another --vault)\n`)
    const usage = await run(['proof', 'check'])
    expect(usage.exitCode).toBe(2)
    expect(usage.stderr).toBe('dsh proof: unknown subcommand "check"; use show or verify (see dsh proof --help)\n')
    expect((await run(['proof', 'show', '--budget', 'lots'])).stderr).toBe('dsh proof show: --budget must be a whole number of tokens, not "lots"\n')
  })
})
