import type { HiddenBy } from './attribution.ts'
import type { ClaimMark, ClaimsReport, FailedRun, RunRecord, StoredCheckpoint } from './types.ts'
import { isClean } from './check.ts'

/** The receipt for a checkpoint with nothing to mark. */
export const CLEAN_RECEIPT = 'Checkpoint recorded.'

const HIDDEN_BY: Record<HiddenBy, string> = {
  pipe: 'a pipe',
  list: 'a later command after `;`',
  or: 'an `||`',
  chain: 'a failed `&&` chain',
  background: 'running in the background',
  control: 'an if/for/while',
  negated: '`!`',
  rollback: 'the rollback of its writes',
}

function code(text: string): string {
  return `\`${text}\``
}

function exitText(run: Pick<RunRecord, 'exitCode'>): string {
  return run.exitCode === null ? 'killed, timed out or not started' : `exit ${run.exitCode}`
}

function where(report: ClaimsReport): string {
  return report.since === 'checkpoint' ? 'since the last checkpoint' : 'in this session'
}

/** One receipt line for a marked verified line, saying what to do about it. */
export function markLine(mark: ClaimMark, report: ClaimsReport): string {
  const head = `- "${mark.claim}": `
  switch (mark.kind) {
    case 'unseen':
      return `${head}${mark.commands.map(code).join(', ')} not seen run ${where(report)} — run it or drop the claim.`
    case 'failing':
      return `${head}last run of ${code(mark.commands[0]!)} did not pass (${exitText(mark.run!)}) — fix it or move the claim to failed.`
    case 'no-evidence':
      return `${head}names no command — add the command that shows it after " — ", or drop the claim.`
    case 'unconfirmed':
      return `${head}${code(mark.commands[0]!)} ran, but its exit status was hidden by ${HIDDEN_BY[mark.run!.hiddenBy ?? 'list']} — run it on its own to confirm.`
  }
}

function failedRunList(runs: readonly FailedRun[], max = 3): string {
  const shown = runs.slice(0, max).map(r => `${code(r.key)} (${r.verdict ? (r.verdict === 'rolled-back' ? 'rolled back' : 'failed, kept') : exitText(r)}${r.stillFailing ? '' : ', later passed'})`)
  return runs.length > max ? `${shown.join(', ')} and ${runs.length - max} more` : shown.join(', ')
}

/** The question about an empty `failed`. */
export function questionLine(report: ClaimsReport): string {
  const n = report.failedRuns.length
  return `- failed is empty, but ${n === 1 ? 'a command' : `${n} commands`} failed ${where(report)}: ${failedRunList(report.failedRuns)}. `
    + 'Did something not work? If so, checkpoint again with it in failed.'
}

/**
 * The tool's answer: `Checkpoint recorded.` when nothing is marked,
 * otherwise `Recorded as given; …` and one line per mark (and the question).
 * `saveError` reports a checkpoint file that could not be written.
 */
export function formatReceipt(report: ClaimsReport, saveError?: string): string {
  const lines: string[] = []
  const m = report.marks.length
  if (isClean(report)) lines.push(CLEAN_RECEIPT)
  else {
    const parts = [m ? `${m} ${m === 1 ? 'claim' : 'claims'} marked for the next agent` : '', report.asked ? 'one question' : ''].filter(Boolean)
    lines.push(`Recorded as given; ${parts.join(', and ')}:`)
    for (const mark of report.marks) lines.push(markLine(mark, report))
    if (report.asked) lines.push(questionLine(report))
  }
  if (saveError) lines.push(`Not saved to the vault (${saveError}); the checkpoint is in the session log only.`)
  return lines.join('\n')
}

/** The inline mark a handoff puts after a verified line. */
export function inlineMark(mark: ClaimMark): string {
  switch (mark.kind) {
    case 'unseen':
      return `[unsupported: ${mark.commands.map(code).join(', ')} not seen run]`
    case 'failing':
      return `[unsupported: last run of ${code(mark.commands[0]!)} did not pass (${exitText(mark.run!)})]`
    case 'no-evidence':
      return '[unsupported: names no command]'
    case 'unconfirmed':
      return `[unsupported: exit status of ${code(mark.commands[0]!)} not seen]`
  }
}

function bullets(items: readonly string[], empty: string): string[] {
  return items.length ? items.map(i => `- ${i}`) : [`- ${empty}`]
}

/**
 * What the next session on the workspace is told: the checkpoint as given,
 * each unsupported verified line marked inline.
 */
export function formatHandoff(stored: StoredCheckpoint): string {
  const marks = new Map(stored.report.marks.map(m => [m.claim, m]))
  const verified = stored.verified.map(line => {
    const mark = marks.get(line)
    return mark ? `${line} ${inlineMark(mark)}` : line
  })
  const failed = bullets(stored.failed, 'none given')
  if (!stored.failed.length && stored.report.failedRuns.length) {
    failed[0] += ` [that session had failing runs: ${failedRunList(stored.report.failedRuns)}]`
  }
  const lines = [
    `Checkpoint left by session ${stored.sessionId} at ${new Date(stored.time).toISOString()}:`,
    `Summary: ${stored.summary}`,
    'Verified:',
    ...bullets(verified, 'none'),
    'Failed:',
    ...failed,
    'Next:',
    ...bullets(stored.next, 'none'),
  ]
  if (stored.report.marks.length) {
    lines.push('Lines marked [unsupported] are not backed by commands the harness saw run; re-check them before building on them.')
  }
  return lines.join('\n')
}
