import type { RawSessionEvent } from 'dsh-session'
import { ActivityRecorder, type Activity, type ActivityOptions } from './activity.ts'
import { formatKey, type CommandKey } from './command-key.ts'
import { evidenceOf } from './evidence.ts'
import type { Checkpoint, ClaimMark, ClaimsReport, FailedRun, RunRecord } from './types.ts'

/** The last run a claim's key is answered by: the exact key, or any run of the program for a bare program. */
export function lastRunOf(key: CommandKey, activity: Activity): RunRecord | undefined {
  return key.arg === undefined ? activity.lastByProgram.get(key.program) : activity.runs.get(formatKey(key))
}

function ranIn(activity: Activity) {
  return (key: CommandKey) => lastRunOf(key, activity) !== undefined
}

/**
 * Hold a checkpoint's verified lines against the activity record. A line is
 * marked `failing` when one of its commands' last run did not pass, else
 * `unseen` when one never ran after the cut-off, else `unconfirmed` when one
 * last ran with its status hidden; a line naming no command is `noEvidence`.
 * When `failed` is empty but shell runs of the agent failed (or a check
 * failed or rolled back one of its writes), the report asks
 * about it — unless this session's log already holds the question.
 */
export function checkClaims(checkpoint: Pick<Checkpoint, 'verified' | 'failed'>, activity: Activity, sessionId: string): ClaimsReport {
  const marks: ClaimMark[] = []
  for (const claim of checkpoint.verified) {
    const mark = judgeClaim(claim, activity)
    if (mark) marks.push(mark)
  }
  const failedRuns: FailedRun[] = [...activity.failures.values()]
    .sort((a, b) => a.seq - b.seq)
    .map(run => ({
      key: run.key, exitCode: run.exitCode,
      stillFailing: (run.source === 'verdict' ? activity.verdicts : activity.runs).get(run.key)?.outcome === 'fail',
      ...(run.verdict ? { verdict: run.verdict } : {}),
    }))
  const asked = checkpoint.failed.length === 0 && failedRuns.length > 0 && !activity.questioned
  const byKind = (kind: ClaimMark['kind']) => marks.filter(m => m.kind === kind).map(m => m.claim)
  return {
    sessionId,
    unseen: byKind('unseen'),
    failing: byKind('failing'),
    noEvidence: byKind('no-evidence'),
    unconfirmed: byKind('unconfirmed'),
    questioned: activity.questioned || asked,
    asked,
    failedRuns,
    marks,
    since: activity.since,
    cutoff: activity.cutoff,
  }
}

function judgeClaim(claim: string, activity: Activity): ClaimMark | undefined {
  const evidence = evidenceOf(claim, ranIn(activity))
  if (!evidence.keys.length) return { claim, kind: 'no-evidence', commands: [] }
  const unseen: string[] = []
  let failing: RunRecord | undefined
  let hidden: RunRecord | undefined
  for (const key of evidence.keys) {
    const run = lastRunOf(key, activity)
    if (!run) unseen.push(formatKey(key))
    else if (run.outcome === 'fail') failing ??= run
    else if (run.outcome === 'unknown') hidden ??= run
  }
  if (failing) return { claim, kind: 'failing', commands: [failing.key], run: failing }
  if (unseen.length) return { claim, kind: 'unseen', commands: unseen }
  if (hidden) return { claim, kind: 'unconfirmed', commands: [hidden.key], run: hidden }
  return undefined
}

/** True when the report marks nothing and asks nothing. */
export function isClean(report: ClaimsReport): boolean {
  return report.marks.length === 0 && !report.asked
}

/**
 * True when every command the `verify` string names ran after seq `after`
 * (exclusive; `-1` for the whole session) and its last run passed. False
 * when it names no command. `events` is one session's log, or a merged
 * stream whose events carry `sessionId` (other sessions' events are skipped).
 * @example passed('auth works — pnpm vitest run auth', session.events, session.id, -1)
 */
export function passed(
  verify: string,
  events: Iterable<RawSessionEvent>,
  sessionId: string,
  after: number,
  options: Pick<ActivityOptions, 'isShellTool'> = {},
): boolean {
  const recorder = new ActivityRecorder({ ...options, after, sessionId })
  for (const event of events) recorder.add(event)
  const activity = recorder.activity
  const { keys } = evidenceOf(verify, ranIn(activity))
  return keys.length > 0 && keys.every(key => lastRunOf(key, activity)?.outcome === 'pass')
}
