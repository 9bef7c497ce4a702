import type { EventRef, InvariantRule, Violation } from './types.ts'

export interface TraceCheckerOptions {
  /** How many events (up to and including the offending one) a violation lists. Default 5. */
  recent?: number
}

const NO_VIOLATIONS: readonly Violation[] = Object.freeze([])

/**
 * The per-session event contract, checked incrementally: feed events in log
 * order to {@link TraceChecker.check}; each call returns the rules that
 * event broke (the same frozen empty array when it broke none, so a clean
 * event allocates nothing).
 *
 * After a violation the checker recovers the way the log most plausibly
 * meant (a turn/start over an open turn opens the new turn, a mismatched
 * step/end still closes the open step, …), so one bad event does not flag
 * every event after it and a linter can list every violation.
 *
 * Unknown event types are checked for `seq` only. Pure: no I/O, no Cordis.
 *
 * @example
 * const checker = new TraceChecker()
 * for (const event of log) for (const v of checker.check(event)) console.log(v.rule, v.message)
 */
export class TraceChecker {
  private _count = 0
  private _lastSeq = -1
  private _inTurn = false
  /** Number of the open turn; null when the opening event had no usable number. */
  private _turn: number | null = null
  private _inStep = false
  private _stepTurn: number | null = null
  private _step: number | null = null
  /** callId → tool/calls of the open step still waiting for their result (0: answered). */
  private readonly _calls = new Map<string, number>()
  private readonly _ringSize: number
  private readonly _ringType: string[]
  private readonly _ringSeq: (number | undefined)[]
  private _found: Violation[] | undefined

  constructor(options: TraceCheckerOptions = {}) {
    this._ringSize = Math.max(1, options.recent ?? 5)
    this._ringType = new Array<string>(this._ringSize)
    this._ringSeq = new Array<number | undefined>(this._ringSize)
  }

  /** Events checked so far. */
  get count(): number {
    return this._count
  }

  /** Check one event and advance the state. Never throws. */
  check(event: unknown): readonly Violation[] {
    this._found = undefined
    const index = this._count++
    const e = (event !== null && typeof event === 'object' ? event : undefined) as
      { seq?: unknown; type?: unknown; data?: unknown } | undefined
    const seq = e?.seq
    const type = typeof e?.type === 'string' ? e.type : undefined
    const slot = index % this._ringSize
    this._ringType[slot] = type ?? '?'
    this._ringSeq[slot] = typeof seq === 'number' ? seq : undefined

    if (typeof seq !== 'number' || !Number.isInteger(seq) || seq < 0) {
      this.flag('seq', `seq must be a non-negative integer, got ${show(seq)}`, type)
    } else if (seq <= this._lastSeq) {
      this.flag('seq', `seq ${seq} does not increase (previous seq ${this._lastSeq})`, type)
    } else {
      this._lastSeq = seq
    }

    if (type === undefined) {
      this.flag('shape', e ? 'event has no string type' : `event is not an object: ${show(event)}`, type)
    } else {
      this.checkStructure(type, e!.data)
    }
    return this._found ?? NO_VIOLATIONS
  }

  private checkStructure(type: string, data: unknown): void {
    const d = (data !== null && typeof data === 'object' ? data : {}) as Record<string, unknown>
    switch (type) {
      case 'turn/start': return this.turnStart(this.num(type, d, 'turn'))
      case 'turn/end': return this.turnEnd(this.num(type, d, 'turn'))
      case 'step/start': return this.stepStart(this.num(type, d, 'turn'), this.num(type, d, 'step'))
      case 'step/end': return this.stepEnd(this.num(type, d, 'turn'), this.num(type, d, 'step'))
      case 'assistant/chunk':
      case 'assistant/message':
        if (!this._inStep) this.flag('outside-step', `${type} outside an open step`, type)
        return
      case 'tool/call': return this.toolCall(this.callId(type, d))
      case 'tool/result': return this.toolResult(this.callId(type, d))
    }
  }

  private turnStart(turn: number | null): void {
    if (this._inTurn) this.flag('turn-overlap', `turn ${n(turn)} starts while turn ${n(this._turn)} is open`, 'turn/start')
    this._inTurn = true
    this._turn = turn
    this.closeStep()
  }

  private turnEnd(turn: number | null): void {
    if (!this._inTurn) {
      this.flag('turn-end', `turn/end of turn ${n(turn)} without an open turn`, 'turn/end')
    } else if (turn !== null && this._turn !== null && turn !== this._turn) {
      this.flag('turn-end', `turn/end of turn ${turn} while turn ${this._turn} is open`, 'turn/end')
    }
    if (this._inStep) {
      this.flag('turn-end-open-step', `turn ${n(turn)} ends while step ${this.stepName()} is open`, 'turn/end')
    }
    this._inTurn = false
    this._turn = null
    this.closeStep()
  }

