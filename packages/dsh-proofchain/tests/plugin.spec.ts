import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runCommand } from 'dsh-common'
import { describe, expect, it } from 'vitest'
import type { Session } from 'dsh-session'
import { harness, listenerCounts, tempDir } from 'dsh-testkit'
import * as Proofchain from 'dsh-proofchain'
import { proofSummarySeen, verifyChainFile, type ProofEntry } from 'dsh-proofchain'
import type { VerifyResult } from 'dsh-dstvalid'
import { bootHarness, proofMessages } from './helpers.ts'

const write = (path: string, content: string) => ({ toolCalls: [{ name: 'write_file', arguments: { path, content } }] })
const say = (text: string) => ({ text })
const TS2322 = "TS2322 Type 'string' is not assignable to type 'number'."

const SUMMARY_1 = [
  'Proof chain — latest harness-verified result per check in this session (failures first):',
  '✓ typecheck src/a.ts',
].join('\n')
const SUMMARY_2 = [
  'Proof chain — latest harness-verified result per check in this session (failures first):',
  `✗ typecheck src/b.ts — rolled back after write_file: 1 new problem: src/b.ts:1 ${TS2322}`,
  '✓ typecheck src/a.ts',
  'Each ✗ failed on its latest run: fix it and let the harness re-check it before you call it done.',
].join('\n')

function proofContext(session: Session) {
  return session.events.filter(e => e.type === 'context/message' && e.data.source === 'proofchain')
}

describe('dsh-proofchain in a harness', () => {
  it('records each verify/result and shows the model the summary at turn start, only when it changed', async () => {
    const h = await bootHarness([
      write('src/a.ts', 'export const a = 1\n'), say('a written'),
      write('src/b.ts', 'export const b: number = "BROKEN"\n'), say('b rolled back'),
      say('nothing new'),
      say('still nothing new'),
    ])
    const { session, agent } = h
    await agent.send('write a')
    expect(proofMessages(h.requests[0]!)).toEqual([])

    await agent.send('write b')
    expect(proofMessages(h.requests[2]!)).toEqual([SUMMARY_1])
    await agent.send('anything?')
    expect(proofMessages(h.requests[4]!)).toEqual([SUMMARY_1, SUMMARY_2])
    await agent.send('and now?')
    expect(proofMessages(h.requests[5]!)).toEqual([SUMMARY_1, SUMMARY_2])

    // The log records what the model saw, right after the turn started.
    const shown = proofContext(session)
    expect(shown.map(e => e.data)).toEqual([{ source: 'proofchain', text: SUMMARY_1 }, { source: 'proofchain', text: SUMMARY_2 }])
    for (const e of shown) expect(session.events[e.seq - 1]!.type).toBe('turn/start')
    expect(proofSummarySeen(session.events)).toBe(SUMMARY_2)

    const file = join(h.workspace, '.dsh', 'proofchain.jsonl')
    expect(verifyChainFile(file)).toMatchObject({ ok: true, entries: 2 })
    await h.dispose()
  })

  it('a resumed session does not repeat the summary it already saw, and shows a changed one', async () => {
    const first = await bootHarness([write('src/a.ts', 'export const a = 1\n'), say('ok'), say('seen')])
    const { session: s1, agent: a1 } = first
    await a1.send('one')
    await a1.send('two')
    expect(proofContext(s1)).toHaveLength(1)
    const seed = [...s1.events]
    await first.dispose()

    const second = await bootHarness([say('x'), say('x'), say('x'), write('src/c.ts', 'export const c = 3\n'), say('c written'), say('y')], {}, { workspace: first.workspace, session: { id: 's1', seed } })
    const { session: s2, agent: a2 } = second
    await a2.send('three')
    expect(proofContext(s2)).toHaveLength(1)
    await a2.send('four')
    await a2.send('five')
    const shown = proofContext(s2)
    expect(shown).toHaveLength(2)
    expect((shown[1]!.data as { text: string }).text).toBe(`${SUMMARY_1.split('\n')[0]}\n✓ typecheck src/c.ts\n✓ typecheck src/a.ts`)
    expect(verifyChainFile(join(first.workspace, '.dsh', 'proofchain.jsonl'))).toMatchObject({ ok: true, entries: 2 })
    await second.dispose()
  })

  it("records claims checkpoints, restores and learnings, and emits proofchain/appended", async () => {
    const h = await bootHarness([])
    const { session } = h
    const appended: ProofEntry[] = []
    h.ctx.on('proofchain/appended', entry => { appended.push(entry) })
    ;(session.append as (type: string, data: unknown) => unknown)('claims/checkpoint', {
      summary: 's', verified: ['auth works — pnpm vitest run auth'], failed: [], next: [],
      report: { unseen: ['auth works — pnpm vitest run auth'], failing: [], noEvidence: [], questioned: false },
    })
    h.ctx.emit('snapshot/restored', { sessionId: 's1', callId: 'c1', reason: 'typecheck failed', restored: ['src/a.ts'], deleted: [], failed: [] })
    h.ctx.emit('verify/learning', { sessionId: 's1', paths: ['src/a.ts'], tool: 'edit_file', checks: ['typecheck'] })
    h.ctx.emit('verify/result', { sessionId: 'nobody', callId: 'c', tool: 't', paths: [], check: 'test', outcome: 'pass', newProblems: [], durationMs: 1 } satisfies VerifyResult)
    await session.flush()
    expect(appended.map(e => [e.seq, e.kind, e.subject, e.outcome])).toEqual([
      [0, 'claim', 'claim auth works — pnpm vitest run auth', 'fail'],
      [1, 'restore', 'restore src/a.ts', 'ok'],
      [2, 'write', 'write src/a.ts', 'ok'],
    ])
    expect(verifyChainFile(join(h.workspace, '.dsh', 'proofchain.jsonl'))).toMatchObject({ ok: true, entries: 3 })
    await h.dispose()
  })

  it('a vault it cannot write never breaks the plugin that emitted the proof', async () => {
    const notADir = join(tempDir(), 'vault-file')
    writeFileSync(notADir, 'x')
    const h = await bootHarness([], {}, { session: { id: 's1', vault: notADir } })
    const { session } = h
    expect(() => h.ctx.emit('verify/result', { sessionId: 's1', callId: 'c', tool: 'edit_file', paths: ['a.ts'], check: 'typecheck', outcome: 'pass', newProblems: [], durationMs: 1 })).not.toThrow()
    await expect(session.flush()).resolves.toBeUndefined()
    await h.dispose()
  })

  it('inject "step" shows a changed summary at the next step; "never" never does', async () => {
    const step = await bootHarness([write('src/a.ts', 'export const a = 1\n'), say('done')], { inject: 'step' })
    await step.agent.send('go')
    expect(proofMessages(step.requests[1]!)).toEqual([SUMMARY_1])
    await step.dispose()

    const never = await bootHarness([write('src/a.ts', 'export const a = 1\n'), say('done'), say('again')], { inject: 'never' })
    await never.agent.send('go')
    await never.agent.send('again')
    expect(proofContext(never.session)).toEqual([])
    expect(existsSync(join(never.workspace, '.dsh', 'proofchain.jsonl'))).toBe(true)
    await never.dispose()
  })
})

