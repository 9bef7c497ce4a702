import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { AgentStatusChecker, checkTrace, InvariantError, Tripwire, type InvariantRule } from 'dsh-invariants'
import { createHarness } from './helpers.ts'

// Property tests of the event contract. The default suite runs a few hundred
// cases per property; the dedicated run is
//   DSH_LONG=1 npx vitest run packages/dsh-invariants -t properties
// (10,000 cases per property).
const LONG = !!process.env.DSH_LONG
const RUNS = LONG ? 10_000 : 200

interface Ev { seq: number; time: number; type: string; data: Record<string, unknown> }

interface StepSpec {
  chunks: number
  /** Calls of the step; `result` says whether it got one (a throwing tools/execute leaves it without). */
  calls: { result: boolean }[]
  /** Results right after each call (true) or, as the loop does, all after the calls in shuffled order (false). */
  interleave: boolean
  shuffle: number[]
}

interface TurnSpec {
  users: number
  steps: StepSpec[]
  error: boolean
}

interface TraceSpec {
  turns: TurnSpec[]
  /** Unknown/free events inserted at these (relative) positions. */
  noise: { at: number; type: string }[]
}

const stepArb = (minCalls: number): fc.Arbitrary<StepSpec> => fc.record({
  chunks: fc.nat(3),
  calls: fc.array(fc.record({ result: fc.boolean() }), { minLength: minCalls, maxLength: 3 }),
  interleave: fc.boolean(),
  shuffle: fc.array(fc.nat(), { minLength: 3, maxLength: 3 }),
})

const turnArb = (minSteps: number): fc.Arbitrary<TurnSpec> => fc.record({
  users: fc.nat(2),
  steps: fc.array(stepArb(0), { minLength: minSteps, maxLength: 3 }),
  error: fc.boolean(),
})

const noiseArb = fc.array(fc.record({
  at: fc.double({ min: 0, max: 1, noNaN: true }),
  type: fc.constantFrom('verify/run', 'context/message', 'claims/checkpoint', 'usage', 'error', 'user/message', 'snapshot/commit'),
}), { maxLength: 4 })

/** Any trace the loop could write (possibly cut short anywhere). */
const legalArb = fc.record({
  spec: fc.record({ turns: fc.array(turnArb(0), { maxLength: 4 }), noise: noiseArb }),
  cut: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
  seedAt: fc.double({ min: 0, max: 1, noNaN: true }),
})

/** A complete trace of ≥ 2 turns whose first step has a call with a result: every mutation applies to it. */
const richArb: fc.Arbitrary<TraceSpec> = fc.record({
  turns: fc.tuple(
    fc.record({ users: fc.nat(2), steps: fc.tuple(stepArb(1), fc.array(stepArb(0), { maxLength: 2 })).map(([a, b]) => [a, ...b]), error: fc.boolean() }),
    fc.array(turnArb(1), { minLength: 1, maxLength: 2 }),
  ).map(([first, rest]) => {
    first.steps[0]!.calls[0]!.result = true
    return [first, ...rest]
  }),
  noise: noiseArb,
})

const ev = (type: string, data: Record<string, unknown> = {}): Ev => ({ seq: 0, time: 0, type, data })

