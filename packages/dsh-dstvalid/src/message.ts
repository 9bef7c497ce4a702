import { capLines } from 'dsh-common'
import { formatProblem } from './problems.ts'
import type { CheckVerdict, Problem, SlowTest } from './types.ts'

/** Caps of the problem list in a tool result. */
export interface MessageLimits {
  maxLines: number
  maxBytes: number
}

/** What the rollback request came back with (structurally the snapshot plugin's `RollbackResult`). */
export interface RollbackOutcome {
  matched: boolean
  restored: string[]
  deleted: string[]
  failed: { path: string; error: string }[]
  message: string
}

export interface RegressionReport {
  /** The check that found the regression. */
  verdict: CheckVerdict
  /** Tool name(s), e.g. `edit_file` or `edit_file, write_file`. */
  tool: string
  /** Workspace-relative paths the write touched. */
  files: string[]
  /** undefined: no plugin answered `snapshot/rollback`. */
  rollback: RollbackOutcome | undefined
  /** Problems still there after the rollback that the accepted state did not have. */
  leftover: Problem[]
  /** Re-check errors after the rollback. */
  recheckErrors: string[]
}

/** Files for a message line: the first eight, then `and N more` (a shell call may change thousands). */
export function listFiles(files: readonly string[], max = 8): string {
  return files.length > max ? `${files.slice(0, max).join(', ')} and ${files.length - max} more` : files.join(', ')
}

function problemLines(problems: readonly Problem[], limits: MessageLimits): string[] {
  return capLines(problems.map(formatProblem), limits.maxLines, limits.maxBytes)
}

/**
 * The first line of the rewritten result:
 * - `rolled back: <check> failed after <tool> on <paths>` when the snapshot plugin restored every file;
 * - `regression detected, NOT rolled back (no snapshot plugin)` when none answered;
 * - `regression detected, NOT rolled back (<snapshot's message>)` when it answered without a capture;
 * - `rollback FAILED: …` when some file could not be restored.
 */
function headline(r: RegressionReport): string {
  const what = `${r.verdict.check} failed after ${r.tool} on ${listFiles(r.files)}`
  if (!r.rollback) return 'regression detected, NOT rolled back (no snapshot plugin)'
  if (!r.rollback.matched) return `regression detected, NOT rolled back (${r.rollback.message || 'no snapshot of this write'})`
  if (r.rollback.failed.length) return `rollback FAILED: ${what}; could not restore ${r.rollback.failed.map(f => `${f.path} (${f.error})`).join(', ')}`
  return `rolled back: ${what}`
}

/** The full tool result text for a regression: headline, then only the NEW problems, capped. */
export function regressionMessage(r: RegressionReport, limits: MessageLimits): string {
  const lines = [headline(r), ...problemLines(r.verdict.regressions, limits)]
  if (r.verdict.partial) lines.push(`(${r.verdict.check} stopped at the first new errors: possibly more in files not checked)`)
  if (r.rollback?.matched && (r.leftover.length || r.recheckErrors.length)) {
    lines.push('WARNING: after the rollback the workspace is NOT back to the accepted state:')
    lines.push(...problemLines(r.leftover, limits), ...r.recheckErrors)
  }
  return lines.join('\n')
}

/** Seconds with one decimal, for times near a test's limit ("0.6 s", "5.0 s"). */
function tenths(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`
}

/** `tests/a.test.ts > stream > aborts: took 6.2 s, over its 5.0 s limit (passed alone with 20.0 s)`. */
function slowLine(s: SlowTest): string {
  const alone = `passed alone with ${tenths(s.rerunLimitMs)}`
  return s.durationMs === undefined
    ? `${s.problem.key}: ${s.problem.timeout?.hook ? 'a hook' : 'it'} took over its ${tenths(s.limitMs)} limit (${alone})`
    : `${s.problem.key}: took ${tenths(s.durationMs)}, over its ${tenths(s.limitMs)} limit (${alone})`
}

/** Lines appended to a kept write's result: tolerated test-first problems, advisory warnings (style, coverage), checks that could not judge. */
export function keptNotes(verdicts: readonly CheckVerdict[], limits: MessageLimits): string[] {
  const lines: string[] = []
  for (const v of verdicts) {
    if (v.warnings.length) {
      const n = v.warnings.length
      lines.push(v.advisory
        ? `warning: kept, but ${v.check} has ${n} new problem${n === 1 ? '' : 's'} (not rolled back; fix ${n === 1 ? 'it' : 'them'}):`
        : `warning: kept, but ${v.check} has new problems in tests (test-first work? make them pass):`)
      lines.push(...problemLines(v.warnings, limits))
    }
    if (v.removed?.length) {
      lines.push(`warning: kept, but tests that passed no longer run (${v.check}): was removing them intended?`)
      lines.push(...problemLines(v.removed, limits))
    }
    if (v.slow?.length) {
      const n = v.slow.length
      lines.push(`warning: kept, but ${n} test${n === 1 ? '' : 's'} passed only when given more time than ${n === 1 ? 'its' : 'their'} limit (slowed by load, or by this write?):`)
      lines.push(...capLines(v.slow.map(slowLine), limits.maxLines, limits.maxBytes))
    }
    if (v.hangAlone?.length) {
      const n = v.hangAlone.length
      lines.push(`warning: kept, but ${n} test${n === 1 ? ' times' : 's time'} out when run alone before this write too (not blamed on it; ${n === 1 ? 'does it' : 'do they'} depend on the tests before ${n === 1 ? 'it' : 'them'}?):`)
      lines.push(...capLines(v.hangAlone.map(h => `${h.problem.key}: times out alone with ${tenths(h.rerunLimitMs)} before and after the write (its limit is ${tenths(h.limitMs)})`), limits.maxLines, limits.maxBytes))
    }
    if (v.outcome === 'error') lines.push(`warning: not verified: ${v.error}`)
    lines.push(...v.notes ?? [])
  }
  return lines
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`
}