describe('lifecycle', () => {
  it('disposing the fiber removes every listener (twice is harmless) and writes out queued proofs', async () => {
    const h = await harness({ workspaceTools: false })
    const events = ['verify/result', 'verify/learning', 'snapshot/restored', 'session/event', 'session/flush', 'agent/turn-start', 'agent/step-start']
    const before = listenerCounts(h.ctx, events)
    const fiber = await h.load([Proofchain, Proofchain.Config({})])
    expect(listenerCounts(h.ctx, events)).not.toEqual(before)
    h.ctx.emit('verify/result', { sessionId: h.session.id, callId: 'c', tool: 'edit_file', paths: ['x.ts'], check: 'typecheck', outcome: 'pass', newProblems: [], durationMs: 3 })
    await fiber.dispose()
    await fiber.dispose()
    expect(listenerCounts(h.ctx, events)).toEqual(before)
    expect(readFileSync(join(h.workspace, '.dsh', 'proofchain.jsonl'), 'utf8')).toContain('"subject":"typecheck x.ts"')
    await h.dispose()
  })

  it('is loaded by name through the Cordis loader (in a real tsx process), with its Config defaults', async () => {
    const workspace = tempDir()
    const run = await runCommand(['node', '--import', 'tsx', fileURLToPath(new URL('./fixtures/load-by-name.ts', import.meta.url)), workspace], {
      cwd: fileURLToPath(new URL('../../..', import.meta.url)), timeoutMs: 60_000,
    })
    expect(run.exitCode, run.output).toBe(0)
    expect(JSON.parse(run.stdout)).toEqual({ ok: true, entries: 1 })
    expect(Proofchain.Config({ budgetTokens: 128 })).toEqual({ budgetTokens: 128, inject: 'turn', detailMaxBytes: 1024, maxBytes: 8388608, fsync: false, lockStaleMs: 10000 })
  })
})
