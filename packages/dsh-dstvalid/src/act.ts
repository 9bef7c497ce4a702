import { restoredExactly } from './call-change.ts'
import type { Decision, JudgedWrite } from './judge.ts'
import { regressionMessage, type MessageLimits, type RollbackOutcome } from './message.ts'
import { formatProblem } from './problems.ts'
import type { VerifyLearning, VerifyResult } from './result.ts'
import type { Change, CheckVerdict, Problem } from './types.ts'

/** How a decision reaches the outside world; the Cordis adapter wires these to events. */
export interface ActPorts {
  rollback(reason: string): Promise<RollbackOutcome | undefined>
  commit(): void
  result(result: VerifyResult): void
  /** A kept, verified write (the learnings mode); absent: no learnings. */
  learning?(learning: VerifyLearning): void
  /**
   * A write kept for now (turn verdicts, ADR 0037); called before the
   * accepted state advances to it.
   */
  provisional?(verdict: CheckVerdict): void
}

/** The accepted state as the act phase moves it (the measure phase's `Guard` behind it, bound to the judged write). */
export interface AcceptedPort {
  /** The write stays: the accepted state advances to what was measured. */
  advance(): void
  /** Every file is back byte for byte: each check that measured the write returns to its state before it. */
  restore(): Promise<void>
  /** Measure again after a rollback: the problems the accepted state still does not have. */
  recheck(): Promise<{ leftover: Problem[]; errors: string[] }>
}

export interface ActOptions {
  decision: Decision
  change: Change
  writes: readonly JudgedWrite[]
  sessionId: string
  ports: ActPorts
  accepted: AcceptedPort
  notice(level: 'info' | 'warn' | 'error', text: string, phase?: 'start' | 'end'): void
  limits: MessageLimits
}

export interface Conclusion {
  /** The write was kept (passed, or nobody could roll it back). */
  kept: boolean
  /** For a regression: the whole text that replaces each affected write result. */
  replacement?: string
  /** For a kept write: lines to append to its result (test-first warnings, checks that could not judge). */
  notes: string[]
  /** Kept for now (turn verdicts): its new problems are all in other files. */
  provisional?: boolean
}

/**
 * The act phase: carry a decision out — commit, or roll back and re-check
 * — advance the accepted state when the write stays, emit `verify/result`
 * per check and write, and say what the model should see.
 */
export async function act({ decision, change, writes, sessionId, ports, accepted, notice, limits }: ActOptions): Promise<Conclusion> {
  const emit = (outcomeOf: (check: string, pass: boolean) => VerifyResult['outcome']) => {
    for (const verdict of decision.verdicts) {
      const pass = verdict.outcome === 'pass'
      const outcome = verdict.outcome === 'error' ? 'error' : outcomeOf(verdict.check, pass)
      const problems = pass ? [...verdict.warnings, ...verdict.removed ?? []] : verdict.outcome === 'fail' ? verdict.regressions : []
      const newProblems = problems.map(formatProblem)
      if (verdict.outcome === 'error' && verdict.error) newProblems.push(verdict.error)
      for (const w of writes) {
        ports.result({ sessionId, callId: w.callId, tool: w.tool, paths: w.files, check: verdict.check, outcome, newProblems, durationMs: verdict.durationMs })
      }
    }
  }
  if (decision.kind === 'keep') {
    accepted.advance()
    ports.commit()
    emit((_, pass) => (pass ? 'pass' : 'fail'))
    if (ports.learning && decision.verified.length) {
      for (const w of writes) ports.learning({ sessionId, paths: w.files, tool: w.tool, checks: decision.verified })
    }
    return { kept: true, notes: decision.notes }
  }
  if (decision.kind === 'keep-for-now') {
    ports.provisional?.(decision.failed)
    accepted.advance()
    notice('warn', decision.notice)
    emit((_, pass) => (pass ? 'pass' : 'fail'))
    return { kept: true, provisional: true, notes: decision.notes }
  }
  const { failed } = decision
  notice('warn', decision.notice)
  const rollback = await ports.rollback(decision.reason)
  const rolledBack = !!rollback?.matched && !rollback.failed.length
  let leftover: Awaited<ReturnType<AcceptedPort['recheck']>> = { leftover: [], errors: [] }
  if (rollback?.matched && rolledBack && restoredExactly(change)) {
    // Byte for byte the accepted content: its state is known, nothing to measure again.
    await accepted.restore()
  } else if (rollback?.matched) {
    leftover = await accepted.recheck()
    if (leftover.leftover.length || leftover.errors.length) notice('error', 'after the rollback the workspace is NOT back to the accepted state', 'end')
  } else {
    // Nobody could put the files back: the workspace keeps the regression, and
    // it becomes the state later writes are compared with (it was reported once).
    accepted.advance()
    notice('error', rollback ? `NOT rolled back: ${rollback.message}` : 'NOT rolled back: no snapshot plugin answered', 'end')
  }
  if (rollback?.failed.length) notice('error', `rollback FAILED for ${rollback.failed.map(f => f.path).join(', ')}`, 'end')
  emit((check, pass) => (pass ? 'pass' : check === failed.check && rolledBack ? 'rolled-back' : 'fail'))
  const replacement = regressionMessage({ verdict: failed, tool: decision.tool, files: [...decision.files], rollback, leftover: leftover.leftover, recheckErrors: leftover.errors }, limits)
  return { kept: !rollback?.matched, replacement, notes: [] }
}
