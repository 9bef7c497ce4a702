import { describe, expect, it } from 'vitest'
import { estimateTokens, proofFromVerifyResult, SUMMARY_FOOTER, SUMMARY_HEADER, SUMMARY_HEADER_ALL } from 'dsh-proofchain'
import type { VerifyResult } from 'dsh-dstvalid'
import { freshChain } from './helpers.ts'

const verdict = (over: Partial<VerifyResult>): VerifyResult => ({
  sessionId: 's1', callId: 'c1', tool: 'edit_file', paths: ['src/a.ts'], check: 'typecheck',
  outcome: 'pass', newProblems: [], durationMs: 40, ...over,
})

describe('summary', () => {
  it('reads as the model sees it: failures with their reason, then passes, newest first', async () => {
    const chain = freshChain()
    await chain.appendMany([
      ...proofFromVerifyResult(verdict({ paths: ['src/b.ts'] })),
      ...proofFromVerifyResult(verdict({ outcome: 'rolled-back', newProblems: ["src/a.ts:3 TS2322 Type 'string' is not assignable to type 'number'."] })),
      ...proofFromVerifyResult(verdict({ check: 'test', paths: ['tests/b.test.ts'] })),
    ])
    expect(chain.summary('s1', { budgetTokens: 400 }).text).toBe([
      'Proof chain — latest harness-verified result per check in this session (failures first):',
      "✗ typecheck src/a.ts — rolled back after edit_file: 1 new problem: src/a.ts:3 TS2322 Type 'string' is not assignable to type 'number'.",
      '✓ test tests/b.test.ts',
      '✓ typecheck src/b.ts',
      'Each ✗ failed on its latest run: fix it and let the harness re-check it before you call it done.',
    ].join('\n'))
  })

  it('lets a later pass supersede an earlier failure of the same subject, and the other way round', async () => {
    const chain = freshChain()
    await chain.appendMany(proofFromVerifyResult(verdict({ outcome: 'fail', newProblems: ['src/a.ts:1 TS1005 ; expected'] })))
    await chain.appendMany(proofFromVerifyResult(verdict({ outcome: 'pass' })))
    let summary = chain.summary('s1', { budgetTokens: 400 })
    expect(summary.text).toBe(`${SUMMARY_HEADER}\n✓ typecheck src/a.ts`)
    expect([summary.failing, summary.verified]).toEqual([0, 1])

    await chain.appendMany(proofFromVerifyResult(verdict({ outcome: 'rolled-back', newProblems: ['src/a.ts:9 TS2304 Cannot find name x.'] })))
    summary = chain.summary('s1', { budgetTokens: 400 })
    expect(summary.text).toBe(`${SUMMARY_HEADER}\n✗ typecheck src/a.ts — rolled back after edit_file: 1 new problem: src/a.ts:9 TS2304 Cannot find name x.\n${SUMMARY_FOOTER}`)
  })

  it('keeps within its token budget with many subjects, failures first, and counts what it left out', async () => {
    const chain = freshChain()
    const inputs = Array.from({ length: 600 }, (_, i) => ({
      sessionId: 's1', kind: 'test', subject: `test tests/case-${i}.test.ts`,
      outcome: (i % 10 === 0 ? 'fail' : 'ok') as 'fail' | 'ok', detail: `failed after write_file: 1 new problem: case ${i} expected 1 to be 2`,
    }))
    await chain.appendMany(inputs)
    for (const budget of [64, 100, 400, 1000]) {
      const summary = chain.summary('s1', { budgetTokens: budget })
      expect(summary.tokens).toBeLessThanOrEqual(budget)
      expect(estimateTokens(summary.text)).toBe(summary.tokens)
      const body = summary.text.split('\n')
      expect(body[0]).toBe(SUMMARY_HEADER)
      expect(body.at(-1)).toBe(SUMMARY_FOOTER)
      const shownFail = summary.shown.filter(e => e.outcome === 'fail').length
      const shownOk = summary.shown.length - shownFail
      expect(shownFail + summary.hiddenFailing).toBe(60)
      expect(shownOk + summary.hiddenVerified).toBe(540)
      if (shownOk) expect(summary.hiddenFailing).toBe(0)
      const more = [summary.hiddenFailing ? `+${summary.hiddenFailing} more failing` : '', summary.hiddenVerified ? `+${summary.hiddenVerified} more verified` : ''].filter(Boolean).join(', ')
      expect(body.at(-2)).toBe(more)
      // Newest failure first.
      if (shownFail) expect(summary.shown[0]!.subject).toBe('test tests/case-590.test.ts')
    }
    const unbounded = chain.summary('s1', { budgetTokens: 0 })
    expect(unbounded.shown).toHaveLength(600)
  })

  it('caps a long line', async () => {
    const chain = freshChain()
    await chain.appendMany(proofFromVerifyResult(verdict({ outcome: 'fail', newProblems: ['x'.repeat(500)] })))
    const line = chain.summary('s1', { budgetTokens: 400 }).text.split('\n')[1]!
    expect(line).toHaveLength(200)
    expect(line.endsWith('…')).toBe(true)
  })

  it('keeps sessions apart, and the all-sessions view takes the newest outcome across them', async () => {
    const chain = freshChain()
    await chain.appendMany(proofFromVerifyResult(verdict({ sessionId: 'one', outcome: 'fail' })))
    await chain.appendMany(proofFromVerifyResult(verdict({ sessionId: 'two', outcome: 'pass' })))
    expect(chain.summary('one', { budgetTokens: 400 }).failing).toBe(1)
    expect(chain.summary('two', { budgetTokens: 400 }).text).toBe(`${SUMMARY_HEADER}\n✓ typecheck src/a.ts`)
    expect(chain.summary(undefined, { budgetTokens: 400 }).text).toBe(`${SUMMARY_HEADER_ALL}\n✓ typecheck src/a.ts`)
    expect(chain.summary('nobody', { budgetTokens: 400 }).text).toBe('')
  })

  it('lists each subject once however long the chain (the index, not a scan)', async () => {
    const chain = freshChain()
    await chain.appendMany(Array.from({ length: 5000 }, (_, i) => ({ sessionId: 's1', kind: 'lint', subject: `lint src/f${i % 4}.ts`, outcome: 'ok' as const })))
    const summary = chain.summary('s1', { budgetTokens: 400 })
    expect(summary.shown.map(e => e.subject)).toEqual(['lint src/f3.ts', 'lint src/f2.ts', 'lint src/f1.ts', 'lint src/f0.ts'])
    expect(summary.shown[0]!.seq).toBe(4999)
  })
})