/** Render a spec as events, the way the agent loop orders them. */
function build(spec: TraceSpec): Ev[] {
  const out: Ev[] = []
  spec.turns.forEach((turn, t) => {
    for (let u = 0; u < turn.users; u++) out.push(ev('user/message', { text: `u${u}` }))
    out.push(ev('turn/start', { turn: t }))
    turn.steps.forEach((step, s) => {
      out.push(ev('step/start', { turn: t, step: s }))
      for (let c = 0; c < step.chunks; c++) out.push(ev('assistant/chunk', { text: `c${c}` }))
      // A small id pool, so the same callId recurs in other steps (legal).
      const ids = step.calls.map((_, i) => `call_${i}`)
      out.push(ev('assistant/message', { text: '', toolCalls: ids.map(callId => ({ callId, name: 'bash', arguments: {} })) }))
      const result = (callId: string) => ev('tool/result', { callId, name: 'bash', content: '', isError: false })
      if (step.interleave) {
        step.calls.forEach((call, i) => {
          out.push(ev('tool/call', { callId: ids[i], name: 'bash', arguments: {} }))
          if (call.result) out.push(result(ids[i]!))
        })
      } else {
        for (const callId of ids) out.push(ev('tool/call', { callId, name: 'bash', arguments: {} }))
        const answered = ids.filter((_, i) => step.calls[i]!.result)
        const order = answered.map((id, i) => [step.shuffle[i] ?? 0, id] as const).sort((a, b) => a[0] - b[0])
        for (const [, id] of order) out.push(result(id))
      }
      if (turn.error && s === turn.steps.length - 1) out.push(ev('error', { message: 'boom' }))
      out.push(ev('step/end', { turn: t, step: s }))
    })
    out.push(ev('turn/end', { turn: t, reason: turn.error ? 'error' : 'completed' }))
  })
  for (const { at, type } of spec.noise) out.splice(Math.floor(at * (out.length + 1)), 0, ev(type))
  return out
}

function renumber(events: Ev[]): Ev[] {
  events.forEach((e, i) => { e.seq = i; e.time = 1_700_000_000_000 + i })
  return events
}

const IN_STEP = new Set(['assistant/chunk', 'assistant/message', 'tool/call', 'tool/result'])

/** A mutation of a rich trace: the event that must be flagged first, and the rule. */
interface Mutated { events: Ev[]; culprit: Ev; rule: InvariantRule; kind: string }

type Mutation = (events: Ev[], pick: (n: number) => number) => Mutated

const indexes = (events: Ev[], test: (e: Ev) => boolean) => events.flatMap((e, i) => test(e) ? [i] : [])
const firstAfter = (events: Ev[], from: number, test: (e: Ev) => boolean) => events.find((e, i) => i > from && test(e))!
const moveTo = (events: Ev[], item: Ev, before: Ev | undefined) => {
  events.splice(events.indexOf(item), 1)
  events.splice(before ? events.indexOf(before) : events.length, 0, item)
}
/** The step/start … step/end span that holds index i. */
const stepSpan = (events: Ev[], i: number) => {
  let start = i
  while (events[start]!.type !== 'step/start') start--
  let end = i
  while (events[end]!.type !== 'step/end') end++
  return [start, end] as const
}
const callOf = (events: Ev[], result: number) => {
  const [start] = stepSpan(events, result)
  return events.findIndex((e, i) => i > start && i < result && e.type === 'tool/call' && e.data.callId === events[result]!.data.callId)
}