/** What a file (one, several) no longer does against a change, by the check that found it. */
const DIAGNOSTIC_VERB: Record<string, [string, string]> = { typecheck: ['type-checks', 'type-check'], compile: ['compiles', 'compile'], vet: ['passes vet', 'pass vet'] }

/** What a check's new problems in other files are, in one phrase: `2 files no longer type-check`, `3 tests in 1 file fail`. */
function rippleSummary(check: string, problems: readonly Problem[]): string {
  const files = new Set(problems.map(p => p.file)).size
  if (problems.every(p => p.kind === 'diagnostic')) {
    const [one, many] = DIAGNOSTIC_VERB[check] ?? [`passes ${check}`, `pass ${check}`]
    return `${plural(files, 'file')} no longer ${files === 1 ? one : many}`
  }
  if (problems.every(p => p.kind === 'test')) return `${plural(problems.length, 'test')} in ${plural(files, 'file')} ${problems.length === 1 ? 'fails' : 'fail'}`
  return `${check} found ${plural(problems.length, 'new problem')} in ${plural(files, 'file')}`
}

/**
 * The lines appended to a write kept for now (turn verdicts, ADR 0037):
 * `kept for now: 2 files no longer type-check against this change:`, the
 * problems, and what happens when the turn ends with them.
 */
export function provisionalNotes(verdict: CheckVerdict, limits: MessageLimits): string[] {
  const lines = [`kept for now: ${rippleSummary(verdict.check, verdict.regressions)} against this change:`, ...problemLines(verdict.regressions, limits)]
  if (verdict.partial) lines.push(`(${verdict.check} stopped at the first new errors: possibly more in files not checked)`)
  lines.push('fix them before you finish, or this change is undone')
  return lines
}

/** Appended to a later write's result while problems a kept-for-now write left are open. */
export function openNotes(open: readonly Problem[], limits: MessageLimits): string[] {
  if (!open.length) return ['the problems this turn\'s earlier writes left in other files are fixed (the whole change is checked again when you finish)']
  return [`still to fix before you finish (left by this turn's earlier writes): ${plural(open.length, 'problem')}:`, ...problemLines(open, limits)]
}

/** One held write, as the turn-end messages name it. */
export interface HeldWriteName {
  tool: string
  files: readonly string[]
}

function writesPhrase(writes: readonly HeldWriteName[]): string {
  return writes.map(w => `${w.tool} on ${listFiles(w.files)}`).join('; ')
}

/**
 * A refused stop (turn verdicts): what is worse than at the turn's start,
 * and what the next stop with it open does (undone: always after the last
 * refusal, and after an earlier one when nothing was written before it).
 */
export function stopRefusal(verdict: CheckVerdict, group: readonly HeldWriteName[], attempt: number, max: number, limits: MessageLimits): string {
  return [
    `not done: this turn leaves the project worse than it began (stop refused, ${attempt} of ${max}): ${rippleSummary(verdict.check, verdict.regressions)}:`,
    ...problemLines(verdict.regressions, limits),
    attempt < max
      ? `fix them, then finish; stopping again without writing a fix undoes ${writesPhrase(group)}`
      : `fix them, then finish; stopping with them open undoes ${writesPhrase(group)}`,
  ].join('\n')
}

/**
 * The unfinished change was undone at the turn's end (turn verdicts): what,
 * why, what stayed, and how to make the change so it stays.
 */
export function undoneMessage(verdict: CheckVerdict, undone: readonly HeldWriteName[], kept: readonly HeldWriteName[], rollback: RollbackOutcome | undefined, limits: MessageLimits): string {
  const failed = rollback?.failed.length ? `; could not restore ${rollback.failed.map(f => `${f.path} (${f.error})`).join(', ')}` : ''
  const head = !rollback || !rollback.matched
    ? `NOT undone (${rollback?.message || 'no snapshot plugin'}): this turn left the project worse than it began, and ${writesPhrase(undone)} could not be put back: ${rippleSummary(verdict.check, verdict.regressions)}:`
    : `undone at the end of the turn: ${writesPhrase(undone)}${failed}; it left the project worse than the turn began: ${rippleSummary(verdict.check, verdict.regressions)}:`
  const lines = [head, ...problemLines(verdict.regressions, limits)]
  if (kept.length) lines.push(`kept: ${writesPhrase(kept)}`)
  lines.push('to make this change, update every file it breaks in the same turn before you finish')
  return lines.join('\n')
}
