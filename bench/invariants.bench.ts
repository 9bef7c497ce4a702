// invariants: events per second through the dsh-invariants checker with
// freeze off and on, against a bare loop over the same events (the floor),
// and against the naive ways: re-checking the whole log on every append,
// and a deep freeze that revisits every object. Last, the real harness
// path: `session.append` on a real Context with and without the plugin.
// Goal (issue 6): ≥ 1,000,000 events/s freeze off, ≥ 200,000/s freeze on.
import { Context } from '@deepseek-ai/cordis'
import SessionService from 'dsh-session'
import * as Invariants from 'dsh-invariants'
import { checkTrace, deepFreeze, TraceChecker, Tripwire } from 'dsh-invariants'

const N = Number(process.env.DSH_BENCH_EVENTS ?? 200_000)
const runs = Number(process.env.DSH_BENCH_RUNS ?? 5)
const NAIVE_N = 2_000
/** Events per run on the real append path (a Cordis emit costs microseconds, so fewer). */
const HARNESS_N = Number(process.env.DSH_BENCH_HARNESS_EVENTS ?? 20_000)

interface Ev { seq: number; time: number; type: string; data: Record<string, unknown> }

/**
 * A realistic log of about `n` events: turns of 1–4 steps, each step some
 * chunks, usage, the assistant message (with its tool calls), the calls,
 * their results (one without), free events (verify/run) in between.
 */
function makeLog(n: number): Ev[] {
  const out: Ev[] = []
  const push = (type: string, data: Record<string, unknown>) => out.push({ seq: out.length, time: 1_700_000_000_000 + out.length, type, data })
  for (let turn = 0; out.length < n; turn++) {
    push('user/message', { text: `please fix test ${turn}` })
    push('turn/start', { turn })
    const steps = 1 + (turn % 4)
    for (let step = 0; step < steps; step++) {
      push('step/start', { turn, step })
      for (let c = 0; c < 4; c++) push('assistant/chunk', { text: 'Looking at the failing test and the code it covers. ' })
      push('usage', { inputTokens: 1200, outputTokens: 80 })
      const calls = step === steps - 1 ? [] : [0, 1, 2].map(i => ({
        callId: `call_${turn}_${step}_${i}`,
        name: i === 2 ? 'bash' : 'edit_file',
        arguments: i === 2 ? { command: 'pnpm vitest run auth' } : { path: `src/f${i}.ts`, old_string: 'const a = 1', new_string: 'const a = 2' },
      }))
      push('assistant/message', { text: 'Looking at the failing test.', toolCalls: calls })
      for (const call of calls) push('tool/call', call)
      for (const call of calls.slice(0, 2)) {
        push('tool/result', { callId: call.callId, name: call.name, content: `edited ${call.name}`, isError: false })
        push('verify/run', { command: 'tsc --noEmit', exitCode: 0, durationMs: 812 })
      }
      push('step/end', { turn, step })
    }
    push('turn/end', { turn, reason: 'completed' })
  }
  return out.slice(0, n)
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]!
}

/** Median wall time of `runs` runs; `prepare` builds fresh input outside the timing. */
function timed<T>(prepare: () => T, run: (input: T) => void, n = runs): number {
  const times: number[] = []
  for (let i = 0; i < n; i++) {
    const input = prepare()
    const start = performance.now()
    run(input)
    times.push(performance.now() - start)
  }
  return median(times)
}

/** The naive deep freeze: visits every object, frozen or not (and so cannot meet shared objects once). */
function naiveDeepFreeze(value: unknown): void {
  if (value === null || typeof value !== 'object') return
  for (const child of Object.values(value)) naiveDeepFreeze(child)
  Object.freeze(value)
}

let sink = 0
const shared = makeLog(N)

const rows: { name: string; events: number; ms: number }[] = []
const measure = (name: string, events: number, ms: number) => rows.push({ name, events, ms })

