import { describe, expect, it } from 'vitest'
import { AgentStatusChecker, checkTrace, RULES, TraceChecker, type InvariantRule } from 'dsh-invariants'
import { trace } from './helpers.ts'

/** `[rule, seq, message]` of every violation in a trace. */
function found(...lines: string[]): [InvariantRule, number | undefined, string][] {
  return checkTrace(trace(...lines)).map(v => [v.rule, v.seq, v.message])
}

const TURN = ['turn/start 0', 'step/start 0.0', 'chunk', 'usage', 'message', 'call c1', 'call c2', 'result c1', 'result c2', 'step/end 0.0',
  'step/start 0.1', 'chunk', 'message', 'step/end 0.1', 'turn/end 0']

describe('a legal trace', () => {
  it('passes: messages, turns, steps, chunks, calls with results', () => {
    expect(found('user/message', ...TURN, 'user/message', 'turn/start 1', 'step/start 1.0', 'message', 'step/end 1.0', 'turn/end 1')).toEqual([])
  })

  it('passes with unknown event types anywhere, error and usage included', () => {
    expect(found('verify/run', 'turn/start 0', 'context/message', 'step/start 0.0', 'claims/checkpoint', 'chunk', 'call c1',
      'verify/run', 'result c1', 'error', 'step/end 0.0', 'turn/end 0 error', 'snapshot/whatever')).toEqual([])
  })

  it('passes when it ends mid-turn or mid-step (a log of a running session)', () => {
    expect(found('turn/start 0', 'step/start 0.0', 'chunk', 'call c1')).toEqual([])
  })

  it('covers every rule id with a description', () => {
    expect(Object.keys(RULES).sort()).toEqual(['agent-status', 'outside-step', 'result-without-call', 'seq', 'shape', 'step-end',
      'step-outside-turn', 'step-overlap', 'turn-end', 'turn-end-open-step', 'turn-overlap'])
  })
})

describe('rule seq', () => {
  it('allows gaps (a seed may skip numbers)', () => {
    expect(found('@0 user/message', '@5 user/message', '@9 turn/start 0')).toEqual([])
  })

  it('flags a repeated and a decreasing seq', () => {
    expect(found('@0 user/message', '@1 user/message', '@1 user/message', '@0 user/message')).toEqual([
      ['seq', 1, 'seq 1 does not increase (previous seq 1)'],
      ['seq', 0, 'seq 0 does not increase (previous seq 1)'],
    ])
  })

  it('flags a seq that is not a non-negative integer', () => {
    const events = [{ seq: 1.5, time: 0, type: 'x', data: {} }, { seq: '2', time: 0, type: 'x', data: {} }, { seq: -1, time: 0, type: 'x', data: {} }, { time: 0, type: 'x' }]
    expect(checkTrace(events).map(v => [v.rule, v.message])).toEqual([
      ['seq', 'seq must be a non-negative integer, got 1.5'],
      ['seq', 'seq must be a non-negative integer, got "2"'],
      ['seq', 'seq must be a non-negative integer, got -1'],
      ['seq', 'seq must be a non-negative integer, got nothing'],
    ])
  })
})

describe('rule shape', () => {
  it('flags a record that is not an event', () => {
    expect(checkTrace([42, { seq: 1, data: {} }]).map(v => [v.rule, v.message])).toEqual([
      ['seq', 'seq must be a non-negative integer, got nothing'],
      ['shape', 'event is not an object: 42'],
      ['shape', 'event has no string type'],
    ])
  })

  it('flags turn, step and tool events missing the fields the contract reads', () => {
    const events = [
      { seq: 0, time: 0, type: 'turn/start', data: {} },
      { seq: 1, time: 0, type: 'step/start', data: { turn: 0, step: '0' } },
      { seq: 2, time: 0, type: 'tool/call', data: { name: 'bash' } },
      { seq: 3, time: 0, type: 'tool/result', data: null },
    ]
    expect(checkTrace(events).map(v => [v.rule, v.seq, v.message])).toEqual([
      ['shape', 0, 'turn/start needs an integer data.turn, got nothing'],
      ['shape', 1, 'step/start needs an integer data.step, got "0"'],
      ['shape', 2, 'tool/call needs a string data.callId, got nothing'],
      ['shape', 3, 'tool/result needs a string data.callId, got nothing'],
    ])
  })

  it('matches leniently after a malformed opener (one bad field, one violation)', () => {
    const events = trace('turn/start 0', 'step/start 0.0', 'step/end 0.0', 'turn/end 0')
    ;(events[0]!.data as { turn?: number }).turn = undefined
    expect(checkTrace(events).map(v => v.rule)).toEqual(['shape'])
  })
})