const MUTATIONS: Record<string, Mutation> = {
  'duplicate seq': (events, pick) => {
    renumber(events)
    const i = 1 + pick(events.length - 1)
    events[i]!.seq = events[i - 1]!.seq
    return { events, culprit: events[i]!, rule: 'seq', kind: 'duplicate seq' }
  },
  'result before its call': (events, pick) => {
    const results = indexes(events, e => e.type === 'tool/result')
    const r = results[pick(results.length)]!
    const result = events[r]!
    moveTo(events, result, events[callOf(events, r)])
    return { events: renumber(events), culprit: result, rule: 'result-without-call', kind: 'result before its call' }
  },
  'result in a later step': (events, pick) => {
    const results = indexes(events, e => e.type === 'tool/result').filter(r => indexes(events, e => e.type === 'step/start').some(s => s > r))
    const r = results[pick(results.length)]!
    const result = events[r]!
    const later = indexes(events, e => e.type === 'step/start').filter(s => s > r)
    const target = events[later[pick(later.length)]! + 1]
    moveTo(events, result, target)
    return { events: renumber(events), culprit: result, rule: 'result-without-call', kind: 'result in a later step' }
  },
  'overlapping turns': (events, pick) => {
    const starts = indexes(events, e => e.type === 'turn/start')
    const t = starts[pick(starts.length)]!
    const end = events.findIndex((e, i) => i > t && e.type === 'turn/end')
    const stray = ev('turn/start', { turn: 1000 })
    events.splice(t + 1 + pick(end - t), 0, stray)
    return { events: renumber(events), culprit: stray, rule: 'turn-overlap', kind: 'overlapping turns' }
  },
  'drop': (events, pick) => {
    const options: (() => Mutated)[] = []
    const drop = (i: number, culprit: Ev, rule: InvariantRule, what: string) => () => {
      events.splice(i, 1)
      return { events: renumber(events), culprit, rule, kind: `drop ${what}` }
    }
    for (const r of indexes(events, e => e.type === 'tool/result')) {
      options.push(drop(callOf(events, r), events[r]!, 'result-without-call', 'tool/call'))
    }
    for (const s of indexes(events, e => e.type === 'step/start')) {
      const next = firstAfter(events, s, e => IN_STEP.has(e.type) || e.type === 'step/end')
      options.push(drop(s, next, next.type === 'step/end' ? 'step-end' : 'outside-step', 'step/start'))
    }
    for (const s of indexes(events, e => e.type === 'step/end')) {
      const next = firstAfter(events, s, e => e.type === 'step/start' || e.type === 'turn/end')
      options.push(drop(s, next, next.type === 'step/start' ? 'step-overlap' : 'turn-end-open-step', 'step/end'))
    }
    for (const t of indexes(events, e => e.type === 'turn/start')) {
      const next = firstAfter(events, t, e => e.type === 'step/start' || e.type === 'turn/end')
      options.push(drop(t, next, next.type === 'step/start' ? 'step-outside-turn' : 'turn-end', 'turn/start'))
    }
    for (const t of indexes(events, e => e.type === 'turn/end')) {
      const next = events.find((e, i) => i > t && e.type === 'turn/start')
      if (next) options.push(drop(t, next, 'turn-overlap', 'turn/end'))
    }
    return options[pick(options.length)]!()
  },
  'reorder': (events, pick) => {
    const options: (() => Mutated)[] = []
    for (const s of indexes(events, e => e.type === 'step/start')) {
      const first = firstAfter(events, s, e => IN_STEP.has(e.type) || e.type === 'step/end')
      if (first.type === 'step/end') continue
      options.push(() => {
        const start = events[s]!
        moveTo(events, start, events[events.indexOf(first) + 1])
        return { events: renumber(events), culprit: first, rule: 'outside-step', kind: 'reorder step/start after its first event' }
      })
    }
    for (const t of indexes(events, e => e.type === 'turn/end')) {
      options.push(() => {
        const end = events[t]!
        const lastStepEnd = events.slice(0, t).findLast(e => e.type === 'step/end')!
        moveTo(events, end, lastStepEnd)
        return { events: renumber(events), culprit: end, rule: 'turn-end-open-step', kind: 'reorder turn/end before step/end' }
      })
    }
    return options[pick(options.length)]!()
  },
}

/** Feed a trace to the tripwire: the first `seedAt` events as a seed, the rest appended. */
function runTripwire(events: Ev[], seedAt: number): InvariantError | undefined {
  const tripwire = new Tripwire({ freeze: true })
  const session = { id: 'p', events: events.slice(0, seedAt) }
  try {
    tripwire.created(session)
    for (const event of events.slice(seedAt)) {
      session.events.push(event)
      tripwire.appended(session, event)
    }
  } catch (error) {
    if (error instanceof InvariantError) return error
    throw error
  }
  return undefined
}

