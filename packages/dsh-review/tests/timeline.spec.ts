import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { readSession } from 'dsh-review'
import { tempDir } from 'dsh-testkit'

/** A session log in the vault, the events in the shapes the harness and dsh-dstvalid log them (turn verdicts, ADR 0037). */
function logOf(events: [type: string, data: object][]): string {
  const vault = join(tempDir('dsh-review-tl-'), '.dsh')
  mkdirSync(join(vault, 'sessions'), { recursive: true })
  writeFileSync(join(vault, 'sessions', 's.jsonl'), events.map(([type, data], seq) => JSON.stringify({ seq, time: 1000 + seq, type, data })).join('\n') + '\n')
  return vault
}

const keptForNow = (callId: string, path: string): [string, object][] => [
  ['tool/call', { callId, name: 'edit_file', arguments: { path } }],
  ['verify/verdict', { callId, tool: 'edit_file', paths: [path], check: 'typecheck', outcome: 'fail', newProblems: ['src/b.ts:1 TS2305 no export'], durationMs: 5 }],
  ['tool/result', { callId, content: `edited ${path}\nkept for now: 1 file no longer type-checks against this change:\nsrc/b.ts:1 TS2305 no export\nfix them before you finish, or this change is undone` }],
]

const verdicts = (vault: string) => readSession(vault, 's')!.items.flatMap(i => (i.kind === 'call' ? [[i.callId, i.verdict]] : []))

describe('the session page\'s verdicts across a turn', () => {
  it('a write kept for now is provisional while its turn is open', () => {
    const vault = logOf([['turn/start', { turn: 1 }], ['step/start', { turn: 1, step: 1 }], ...keptForNow('c1', 'src/a.ts')])
    expect(verdicts(vault)).toEqual([['c1', 'provisional']])
  })

  it('undone with the unfinished change at the stop: a group rollback', () => {
    const vault = logOf([
      ['turn/start', { turn: 1 }], ['step/start', { turn: 1, step: 1 }], ...keptForNow('c1', 'src/a.ts'),
      ['verify/verdict', { callId: 'c1', tool: 'edit_file', paths: ['src/a.ts'], check: 'typecheck', outcome: 'rolled-back', newProblems: ['src/b.ts:1 TS2305 no export'], durationMs: 5 }],
      ['context/message', { source: 'dsh-dstvalid', text: 'undone at the end of the turn: edit_file on src/a.ts; …' }],
      ['turn/end', { turn: 1, reason: 'completed' }],
    ])
    expect(verdicts(vault)).toEqual([['c1', 'group rollback']])
  })

  it('its turn ended with the change finished: kept', () => {
    const vault = logOf([['turn/start', { turn: 1 }], ['step/start', { turn: 1, step: 1 }], ...keptForNow('c1', 'src/a.ts'), ['turn/end', { turn: 1, reason: 'completed' }]])
    expect(verdicts(vault)).toEqual([['c1', 'kept']])
  })
})

/** A write returned kept for now while its tests ran in the background (`verify/deferred`), in the order the harness logs it. */
const deferred = (callId: string, path: string): [string, object][] => [
  ['tool/call', { callId, name: 'edit_file', arguments: { path } }],
  ['verify/deferred', { sessionId: 's', callId, tool: 'edit_file', paths: [path] }],
  ['tool/result', { callId, content: `edited ${path}\nkept for now: its tests are running; the verdict comes before your next call` }],
]
const line = (callId: string, path: string, check: string, outcome: string): [string, object] =>
  ['verify/verdict', { callId, tool: 'edit_file', paths: [path], check, outcome, newProblems: [], durationMs: 5 }]

describe('the session page\'s verdicts of background verdicts', () => {
  it('its verdict not in yet: pending, not provisional; in and rolled back: rolled back, not a group rollback', () => {
    const open: [string, object][] = [['turn/start', { turn: 1 }], ['step/start', { turn: 1, step: 1 }], ...deferred('c1', 'src/a.ts')]
    expect(verdicts(logOf(open))).toEqual([['c1', 'pending']])
    expect(verdicts(logOf([...open, ['step/start', { turn: 1, step: 2 }], line('c1', 'src/a.ts', 'typecheck', 'pass'), line('c1', 'src/a.ts', 'test', 'rolled-back')]))).toEqual([['c1', 'rolled back']])
  })

  it('in and passing: kept while its turn is open; undone later with the turn\'s change: a group rollback; a turn that ended without it: not verified', () => {
    const kept: [string, object][] = [['turn/start', { turn: 1 }], ...deferred('c1', 'src/a.ts'), line('c1', 'src/a.ts', 'typecheck', 'pass'), line('c1', 'src/a.ts', 'test', 'pass')]
    expect(verdicts(logOf(kept))).toEqual([['c1', 'kept']])
    expect(verdicts(logOf([...kept, ['step/start', { turn: 1, step: 2 }], line('c1', 'src/a.ts', 'test', 'rolled-back')]))).toEqual([['c1', 'group rollback']])
    expect(verdicts(logOf([['turn/start', { turn: 1 }], ...deferred('c1', 'src/a.ts'), ['turn/end', { turn: 1, reason: 'aborted' }]]))).toEqual([['c1', 'not verified']])
  })
})
