import { formatProblem } from './problems.ts'
import type { Guard, GuardIO, Judgement } from './guard.ts'
import { keptNotes, listFiles, provisionalNotes, regressionMessage, type MessageLimits, type RollbackOutcome } from './message.ts'
import type { Change, CheckVerdict } from './types.ts'
import type { VerifyLearning, VerifyResult } from './result.ts'

/** One write call being judged (per call: one; per step: every successful write of the step). */
export interface JudgedWrite {
  callId: string
  tool: string
  /** Workspace-relative paths of this call. */
  files: string[]
}

/** How a judgement reaches the outside world; the Cordis adapter wires these to events. */
export interface FlowPorts {
  rollback(reason: string): Promise<RollbackOutcome | undefined>
  commit(): void
  result(result: VerifyResult): void
  /** A kept, verified write (the learnings mode); absent: no learnings. */
  learning?(learning: VerifyLearning): void
  /**
   * Turn verdicts (ADR 0037): a regression only in other files than the
   * written ones is kept for now; called before the accepted state advances
   * to it. Absent (strict verdicts): every regression is rolled back.
   */
  provisional?(verdict: CheckVerdict): void
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
 * Whether a check's new problems are only the ripple of a write (ADR 0037):
 * every one is in a file the write did not touch (an importer, a test that
 * exercises it) and none is the write's own breakage. A problem with no file
 * (a command judged by its exit status) cannot be placed: not ripple.
 */
function onlyRipple(verdict: CheckVerdict, files: readonly string[]): boolean {
  const touched = new Set(files)
  return verdict.regressions.length > 0 && verdict.regressions.every(p => !!p.file && !p.own && !touched.has(p.file))
}

/** `edit_file` or `edit_file, write_file` — the tools of a judged change. */
function toolsOf(writes: readonly JudgedWrite[]): string {
  return [...new Set(writes.map(w => w.tool))].join(', ')
}

/**
 * Act on a judgement: roll back (and re-check) or commit, advance the
 * accepted state when the write stays, emit `verify/result` per check and
 * write, and say what the model should see.
 */
export async function conclude(
  guard: Guard,
  judgement: Judgement,
  change: Change,
  writes: readonly JudgedWrite[],
  sessionId: string,
  ports: FlowPorts,
  io: GuardIO,
  limits: MessageLimits,
): Promise<Conclusion> {
  const failed = judgement.checks.find(c => c.outcome === 'fail')
  const emit = (outcomeOf: (check: string, pass: boolean) => VerifyResult['outcome']) => {
    for (const verdict of judgement.checks) {
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
  if (!failed) {
    guard.accept(judgement)
    ports.commit()
    emit((_, pass) => (pass ? 'pass' : 'fail'))
    const verified = [...new Set(judgement.checks.filter(c => c.outcome === 'pass').map(c => c.check))]
    if (ports.learning && verified.length) {
      for (const w of writes) ports.learning({ sessionId, paths: w.files, tool: w.tool, checks: verified })
    }
    return { kept: true, notes: keptNotes(judgement.checks, limits) }
  }
  const tool = toolsOf(writes)
  if (ports.provisional && onlyRipple(failed, change.files)) {
    ports.provisional(failed)
    guard.accept(judgement)
    io.notice('warn', `kept for now: ${tool} ${listFiles(change.files)}: ${failed.check} found ${failed.regressions.length} new problem${failed.regressions.length === 1 ? '' : 's'} in other files`)
    emit((_, pass) => (pass ? 'pass' : 'fail'))
    return { kept: true, provisional: true, notes: [...provisionalNotes(failed, limits), ...keptNotes(judgement.checks.filter(c => c !== failed), limits)] }
  }
  const reason = `${failed.check} failed after ${tool} on ${listFiles(change.files)}`
  const stopped = failed.partial ? ' (it stopped at the first new errors)' : ''
  io.notice('warn', `rolling back ${tool} ${listFiles(change.files)}: ${failed.check} found ${failed.regressions.length} new problem${failed.regressions.length === 1 ? '' : 's'}${stopped}`)
  const rollback = await ports.rollback(reason)
  const rolledBack = !!rollback?.matched && !rollback.failed.length
  let leftover: Awaited<ReturnType<Guard['recheck']>> = { leftover: [], errors: [] }
  if (rollback?.matched && rolledBack && guard.restoredExactly(change)) {
    // Byte for byte the accepted content: its state is known, nothing to measure again.
    await guard.restore(judgement, io)
  } else if (rollback?.matched) {
    leftover = await guard.recheck(change, judgement, io)
    if (leftover.leftover.length || leftover.errors.length) io.notice('error', 'after the rollback the workspace is NOT back to the accepted state', 'end')
  } else {
    // Nobody could put the files back: the workspace keeps the regression, and
    // it becomes the state later writes are compared with (it was reported once).
    guard.accept(judgement)
    io.notice('error', rollback ? `NOT rolled back: ${rollback.message}` : 'NOT rolled back: no snapshot plugin answered', 'end')
  }
  if (rollback?.failed.length) io.notice('error', `rollback FAILED for ${rollback.failed.map(f => f.path).join(', ')}`, 'end')
  emit((check, pass) => (pass ? 'pass' : check === failed.check && rolledBack ? 'rolled-back' : 'fail'))
  const replacement = regressionMessage({ verdict: failed, tool, files: change.files, rollback, leftover: leftover.leftover, recheckErrors: leftover.errors }, limits)
  return { kept: !rollback?.matched, replacement, notes: [] }
}
