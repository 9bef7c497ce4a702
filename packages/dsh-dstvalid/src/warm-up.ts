import type { Guard, GuardIO } from './measure.ts'
import { seconds } from './run.ts'

/** Where a workspace's warm-up is (the host's status). */
export interface WarmState {
  /** `warming`: measuring in the background; `warm`: everything a first write needs is measured; `cold`: the warm-up ended without it (`why`). */
  state: 'warming' | 'warm' | 'cold'
  /** Since the warm-up began; once it ended, how long it took. */
  ms: number
  /** Pieces run so far, and how many of them ended early for a write. */
  pieces: number
  yielded: number
  why?: string
}

export interface WarmUpOptions {
  /** Also the lazy checks (the tests, whole: their accepted results and the per-test map). */
  tests: boolean
  /** The warm-up's own time limit, in all (each check's commands get what is left of it). */
  timeoutMs: number
  /** Whether the disk holds nothing unjudged now (a step's writes waiting for their judgement): a piece waits until it does. */
  canMeasure?: () => boolean
  onState?(state: WarmState): void
}

const delay = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))

/**
 * Measure what a first write needs, in the background, in pieces that
 * yield to writes: the whole-workspace baselines (a write needs them
 * anyway) at the same time as the first of the lazy checks' whole runs
 * (unless a step's writes wait: then the baselines first), each a task of the guard's
 * queue that ends early when a judgement is queued behind it (its finished
 * test files kept), the rest queued again behind that judgement. A write
 * made meanwhile waits for at most the test files running when it came,
 * and is judged as without a warm-up: what is not measured yet is measured
 * for it. Never throws (a failure is a `cold` state with why).
 */
export async function warmUp(guard: Guard, io: GuardIO, options: WarmUpOptions): Promise<WarmState> {
  const started = performance.now()
  const since = guard.unjudged
  const state: WarmState = { state: 'warming', ms: 0, pieces: 0, yielded: 0 }
  const update = (patch: Partial<WarmState>) => {
    Object.assign(state, patch, { ms: Math.round(performance.now() - started) })
    options.onState?.({ ...state })
  }
  const left = () => options.timeoutMs - (performance.now() - started)
  update({})
  // The whole-workspace baselines (a type-check in its worker thread) run at the same time as the first test piece
  // (the warm runner's processes): the naive check runs them one after the other.
  let baseline: Promise<void> | undefined
  const baselines = () => baseline ??= guard.warm(io, false, Math.max(1, left()))
  try {
    if (!options.tests) await guard.queue.run(baselines)
    while (options.tests) {
      if (left() <= 0) {
        const why = `the warm-up took longer than its limit (${seconds(options.timeoutMs)}); what is not measured yet is measured for each write`
        io.notice('warn', why)
        if (!baseline) await guard.queue.run(baselines)
        update({ state: 'cold', why })
        return state
      }
      if (options.canMeasure && !options.canMeasure()) {
        // A step's writes wait for their judgement: the baselines now (they never waited for it), the tests once it is done.
        if (!baseline) await guard.queue.run(baselines)
        await delay(250)
        continue
      }
      let yielded = false
      const done = await guard.queue.run(async () => {
        const turn = guard.queue.yieldSignal()
        const first = baselines()
        try {
          // A judgement already waits: it goes first (after the baselines, which it needs anyway).
          if (turn.signal.aborted) return (await first, yielded = true, false)
          io.notice('info', `warming up: testing ${state.pieces ? 'what the warm-up has left' : 'the whole suite'}…`, 'start')
          // Both settle before the task ends (a failed baseline must not leave a piece running outside the queue).
          const [piece, base] = await Promise.allSettled([guard.warmStep(io, turn.signal, Math.max(1, left()), since), first])
          if (base.status === 'rejected') throw base.reason
          if (piece.status === 'rejected') throw piece.reason
          const over = piece.value
          yielded = turn.signal.aborted
          io.notice('info', over ? 'warm: the accepted test results and the per-test map are measured' : 'warming up: yielded to a write; the rest after it', 'end')
          return over
        } finally {
          turn.done()
        }
      })
      update({ pieces: state.pieces + 1, yielded: state.yielded + (yielded ? 1 : 0) })
      if (done) break
    }
    update(guard.measured ? { state: 'warm' } : { state: 'cold', why: 'a check could not measure the accepted state (see the notices)' })
  } catch (error) {
    const why = `baseline failed: ${(error as Error)?.message ?? String(error)}`
    io.notice('error', why)
    update({ state: 'cold', why })
  }
  return state
}
