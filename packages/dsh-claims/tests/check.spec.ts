import { describe, expect, it } from 'vitest'
import { ActivityRecorder, checkClaims, markLine, passed, questionLine } from 'dsh-claims'
import { log, shellRun, verifyRun } from './helpers.ts'

function check(events: ReturnType<typeof log>, verified: string[], failed: string[] = []) {
  const recorder = new ActivityRecorder()
  for (const event of events) recorder.add(event)
  return checkClaims({ verified, failed }, recorder.activity, 's1')
}

const AUTH = 'login rejects expired tokens — pnpm vitest run tests/auth.test.ts'
const TYPES = 'types check — pnpm tsc --noEmit'

describe('holding verified lines against the activity record', () => {
  it('a claim whose command passed last is not marked', () => {
    const report = check(log(...shellRun('npx vitest run tests/auth.test.ts', 0)), [AUTH])
    expect(report.marks).toEqual([])
    expect(report).toMatchObject({ sessionId: 's1', unseen: [], failing: [], noEvidence: [], unconfirmed: [], questioned: false, asked: false })
  })

  it('a claim whose command never ran is unseen', () => {
    const report = check(log(...shellRun('npx tsc --noEmit', 0)), [AUTH, TYPES])
    expect(report.unseen).toEqual([AUTH])
    expect(report.marks[0]).toMatchObject({ kind: 'unseen', commands: ['vitest run'] })
  })

  it('the last run counts: a pass followed by a fail is failing, a fail followed by a pass is not', () => {
    const passThenFail = check(log(...shellRun('pnpm vitest run tests/auth.test.ts', 0), ...shellRun('pnpm vitest run', 1)), [AUTH])
    expect(passThenFail.failing).toEqual([AUTH])
    expect(passThenFail.marks[0]).toMatchObject({ kind: 'failing', commands: ['vitest run'], run: { exitCode: 1, outcome: 'fail' } })
    const failThenPass = check(log(...shellRun('pnpm vitest run', 1), ...shellRun('pnpm vitest run', 0)), [AUTH])
    expect(failThenPass.marks).toEqual([])
  })

  it('a verified line naming no command is noEvidence', () => {
    const report = check(log(...shellRun('pnpm test', 0)), ['Refactored the parser'])
    expect(report.noEvidence).toEqual(['Refactored the parser'])
  })

  it('a claim whose last run had its status hidden is unconfirmed', () => {
    const report = check(log(...shellRun('pnpm vitest run 2>&1 | tail -20', 0)), [AUTH])
    expect(report.unconfirmed).toEqual([AUTH])
    expect(report.marks[0]).toMatchObject({ kind: 'unconfirmed', run: { hiddenBy: 'pipe' } })
  })

  it('every command of a compound claim must have passed; failing wins over unseen', () => {
    const events = log(...shellRun('pnpm build', 0), ...shellRun('pnpm lint', 1))
    expect(check(events, ['ships — pnpm build && pnpm test']).unseen).toEqual(['ships — pnpm build && pnpm test'])
    expect(check(events, ['ships — pnpm test && pnpm lint']).failing).toEqual(['ships — pnpm test && pnpm lint'])
    expect(check(events, ['ships — pnpm build && pnpm build']).marks).toEqual([])
  })

  it('unwraps cd, env and runners on both sides', () => {
    const events = log(...shellRun('cd packages/web && CI=1 NODE_ENV=test pnpm exec vitest run --reporter dot', 0))
    expect(check(events, ['web — npx vitest run', 'web — yarn vitest run', 'web — `cd web && vitest run`']).marks).toEqual([])
  })

  it('a claim naming only a program matches any run of it', () => {
    const events = log(...shellRun('pytest -q tests/auth', 0), ...shellRun('pnpm test -- --run', 0))
    expect(check(events, ['auth — pytest', 'all green — pnpm test']).marks).toEqual([])
    expect(check(events, ['auth — pytest tests/auth']).unseen).toHaveLength(1)
  })

  it('counts verify/run events of dsh-dstvalid like shell runs', () => {
    const events = log(verifyRun(['node_modules/.bin/tsc', '--noEmit', '-p', 'tsconfig.json'], 'pass'))
    expect(check(events, [TYPES]).marks).toEqual([])
    const timedOut = log(verifyRun(['node_modules/.bin/tsc', '--noEmit'], 'pass'), verifyRun(['node_modules/.bin/tsc', '--noEmit'], 'timeout', null))
    expect(check(timedOut, [TYPES]).marks[0]).toMatchObject({ kind: 'failing', run: { exitCode: null, source: 'verify' } })
  })

  it('only shell tools count: another tool with a command argument is not activity', () => {
    const events = log(...shellRun('pnpm test', 0, 'notes'))
    expect(check(events, ['tests — pnpm test']).unseen).toHaveLength(1)
    const recorder = new ActivityRecorder({ isShellTool: name => name === 'notes' })
    for (const event of events) recorder.add(event)
    expect(checkClaims({ verified: ['tests — pnpm test'], failed: [] }, recorder.activity, 's1').marks).toEqual([])
  })

  it('reads the exit code from the [exit code N] trailer when the result has no exitCode', () => {
    const events = log(
      ['tool/call', { callId: 'x', name: 'bash', arguments: { command: 'pnpm test' } }],
      ['tool/result', { callId: 'x', name: 'bash', content: 'FAIL\n[exit code 3]', isError: true }],
    )
    expect(check(events, ['tests — pnpm test']).marks[0]).toMatchObject({ kind: 'failing', run: { exitCode: 3 } })
  })
})

