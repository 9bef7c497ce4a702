import type { AcceptedState, JudgeRules } from './accepted.ts'
import { keptNotes, listFiles, provisionalNotes, stopRefusal, type HeldWriteName, type MessageLimits } from './message.ts'
import type { Check, CheckVerdict, Problem } from './types.ts'

/**
 * The judge phase: from what was measured (each check's verdict against the
 * accepted state), decide a write's fate and say it — keep, keep for now
 * (turn verdicts), roll back — and a turn's at its stop. Pure: no file, no
 * process, no state; `act.ts` carries a decision out.
 */

/** One write call being judged (per call: one; per step: every successful write of the step). */
export interface JudgedWrite {
  callId: string
  tool: string
  /** Workspace-relative paths of this call. */
  files: string[]
}

/** What to do with a measured write, and the words for it. */
export type Decision =
  | {
    kind: 'keep'
    /** Every check's verdict, as measured. */
    verdicts: readonly CheckVerdict[]
    /** Lines to append to the kept write's result. */
    notes: string[]
    /** The checks that passed (the learnings mode). */
    verified: string[]
  }
  | {
    /** Turn verdicts (ADR 0037): its new problems are all in other files; the turn's stop judges it again. */
    kind: 'keep-for-now'
    verdicts: readonly CheckVerdict[]
    /** The check that found the problems in other files. */
    failed: CheckVerdict
    notes: string[]
    notice: string
  }
  | {
    kind: 'roll-back'
    verdicts: readonly CheckVerdict[]
    failed: CheckVerdict
    /** Why, as the rollback request says it. */
    reason: string
    notice: string
    /** Tool name(s) of the judged writes (`edit_file, write_file`). */
    tool: string
    files: readonly string[]
  }

export interface JudgeOptions {
  verdicts: readonly CheckVerdict[]
  writes: readonly JudgedWrite[]
  /** Workspace-relative paths of the judged change. */
  files: readonly string[]
  /** Turn verdicts: a regression only in other files is kept for now. */
  turnVerdicts: boolean
  limits: MessageLimits
}

/** Decide a measured write's fate: keep, keep for now, or roll back. */
export function judge({ verdicts, writes, files, turnVerdicts, limits }: JudgeOptions): Decision {
  const failed = verdicts.find(c => c.outcome === 'fail')
  if (!failed) {
    const verified = [...new Set(verdicts.filter(c => c.outcome === 'pass').map(c => c.check))]
    return { kind: 'keep', verdicts, notes: keptNotes(verdicts, limits), verified }
  }
  const tool = toolsOf(writes)
  const found = `${failed.check} found ${failed.regressions.length} new problem${failed.regressions.length === 1 ? '' : 's'}`
  if (turnVerdicts && onlyRipple(failed, files)) {
    return {
      kind: 'keep-for-now', verdicts, failed,
      notes: [...provisionalNotes(failed, limits), ...keptNotes(verdicts.filter(c => c !== failed), limits)],
      notice: `kept for now: ${tool} ${listFiles(files)}: ${found} in other files`,
    }
  }
  const stopped = failed.partial ? ' (it stopped at the first new errors)' : ''
  return {
    kind: 'roll-back', verdicts, failed, tool, files,
    reason: `${failed.check} failed after ${tool} on ${listFiles(files)}`,
    notice: `rolling back ${tool} ${listFiles(files)}: ${found}${stopped}`,
  }
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

/** A write held until its turn ends, as the stop's judgement sees it. */
export interface HeldFiles extends HeldWriteName {
  /** It was kept for now (its new problems were in other files). */
  debt: boolean
}

/** What to do at a turn's stop with its change unfinished. */
export type StopDecision<W extends HeldFiles> =
  | { kind: 'keep' }
  | { kind: 'refuse'; group: W[]; attempt: number; notice: string; text: string }
  | { kind: 'undo'; group: W[]; why: 'refusals spent' | 'nothing written' }

export interface StopOptions<W extends HeldFiles> {
  /** The check that found the turn's change worse than its start; undefined: no worse. */
  failed: CheckVerdict | undefined
  held: readonly W[]
  /** Problems the writes kept for now reported, still open when last looked. */
  open: readonly Problem[]
  /** Stops refused so far, and how many may be. */
  refusals: number
  maxRefusals: number
  /** Some call wrote since the last refusal (its verdict aside); true before the first. */
  wroteSinceRefusal: boolean
  limits: MessageLimits
}

/**
 * Decide a turn's stop: keep every held write, refuse the stop, or undo the
 * unfinished change. Refused at most `maxRefusals` times, and again only
 * when the model wrote since the last refusal: a stop with nothing written
 * since (it answered, or only read) is not asked again, its change is undone.
 */
export function judgeStop<W extends HeldFiles>({ failed, held, open, refusals, maxRefusals, wroteSinceRefusal, limits }: StopOptions<W>): StopDecision<W> {
  if (!failed) return { kind: 'keep' }
  const group = groupOf(held, open, failed)
  if (refusals >= maxRefusals) return { kind: 'undo', group, why: 'refusals spent' }
  if (refusals > 0 && !wroteSinceRefusal) return { kind: 'undo', group, why: 'nothing written' }
  const attempt = refusals + 1
  return {
    kind: 'refuse', group, attempt,
    notice: `stop refused (${attempt} of ${maxRefusals}): ${failed.check} found ${failed.regressions.length} problem${failed.regressions.length === 1 ? '' : 's'} the turn began without`,
    text: stopRefusal(failed, group.map(w => ({ tool: w.tool, files: w.files })), attempt, maxRefusals, limits),
  }
}

/**
 * The unfinished change: every held write kept for now, and every later
 * one that touched a file the group touched or a file that is broken
 * (an importer updated for it). Writes of unrelated files stay.
 */
function groupOf<W extends HeldFiles>(held: readonly W[], open: readonly Problem[], failed: CheckVerdict): W[] {
  const files = new Set([...failed.regressions, ...open].map(p => p.file))
  const group: W[] = []
  for (const w of held) {
    if (!w.debt && !w.files.some(f => files.has(f))) continue
    group.push(w)
    for (const f of w.files) files.add(f)
  }
  return group
}

/**
 * What `now` has that `base` did not, as the judging rules blame it
 * (`touched`: the files the turn's writes changed): the problems a turn's
 * earlier writes left open, as last measured. A check not measured now
 * (its state reset after a partial run) adds nothing.
 */
export function worseThan(base: ReadonlyMap<Check, AcceptedState>, now: ReadonlyMap<Check, AcceptedState>, rules: JudgeRules, touched: ReadonlySet<string>): Problem[] {
  const out: Problem[] = []
  for (const [check, before] of base) {
    const state = now.get(check)
    if (!state?.measured || !before.measured || check.advisory) continue
    out.push(...before.compare({ status: 'ok', problems: [...state.problems], scope: 'all' }, rules, touched).regressions)
  }
  return out
}