describe('properties of the event contract', () => {
  it(`legal traces (turns, steps, chunks, calls with and without results, free events, cut anywhere, seeded prefixes) give no violation [${RUNS} cases]`, () => {
    fc.assert(fc.property(legalArb, ({ spec, cut, seedAt }) => {
      let events = renumber(build(spec))
      if (cut !== undefined) events = events.slice(0, Math.floor(cut * (events.length + 1)))
      expect(checkTrace(events)).toEqual([])
      expect(runTripwire(events, Math.floor(seedAt * (events.length + 1)))).toBeUndefined()
    }), { numRuns: RUNS })
  })

  for (const name of Object.keys(MUTATIONS)) {
    it(`mutated traces are flagged at the mutated event: ${name} [${RUNS} cases]`, () => {
      fc.assert(fc.property(richArb, fc.infiniteStream(fc.nat()), fc.double({ min: 0, max: 1, noNaN: true }), (spec, stream, seedFrac) => {
        const rolls = stream[Symbol.iterator]()
        const pick = (n: number) => (rolls.next().value as number) % n
        const { events, culprit, rule, kind } = MUTATIONS[name]!(build(spec), pick)
        const at = events.indexOf(culprit)
        const [first] = checkTrace(events)
        expect({ kind, index: first?.index, rule: first?.rule }).toEqual({ kind, index: at, rule })
        const seedAt = Math.floor(seedFrac * (events.length + 1))
        const error = runTripwire(events, seedAt)
        expect(error?.rule).toBe(rule)
        expect(error?.violations[0]!.index).toBe(at)
      }), { numRuns: RUNS })
    })
  }

  const statusesArb = fc.array(fc.record({ agent: fc.constantFrom('a', 'b', 'c'), turns: fc.nat(3), dispose: fc.boolean() }), { minLength: 1, maxLength: 3 })
  /** Interleaved legal status sequences of several agents. */
  function legalStatuses(agents: { agent: string; turns: number; dispose: boolean }[], order: number[]): [string, string][] {
    const queues = new Map<string, string[]>()
    for (const { agent, turns, dispose } of agents) {
      if (queues.has(agent)) continue
      const q: string[] = []
      for (let i = 0; i < turns; i++) q.push('running', 'idle')
      if (dispose) q.push('disposed')
      queues.set(agent, q)
    }
    const out: [string, string][] = []
    const names = [...queues.keys()]
    let k = 0
    while ([...queues.values()].some(q => q.length)) {
      const live = names.filter(n => queues.get(n)!.length)
      const n = live[(order[k++ % order.length] ?? 0) % live.length]!
      out.push([n, queues.get(n)!.shift()!])
    }
    return out
  }

  it(`agents: interleaved legal status sequences pass; leaving disposed or repeating a status is flagged there [${RUNS} cases]`, () => {
    fc.assert(fc.property(statusesArb, fc.array(fc.nat(), { minLength: 1, maxLength: 8 }), fc.constantFrom('running', 'idle', 'disposed'), (agents, order, extra) => {
      const legal = legalStatuses(agents, order)
      const checker = new AgentStatusChecker()
      for (const [agent, status] of legal) expect(checker.check(agent, status)).toBeUndefined()
      // Mutate: one more status for an agent, which either leaves `disposed` or repeats its current status.
      const agent = legal.at(-1)?.[0] ?? agents[0]!.agent
      const current = checker.status(agent)
      const status = current === 'disposed' ? extra : current
      expect(checker.check(agent, status)?.rule).toBe('agent-status')
    }), { numRuns: RUNS })
  })

  it(`through the real plugin: seeded prefixes plus appended events of legal traces never throw [${LONG ? 500 : 20} cases]`, async () => {
    const harness = await createHarness()
    let n = 0
    try {
      await fc.assert(fc.asyncProperty(legalArb, async ({ spec, cut, seedAt }) => {
        let events = renumber(build(spec))
        if (cut !== undefined) events = events.slice(0, Math.floor(cut * (events.length + 1)))
        const k = Math.floor(seedAt * (events.length + 1))
        const session = harness.ctx.sessions.create(`p${n++}`, { seed: events.slice(0, k) })
        for (const e of events.slice(k)) session.append(e.type as never, e.data as never)
        expect(session.length).toBe(events.length)
      }), { numRuns: LONG ? 500 : 20 })
    } finally {
      await harness.dispose()
    }
  })
})