describe('the whole session counts', () => {
  it('a claim carried into a second checkpoint is backed by a run before the first one', () => {
    const events = log(...shellRun('pnpm test', 0), ['claims/checkpoint', { summary: '', verified: ['tests — pnpm test'], failed: [], next: [] }], ...shellRun('pnpm build', 0))
    const report = check(events, ['tests — pnpm test', 'build — pnpm build'])
    expect(report.marks).toEqual([])
    expect(report).toMatchObject({ since: 'session-start', cutoff: -1 })
  })

  it('the last run counts, across checkpoints', () => {
    const events = log(...shellRun('pnpm test', 0), ['claims/checkpoint', { summary: '', verified: [], failed: [], next: [] }], ...shellRun('pnpm test', 1))
    expect(check(events, ['tests — pnpm test']).failing).toEqual(['tests — pnpm test'])
    const fixed = log(...shellRun('pnpm test', 1), ['claims/checkpoint', { summary: '', verified: [], failed: [], next: [] }], ...shellRun('pnpm test', 0))
    const report = check(fixed, ['tests — pnpm test'])
    expect(report.marks).toEqual([])
    expect(report.failedRuns).toEqual([{ key: 'test', exitCode: 1, stillFailing: false }])
  })
})

describe('the harness\'s own checks are not the agent\'s failures', () => {
  it('a failing baseline, a timed-out or errored check leave an empty failed unquestioned', () => {
    const events = log(verifyRun(['tsc', '--noEmit'], 'fail', 2), verifyRun(['vitest', 'run'], 'timeout', null), verifyRun(['go', 'vet'], 'error', null))
    const report = check(events, [])
    expect(report).toMatchObject({ asked: false, questioned: false, failedRuns: [] })
  })

  it('a verify/run still answers a claim that names its command', () => {
    const report = check(log(verifyRun(['tsc', '--noEmit'], 'timeout', null)), ['types — tsc --noEmit'])
    expect(report.failing).toEqual(['types — tsc --noEmit'])
    expect(report.failedRuns).toEqual([])
  })
})