describe('the nesting rules: one violation each', () => {
  it.each<[rule: InvariantRule, what: string, trace: string[], seq: number, message: string]>([
    ['turn-overlap', 'a turn/start while a turn is open', ['turn/start 0', 'step/start 0.0', 'step/end 0.0', 'turn/start 1', 'turn/end 1'], 3, 'turn 1 starts while turn 0 is open'],
    ['turn-end', 'a turn/end without an open turn', ['turn/start 0', 'turn/end 0', 'turn/end 0'], 2, 'turn/end of turn 0 without an open turn'],
    ['turn-end', 'a turn/end of another turn', ['turn/start 3', 'turn/end 4'], 1, 'turn/end of turn 4 while turn 3 is open'],
    ['turn-end-open-step', 'a turn/end while a step is open', ['turn/start 0', 'step/start 0.0', 'chunk', 'turn/end 0', 'turn/start 1', 'step/start 1.0'], 3, 'turn 0 ends while step 0.0 is open'],
    ['step-outside-turn', 'a step/start with no open turn', ['step/start 0.0', 'step/end 0.0'], 0, 'step 0.0 starts outside any turn'],
    ['step-outside-turn', 'a step/start naming another turn', ['turn/start 1', 'step/start 0.0', 'step/end 0.0', 'turn/end 1'], 1, 'step 0.0 starts while turn 1 is open'],
    ['step-overlap', 'a step/start while a step is open', ['turn/start 0', 'step/start 0.0', 'step/start 0.1', 'step/end 0.1', 'turn/end 0'], 2, 'step 0.1 starts while step 0.0 is open'],
    ['step-end', 'a step/end without an open step', ['turn/start 0', 'step/end 0.0', 'turn/end 0'], 1, 'step/end of step 0.0 without an open step'],
    // The open step is still closed: turn/end 0 that follows is clean.
    ['step-end', 'a step/end of another step', ['turn/start 0', 'step/start 0.1', 'step/end 0.2', 'turn/end 0'], 2, 'step/end of step 0.2 while step 0.1 is open'],
  ])('%s flags %s', (rule, _what, lines, seq, message) => {
    expect(found(...lines)).toEqual([[rule, seq, message]])
  })

  it('turn-end-open-step passes when the step is closed first (the loop closes it on error too)', () => {
    expect(found('turn/start 0', 'step/start 0.0', 'error', 'step/end 0.0', 'turn/end 0 error')).toEqual([])
  })
})

describe('rule outside-step', () => {
  it('flags chunks, messages, calls and results outside the open step', () => {
    expect(found('chunk', 'turn/start 0', 'message', 'call c1', 'step/start 0.0', 'step/end 0.0', 'result c1', 'turn/end 0')).toEqual([
      ['outside-step', 0, 'assistant/chunk outside an open step'],
      ['outside-step', 2, 'assistant/message outside an open step'],
      ['outside-step', 3, 'tool/call outside an open step'],
      ['outside-step', 6, 'tool/result outside an open step'],
    ])
  })
})