measure('bare loop over the events (floor)', N, timed(() => shared, (log) => {
  for (let i = 0; i < log.length; i++) sink += log[i]!.seq + log[i]!.type.length
}))
measure('**ours**: TraceChecker.check, freeze off', N, timed(() => shared, (log) => {
  const checker = new TraceChecker()
  for (let i = 0; i < log.length; i++) sink += checker.check(log[i]).length
}))
/** Check each event, then freeze it with `freeze` (ours, or the naive one). */
const checkThenFreeze = (freeze: (event: unknown) => void) => (log: Ev[]) => {
  const checker = new TraceChecker()
  for (let i = 0; i < log.length; i++) {
    sink += checker.check(log[i]).length
    freeze(log[i])
  }
}
/** The plugin's path: each event pushed onto a session's log, then handed to the tripwire. */
const throughTripwire = (freeze: boolean) => (log: Ev[]) => {
  const tripwire = new Tripwire({ freeze })
  const session = { id: 's', events: [] as Ev[] }
  for (let i = 0; i < log.length; i++) {
    session.events.push(log[i]!)
    tripwire.appended(session, log[i])
  }
}
measure('**ours**: TraceChecker.check + deepFreeze, freeze on', N, timed(() => makeLog(N), checkThenFreeze(deepFreeze)))
measure('**ours**: Tripwire.appended (the plugin\'s path), freeze off', N, timed(() => shared, throughTripwire(false)))
measure('**ours**: Tripwire.appended (the plugin\'s path), freeze on', N, timed(() => makeLog(N), throughTripwire(true)))
measure('naive: TraceChecker.check + deep freeze visiting every object', N, timed(() => makeLog(N), checkThenFreeze(naiveDeepFreeze)))
const naiveLog = makeLog(NAIVE_N)
measure(`naive: re-check the whole log on every append (${NAIVE_N.toLocaleString('en')}-event log)`, NAIVE_N, timed(() => naiveLog, (log) => {
  for (let i = 1; i <= log.length; i++) sink += checkTrace(log.slice(0, i)).length
}, 3))

// The real harness path: a Context with dsh-session, appending the log's events.
async function harnessAppend(invariants: false | { freeze: boolean }): Promise<number> {
  const times: number[] = []
  for (let r = 0; r < runs; r++) {
    const ctx = new Context()
    await ctx.plugin(SessionService)
    if (invariants) await ctx.plugin(Invariants, invariants)
    const session = ctx.sessions.create('bench')
    const log = makeLog(HARNESS_N)
    const start = performance.now()
    for (const e of log) session.append(e.type as never, e.data as never)
    times.push(performance.now() - start)
  }
  return median(times)
}
const appendBare = await harnessAppend(false)
const appendOff = await harnessAppend({ freeze: false })
const appendOn = await harnessAppend({ freeze: true })
measure('harness: session.append on a real Context, dsh-invariants not loaded', HARNESS_N, appendBare)
measure('harness: session.append on a real Context, dsh-invariants freeze off', HARNESS_N, appendOff)
measure('harness: session.append on a real Context, dsh-invariants freeze on', HARNESS_N, appendOn)

const bare = rows[0]!
const rate = (r: { events: number; ms: number }) => r.events / (r.ms / 1000)
console.log(`${N.toLocaleString('en')} events (${NAIVE_N.toLocaleString('en')} for the quadratic row, ${HARNESS_N.toLocaleString('en')} on the real append path); median of ${runs} runs; Node ${process.version}\n`)
console.log('| path | events | median | events/s | time per event vs bare loop |')
console.log('|---|---|---|---|---|')
for (const r of rows) {
  console.log(`| ${r.name} | ${r.events.toLocaleString('en')} | ${r.ms.toFixed(1)} ms | ${Math.round(rate(r)).toLocaleString('en')} | ${(rate(bare) / rate(r)).toFixed(1)}× |`)
}
const off = rate(rows[1]!)
const on = rate(rows[2]!)
console.log(`\nGoal: ≥ 1,000,000 events/s freeze off — ${Math.round(off).toLocaleString('en')} (${off >= 1e6 ? 'met' : 'NOT met'}); `
  + `≥ 200,000 events/s freeze on — ${Math.round(on).toLocaleString('en')} (${on >= 2e5 ? 'met' : 'NOT met'}).`)
console.log(`Naive per-append re-check vs ours (freeze off): ${(off / rate(rows[6]!)).toFixed(0)}× slower at only ${NAIVE_N.toLocaleString('en')} events (it grows with the log).`)
console.log(`Overhead on the real append path: freeze off ${(appendOff / appendBare).toFixed(2)}×, freeze on ${(appendOn / appendBare).toFixed(2)}× the time of an unguarded append.`)
if (sink === -1) console.log(sink)