  private stepStart(turn: number | null, step: number | null): void {
    const name = `${n(turn)}.${n(step)}`
    if (!this._inTurn) {
      this.flag('step-outside-turn', `step ${name} starts outside any turn`, 'step/start')
    } else if (turn !== null && this._turn !== null && turn !== this._turn) {
      this.flag('step-outside-turn', `step ${name} starts while turn ${this._turn} is open`, 'step/start')
    }
    if (this._inStep) this.flag('step-overlap', `step ${name} starts while step ${this.stepName()} is open`, 'step/start')
    this.closeStep()
    this._inStep = true
    this._stepTurn = turn
    this._step = step
  }

  private stepEnd(turn: number | null, step: number | null): void {
    const name = `${n(turn)}.${n(step)}`
    if (!this._inStep) {
      this.flag('step-end', `step/end of step ${name} without an open step`, 'step/end')
    } else if ((turn !== null && this._stepTurn !== null && turn !== this._stepTurn)
      || (step !== null && this._step !== null && step !== this._step)) {
      this.flag('step-end', `step/end of step ${name} while step ${this.stepName()} is open`, 'step/end')
    }
    this.closeStep()
  }

  private toolCall(callId: string | undefined): void {
    if (!this._inStep) return this.flag('outside-step', 'tool/call outside an open step', 'tool/call')
    if (callId !== undefined) this._calls.set(callId, (this._calls.get(callId) ?? 0) + 1)
  }

  private toolResult(callId: string | undefined): void {
    if (!this._inStep) return this.flag('outside-step', 'tool/result outside an open step', 'tool/result')
    if (callId === undefined) return
    const waiting = this._calls.get(callId)
    if (waiting === undefined) {
      this.flag('result-without-call', `tool/result for callId ${show(callId)} has no earlier tool/call in step ${this.stepName()}`, 'tool/result')
    } else if (waiting === 0) {
      this.flag('result-without-call', `tool/result for callId ${show(callId)} repeats a result already logged in step ${this.stepName()}`, 'tool/result')
    } else {
      this._calls.set(callId, waiting - 1)
    }
  }

  private closeStep(): void {
    this._inStep = false
    this._stepTurn = null
    this._step = null
    if (this._calls.size) this._calls.clear()
  }

  private stepName(): string {
    return `${n(this._stepTurn)}.${n(this._step)}`
  }

  private num(type: string, data: Record<string, unknown>, key: string): number | null {
    const value = data[key]
    if (typeof value === 'number' && Number.isInteger(value)) return value
    this.flag('shape', `${type} needs an integer data.${key}, got ${show(value)}`, type)
    return null
  }

  private callId(type: string, data: Record<string, unknown>): string | undefined {
    const value = data.callId
    if (typeof value === 'string') return value
    this.flag('shape', `${type} needs a string data.callId, got ${show(value)}`, type)
    return undefined
  }

  private flag(rule: InvariantRule, message: string, type: string | undefined): void {
    const index = this._count - 1
    const seq = this._ringSeq[index % this._ringSize]
    const violation: Violation = { rule, message, type: type ?? '?', index, recent: this.recent() }
    if (seq !== undefined) violation.seq = seq
    ;(this._found ??= []).push(violation)
  }

  /** The ring of recent events, oldest first (the offending event last). */
  private recent(): EventRef[] {
    const size = Math.min(this._count, this._ringSize)
    const refs: EventRef[] = []
    for (let i = this._count - size; i < this._count; i++) {
      const slot = i % this._ringSize
      const ref: EventRef = { type: this._ringType[slot]! }
      const seq = this._ringSeq[slot]
      if (seq !== undefined) ref.seq = seq
      refs.push(ref)
    }
    return refs
  }
}

/** Check a whole trace; returns every violation, in log order. */
export function checkTrace(events: Iterable<unknown>, options?: TraceCheckerOptions): Violation[] {
  const checker = new TraceChecker(options)
  const found: Violation[] = []
  for (const event of events) {
    const violations = checker.check(event)
    if (violations.length) found.push(...violations)
  }
  return found
}

/** A turn or step number as messages show it: `?` when the event carried none. */
function n(value: number | null): string {
  return value === null ? '?' : String(value)
}

/** A value as a violation message shows it: strings quoted, the rest as JSON, capped. */
function show(value: unknown): string {
  if (value === undefined) return 'nothing'
  if (typeof value === 'number') return String(value)
  let text: string
  try {
    text = JSON.stringify(value) ?? String(value)
  } catch {
    // A cyclic or BigInt-holding value: JSON cannot show it.
    text = String(value)
  }
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}