describe('rule result-without-call', () => {
  it('passes a call without a result, interleaved calls/results, and one callId reused in another step', () => {
    expect(found('turn/start 0', 'step/start 0.0', 'call a', 'result a', 'call b', 'call c', 'result c', 'step/end 0.0',
      'step/start 0.1', 'call a', 'result a', 'step/end 0.1', 'turn/end 0')).toEqual([])
  })

  it('flags a result with no call, before its call, from an earlier step, and a second result', () => {
    expect(found('turn/start 0', 'step/start 0.0', 'result x', 'result a', 'call a', 'result a', 'result a', 'call b', 'step/end 0.0',
      'step/start 0.1', 'result b', 'step/end 0.1', 'turn/end 0')).toEqual([
      ['result-without-call', 2, 'tool/result for callId "x" has no earlier tool/call in step 0.0'],
      ['result-without-call', 3, 'tool/result for callId "a" has no earlier tool/call in step 0.0'],
      ['result-without-call', 6, 'tool/result for callId "a" repeats a result already logged in step 0.0'],
      ['result-without-call', 10, 'tool/result for callId "b" has no earlier tool/call in step 0.1'],
    ])
  })

  it('pairs duplicate callIds one result per call', () => {
    expect(found('turn/start 0', 'step/start 0.0', 'call a', 'call a', 'result a', 'result a', 'result a')).toEqual([
      ['result-without-call', 6, 'tool/result for callId "a" repeats a result already logged in step 0.0'],
    ])
  })
})

describe('violations', () => {
  it('list the last five events up to the offending one', () => {
    const [v] = checkTrace(trace(...TURN.slice(0, 9), 'result zz'))
    expect(v!.recent).toEqual([
      { seq: 5, type: 'tool/call' }, { seq: 6, type: 'tool/call' }, { seq: 7, type: 'tool/result' }, { seq: 8, type: 'tool/result' }, { seq: 9, type: 'tool/result' },
    ])
    expect(v!.index).toBe(9)
  })

  it('report every broken rule of one event', () => {
    expect(found('turn/start 0', 'step/start 0.0', '@1 turn/start 1')).toEqual([
      ['seq', 1, 'seq 1 does not increase (previous seq 1)'],
      ['turn-overlap', 1, 'turn 1 starts while turn 0 is open'],
    ])
  })

  it('a clean event allocates no violation list', () => {
    const checker = new TraceChecker()
    const [a, b] = trace('user/message', 'user/message')
    expect(checker.check(a)).toBe(checker.check(b))
    expect(checker.count).toBe(2)
  })
})

describe('rule agent-status', () => {
  it('passes idle ↔ running then disposed, from running or idle', () => {
    const agents = new AgentStatusChecker()
    for (const status of ['running', 'idle', 'running', 'disposed']) expect(agents.check('a', status)).toBeUndefined()
    expect(agents.check('b', 'disposed')).toBeUndefined()
    expect(agents.status('a')).toBe('disposed')
    expect(agents.status('never-seen')).toBe('idle')
  })

  it('flags a repeated status, an agent that starts with idle, leaving disposed, and an unknown status', () => {
    const agents = new AgentStatusChecker()
    expect(agents.check('a', 'running')).toBeUndefined()
    expect(agents.check('a', 'running')?.message).toBe('running → running repeats the current status')
    expect(agents.check('b', 'idle')?.message).toBe('idle → idle repeats the current status')
    expect(agents.check('c', 'disposed')).toBeUndefined()
    const left = agents.check('c', 'running')!
    expect([left.rule, left.type, left.index, left.message]).toEqual(['agent-status', 'agent/status', 1, 'disposed → running leaves disposed'])
    expect(left.recent).toEqual([{ type: 'disposed' }, { type: 'running' }])
    expect(agents.check('d', 'paused')?.message).toBe('idle → paused: unknown status (expected idle, running or disposed)')
  })

  it('tracks agents independently', () => {
    const agents = new AgentStatusChecker()
    expect(agents.check('a', 'running')).toBeUndefined()
    expect(agents.check('b', 'running')).toBeUndefined()
    expect(agents.check('a', 'idle')).toBeUndefined()
    expect(agents.check('b', 'idle')).toBeUndefined()
  })

  it('continues from an adopted status', () => {
    const agents = new AgentStatusChecker()
    agents.adopt('a', 'running')
    expect(agents.check('a', 'idle')).toBeUndefined()
    agents.adopt('b', 'disposed')
    expect(agents.check('b', 'idle')?.message).toBe('disposed → idle leaves disposed')
  })
})
