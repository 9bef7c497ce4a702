import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { runCommand } from 'dsh-common'
import { ProofChain, verifyChainFile } from 'dsh-proofchain'
import { tempDir } from 'dsh-testkit'
import { lines } from './helpers.ts'

const root = fileURLToPath(new URL('../../..', import.meta.url))
const worker = fileURLToPath(new URL('./fixtures/append-worker.ts', import.meta.url))

describe('several processes, one vault', () => {
  it('two processes appending 1,000 entries each make one valid chain of 2,000', async () => {
    const dir = tempDir()
    // The vault does not exist yet: both processes race to create it too.
    const file = join(dir, 'vault', 'proofchain.jsonl')
    const run = (tag: string) => runCommand(['node', '--import', 'tsx', worker, file, tag, '1000'], {
      cwd: root, timeoutMs: 120_000, env: { DSH_WORKERS: 'left,right', DSH_READY_DIR: dir },
    })
    const results = await Promise.all([run('left'), run('right')])
    for (const r of results) expect(r.exitCode, r.output).toBe(0)

    const report = verifyChainFile(file)
    expect(report).toMatchObject({ ok: true, entries: 2000, head: { seq: 1999 }, headRecord: { seq: 1999 } })
    const rows = lines(file).map(l => JSON.parse(l) as { seq: number; sessionId: string; detail: string })
    expect(rows.map(r => r.seq)).toEqual(Array.from({ length: 2000 }, (_, i) => i))
    for (const tag of ['left', 'right']) {
      // Every entry of each process is there once, in the order it appended them.
      expect(rows.filter(r => r.sessionId === tag).map(r => r.detail)).toEqual(Array.from({ length: 1000 }, (_, i) => `${tag} #${i}`))
    }
    // The appends really overlapped (and the lock took turns), otherwise this proves nothing about the lock.
    const switches = rows.filter((r, i) => i > 0 && r.sessionId !== rows[i - 1]!.sessionId).length
    expect(switches).toBeGreaterThan(10)
  })

  it('a lock left by a dead process does not block the chain', async () => {
    const dir = tempDir()
    const file = join(dir, 'proofchain.jsonl')
    const dead = await runCommand(['node', '-e', 'process.stdout.write(String(process.pid))'], { cwd: dir })
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: Number(dead.stdout), host: (await import('node:os')).hostname(), time: Date.now(), token: 'gone' }))
    // Staleness cannot break it within the timeout (the lock is fresh): only the dead holder's liveness can.
    const chain = ProofChain.open({ file, lock: { timeoutMs: 2_000, staleMs: 60_000 } })
    await chain.append({ sessionId: 's', kind: 'test', subject: 'test x', outcome: 'ok' })
    expect(verifyChainFile(file)).toMatchObject({ ok: true, entries: 1 })
  })
})
