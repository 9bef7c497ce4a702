import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ProofChain, verifyChainFile, type ProofChain as Chain } from 'dsh-proofchain'
import { tempDir } from 'dsh-testkit'
import { lines, sample, writeLines } from './helpers.ts'

/** Two chains fed the same entries (with fixed times): one prunes at `maxBytes`, one never does. */
async function twins(n: number, maxBytes: number): Promise<{ pruned: Chain; full: Chain }> {
  const dir = tempDir()
  const pruned = ProofChain.open({ file: join(dir, 'pruned', 'proofchain.jsonl'), maxBytes })
  const full = ProofChain.open({ file: join(dir, 'full', 'proofchain.jsonl') })
  // The first subject fails once, early, and is never checked again: only the anchor can keep it.
  const early = { sessionId: 's1', kind: 'lint', subject: 'lint src/legacy.ts', outcome: 'fail' as const, detail: 'failed after edit_file: 1 new problem: no-unused-vars', time: 1 }
  await pruned.append(early)
  await full.append(early)
  for (let i = 0; i < n; i += 10) {
    const batch = Array.from({ length: 10 }, (_, k) => ({ ...sample(i + k, 9), time: 2 + i + k }))
    await pruned.appendMany(batch)
    await full.appendMany(batch)
  }
  return { pruned, full }
}

describe('pruning', () => {
  it('keeps verify green from the anchor, kept lines byte for byte, and the summary whole', async () => {
    const { pruned, full } = await twins(300, 16_384)
    const size = readFileSync(pruned.file).length
    expect(size).toBeLessThanOrEqual(16_384)

    const report = verifyChainFile(pruned.file)
    expect(report.ok).toBe(true)
    expect(report.head).toEqual(full.head)
    expect(report.anchor!.pruned + report.entries).toBe(301)
    expect(report.anchor!.pruned).toBeGreaterThan(200)

    const keptLines = lines(pruned.file).slice(1)
    expect(lines(full.file).slice(-keptLines.length)).toEqual(keptLines)
    expect(JSON.parse(lines(pruned.file)[0]!)).toMatchObject({ kind: 'anchor', seq: report.anchor!.seq, prevAnchor: expect.stringMatching(/^[0-9a-f]{64}$/) })

    const budget = { budgetTokens: 0 }
    expect(pruned.summary('s1', budget).text).toBe(full.summary('s1', budget).text)
    expect(pruned.summary('s1', budget).text).toContain('✗ lint src/legacy.ts — failed after edit_file: 1 new problem: no-unused-vars')
    // After a restart the anchor's carried entries still feed the summary.
    expect(ProofChain.open({ file: pruned.file }).summary('s1', budget).text).toBe(full.summary('s1', budget).text)
  })

  it('still detects tampering after the anchor', async () => {
    const { pruned } = await twins(200, 16_384)
    const rows = lines(pruned.file)
    const check = (edited: string[]) => {
      writeLines(pruned.file, edited)
      return verifyChainFile(pruned.file).problem
    }
    expect(check(rows.map((r, i) => (i === 3 ? r.replace('"outcome":"ok"', '"outcome":"fail"').replace('"outcome":"fail"', '"outcome":"ok"') : r)))).toMatchObject({ line: 4, kind: 'hash mismatch' })
    expect(check(rows.filter((_, i) => i !== 1))).toMatchObject({ line: 2, kind: 'broken link' })
    expect(check(rows.filter((_, i) => i !== 0))).toMatchObject({ line: 1, kind: 'broken link' })
    expect(check([rows[1]!, rows[0]!, ...rows.slice(2)])).toMatchObject({ line: 1, kind: 'broken link' })
    expect(check([rows[0]!.replace('"pruned":', '"pruned":1'), ...rows.slice(1)])).toMatchObject({ line: 1, kind: 'bad anchor' })
    expect(check([rows[0]!.replace('no-unused-vars', 'all fine'), ...rows.slice(1)])).toMatchObject({ line: 1, kind: 'bad anchor' })
    expect(check(rows)).toBeUndefined()
  })

  it('a restarted, pruning chain keeps appending to a verifiable chain', async () => {
    const { pruned } = await twins(120, 8_192)
    const again = ProofChain.open({ file: pruned.file, maxBytes: 8_192 })
    for (let i = 0; i < 100; i += 10) await again.appendMany(Array.from({ length: 10 }, (_, k) => sample(500 + i + k)))
    expect(verifyChainFile(pruned.file)).toMatchObject({ ok: true, head: { seq: 220 } })
  })
})
