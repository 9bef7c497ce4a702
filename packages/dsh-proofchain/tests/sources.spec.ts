import { describe, expect, it } from 'vitest'
import { proofFromCheckpoint, proofFromLearning, proofFromRestore, proofFromVerifyResult } from 'dsh-proofchain'
import type { SessionEventMap } from 'dsh-session'
import type {} from 'dsh-claims'

type ClaimsCheckpoint = SessionEventMap['claims/checkpoint']

/** A checkpoint payload with parts missing: the mapper must read it defensively. */
const partial = (data: Partial<Omit<ClaimsCheckpoint, 'report'>> & { report?: Partial<ClaimsCheckpoint['report']> }) => data as ClaimsCheckpoint

describe('proof sources', () => {
  it('verify/result: subject is check + paths; pass is ok, fail and rolled-back are failures', () => {
    const base = { sessionId: 's', callId: 'c', tool: 'multi_edit', paths: ['src/a.ts', 'src/b.ts'], check: 'typecheck', newProblems: [], durationMs: 812.4 }
    expect(proofFromVerifyResult({ ...base, outcome: 'pass' })).toEqual([
      { sessionId: 's', kind: 'typecheck', subject: 'typecheck src/a.ts src/b.ts', outcome: 'ok', detail: 'passed after multi_edit (812 ms)' },
    ])
    expect(proofFromVerifyResult({ ...base, outcome: 'rolled-back', newProblems: ['src/a.ts:1 TS2322 a', 'src/b.ts:2 TS2304 b'] })[0]).toMatchObject({
      outcome: 'fail', detail: 'rolled back after multi_edit: 2 new problems: src/a.ts:1 TS2322 a; src/b.ts:2 TS2304 b',
    })
    expect(proofFromVerifyResult({ ...base, check: 'test', outcome: 'fail' })[0]).toMatchObject({ kind: 'test', outcome: 'fail', detail: 'failed after multi_edit' })
    // A check that could not judge the write (timeout, crash) proves nothing either way.
    expect(proofFromVerifyResult({ ...base, check: 'test', outcome: 'error', newProblems: ['test timed out after 120 s'] })).toEqual([])
    expect(proofFromVerifyResult({ ...base, check: 'test', outcome: 'pass', newProblems: ['tests/new.test.ts new test fails'] })[0]).toMatchObject({
      outcome: 'ok', detail: 'passed after multi_edit (812 ms); 1 warning: tests/new.test.ts new test fails',
    })
  })

  it('verify/result: reads defensively', () => {
    expect(proofFromVerifyResult({} as never)).toEqual([])
    expect(proofFromVerifyResult({ sessionId: 's', check: 'Go Build!', outcome: 'pass', paths: 'x' } as never)[0]).toMatchObject({ kind: 'go-build', subject: 'Go Build!' })
  })

  it('verify/learning: a kept, verified write', () => {
    expect(proofFromLearning({ sessionId: 's', paths: ['src/a.ts'], tool: 'edit_file', checks: ['typecheck', 'test'] })).toEqual([
      { sessionId: 's', kind: 'write', subject: 'write src/a.ts', outcome: 'ok', detail: 'kept after edit_file; verified by typecheck, test' },
    ])
    expect(proofFromLearning({ sessionId: 's', paths: [], tool: 'x', checks: [] })).toEqual([])
  })

  it('snapshot/restored: ok when every file came back, a failure naming those that did not', () => {
    const info = { sessionId: 's', callId: 'c', reason: 'typecheck failed after edit_file', restored: ['src/b.ts'], deleted: ['src/new.ts'], failed: [] }
    expect(proofFromRestore(info)).toEqual([
      { sessionId: 's', kind: 'restore', subject: 'restore src/b.ts src/new.ts', outcome: 'ok', detail: 'restored 2 files (typecheck failed after edit_file)' },
    ])
    expect(proofFromRestore({ ...info, failed: [{ path: 'src/c.ts', error: 'EACCES' }] })[0]).toMatchObject({
      subject: 'restore src/b.ts src/c.ts src/new.ts', outcome: 'fail',
      detail: 'NOT restored: src/c.ts (EACCES) — check these files by hand; reason: typecheck failed after edit_file',
    })
  })

  it('claims/checkpoint: verified lines are ok unless the report marks them; failed lines are failures', () => {
    const proofs = proofFromCheckpoint('s', partial({
      summary: 'auth done',
      verified: ['login works — pnpm vitest run auth', 'tokens expire — pnpm vitest run tokens', 'looks right', 'build is green — pnpm build', 'lint clean — pnpm lint | tail'],
      failed: ['refresh flow'],
      next: [],
      report: { unseen: ['tokens expire — pnpm vitest run tokens'], failing: ['pnpm build'], noEvidence: ['looks right'], unconfirmed: ['lint clean — pnpm lint | tail'], questioned: false },
    }))
    expect(proofs.map(p => [p.subject, p.outcome, p.detail])).toEqual([
      ['claim login works — pnpm vitest run auth', 'ok', 'claimed verified; its command was seen passing'],
      ['claim tokens expire — pnpm vitest run tokens', 'fail', 'claimed verified, but its command was not seen run in this session'],
      ['claim looks right', 'fail', 'claimed verified, but names no command to check it by'],
      ['claim build is green — pnpm build', 'fail', 'claimed verified, but its command failed on its last run'],
      ['claim lint clean — pnpm lint | tail', 'fail', "claimed verified, but its command's exit status was hidden (a pipe, ;, ||)"],
      ['claim refresh flow', 'fail', 'reported failed by the agent'],
    ])
  })

  it('claims/checkpoint: without a report, verified lines are not recorded as verified', () => {
    expect(proofFromCheckpoint('s', partial({ verified: ['a — pnpm test'], failed: [] }))).toEqual([])
    expect(proofFromCheckpoint('s', null as never)).toEqual([])
  })
})