describe('verdicts on the agent\'s own writes', () => {
  const verdict = (outcome: string, path = 'src/a.ts', tool = 'edit_file'): [string, unknown] =>
    ['verify/verdict', { sessionId: 's1', callId: 'w1', tool, paths: [path], check: 'typecheck', outcome, newProblems: [], durationMs: 5 }]

  it('a rolled-back or failing write is the agent\'s failure: an empty failed is questioned', () => {
    const report = check(log(verdict('rolled-back'), verdict('fail', 'src/b.ts', 'write_file')), [])
    expect(report).toMatchObject({ asked: true, questioned: true })
    expect(report.failedRuns).toEqual([
      { key: 'typecheck of edit_file on src/a.ts', exitCode: null, stillFailing: true, verdict: 'rolled-back' },
      { key: 'typecheck of write_file on src/b.ts', exitCode: null, stillFailing: true, verdict: 'fail' },
    ])
    expect(questionLine(report)).toBe('- failed is empty, but 2 commands failed in this session: '
      + '`typecheck of edit_file on src/a.ts` (rolled back), `typecheck of write_file on src/b.ts` (failed, kept). '
      + 'Did something not work? If so, checkpoint again with it in failed.')
  })

  it('a write done right later still counts, as later passed; a verdict error (no judgement) or a pass never does', () => {
    const redone = check(log(verdict('rolled-back'), verdict('pass')), [])
    expect(redone.failedRuns).toEqual([{ key: 'typecheck of edit_file on src/a.ts', exitCode: null, stillFailing: false, verdict: 'rolled-back' }])
    const none = check(log(verdict('error'), verdict('pass', 'src/b.ts'), verifyRun(['tsc', '--noEmit'], 'fail', 2)), [])
    expect(none).toMatchObject({ asked: false, questioned: false, failedRuns: [] })
  })

  it('a shell command whose writes were rolled back counts once, as the rollback: its exit status was dropped, not killed', () => {
    // What a host gives the log when the rollback's text replaced the command's result (no exit code, an error).
    const SED = "sed -i 's/a/b/' src/a.ts"
    const events = log(
      ['tool/call', { callId: 'w1', name: 'bash', arguments: { command: SED } }],
      verdict('rolled-back', 'src/a.ts', 'bash'),
      ['tool/result', { callId: 'w1', name: 'bash', content: 'rolled back: typecheck failed after bash on src/a.ts', isError: true }],
    )
    const report = check(events, ['renamed — sed -i'])
    expect(report.failedRuns).toEqual([{ key: 'typecheck of bash on src/a.ts', exitCode: null, stillFailing: true, verdict: 'rolled-back' }])
    expect(report.marks).toEqual([expect.objectContaining({ kind: 'unconfirmed', commands: ['sed -i'] })])
    expect(markLine(report.marks[0]!, report)).toBe('- "renamed — sed -i": `sed -i` ran, but its exit status was hidden by the rollback of its writes — run it on its own to confirm.')
    expect(questionLine(report)).toBe('- failed is empty, but a command failed in this session: '
      + '`typecheck of bash on src/a.ts` (rolled back). Did something not work? If so, checkpoint again with it in failed.')
  })

  it('a verdict before the cut-off does not count', () => {
    const recorder = new ActivityRecorder({ after: 0 })
    for (const event of log(verdict('rolled-back'))) recorder.add(event)
    expect(checkClaims({ verified: [], failed: [] }, recorder.activity, 's1').failedRuns).toEqual([])
  })
})

describe('an empty failed list', () => {
  it('is questioned when runs failed after the cut-off, listing them', () => {
    const report = check(log(...shellRun('npx tsc --noEmit', 2), ...shellRun('pnpm test', 1), ...shellRun('pnpm test', 0)), [])
    expect(report).toMatchObject({ asked: true, questioned: true })
    expect(report.failedRuns).toEqual([
      { key: 'tsc --noEmit', exitCode: 2, stillFailing: true },
      { key: 'test', exitCode: 1, stillFailing: false },
    ])
  })

  it('is not questioned when failed is not empty, or nothing failed', () => {
    expect(check(log(...shellRun('pnpm test', 1)), [], ['flaky auth test']).asked).toBe(false)
    expect(check(log(...shellRun('pnpm test', 0)), []).asked).toBe(false)
    expect(check(log(), ['tests — pnpm test']).asked).toBe(false)
  })

  it('is questioned at most once per session: a claims/questioned marker anywhere in the log suppresses it', () => {
    const events = log(['claims/questioned', { failedRuns: [] }], ['claims/checkpoint', { summary: '', verified: [], failed: [], next: [] }], ...shellRun('pnpm test', 1))
    expect(check(events, [])).toMatchObject({ asked: false, questioned: true })
  })
})

describe('passed(verify, events, sessionId, after)', () => {
  const events = log(...shellRun('pnpm build', 0), ...shellRun('pnpm test', 1), ...shellRun('pnpm test', 0), ...shellRun('pnpm lint', 1))

  it('is true when every command ran after `after` and its last run passed', () => {
    expect(passed('ok — pnpm build && pnpm test', events, 's1', -1)).toBe(true)
    expect(passed('ok — pnpm lint', events, 's1', -1)).toBe(false)
    expect(passed('ok — pnpm deploy', events, 's1', -1)).toBe(false)
    expect(passed('it is fine', events, 's1', -1)).toBe(false)
  })

  it('ignores runs at or before `after`', () => {
    expect(passed('ok — pnpm build', events, 's1', 1)).toBe(false)
    expect(passed('ok — pnpm test', events, 's1', 3)).toBe(true)
    expect(passed('ok — pnpm test', events, 's1', 5)).toBe(false)
  })

  it('keeps two sessions of a merged stream apart', () => {
    const a = log(...shellRun('pnpm test', 0)).map(e => ({ ...e, sessionId: 'a' }))
    const b = log(...shellRun('pnpm test', 1)).map(e => ({ ...e, sessionId: 'b' }))
    const merged = [a[0]!, b[0]!, a[1]!, b[1]!]
    expect(passed('ok — pnpm test', merged, 'a', -1)).toBe(true)
    expect(passed('ok — pnpm test', merged, 'b', -1)).toBe(false)
  })
})
