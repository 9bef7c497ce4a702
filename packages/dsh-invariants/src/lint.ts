import { streamJsonl } from 'dsh-common'
import { formatRecent } from './error.ts'
import { TraceChecker, type TraceCheckerOptions } from './trace.ts'
import type { Violation } from './types.ts'

/** A violation found in a stored log, with the line it is on. */
export interface LintViolation extends Violation {
  line: number
}

export interface LintReport {
  file: string
  /** Records (non-blank lines) checked. */
  events: number
  /** Every violation in the log, in log order. */
  violations: LintViolation[]
}

/**
 * Check a stored session log (JSON Lines, one event a line) against the
 * event contract and collect **every** violation, each with its line.
 * Streams the file; a torn last line (a crash mid-write) is skipped.
 * @throws JsonlError (from dsh-common) naming the corrupt line, or the fs error when the file cannot be read.
 */
export async function lintLog(file: string, options?: TraceCheckerOptions): Promise<LintReport> {
  const checker = new TraceChecker(options)
  const violations: LintViolation[] = []
  for await (const [record, line] of streamJsonl(file)) {
    for (const v of checker.check(record)) violations.push({ ...v, line })
  }
  return { file, events: checker.count, violations }
}

/** Said of a log with no event: a session's log is written from its first event on, so nothing of it was saved. */
const EMPTY_LOG = 'NOT ok: no event in it — nothing of the session was saved (a log is written from its first event on; was the disk full?)'

/**
 * Human-readable report, one line per violation, then a summary line:
 * `log.jsonl:12: seq 11 turn/start [turn-overlap] turn 1 starts while turn 0 is open (last events: …)`
 */
export function formatLintReport(report: LintReport): string {
  const lines = report.violations.map(v =>
    `${report.file}:${v.line}: seq ${v.seq ?? '?'} ${v.type} [${v.rule}] ${v.message} (last events: ${formatRecent(v.recent)})`)
  const n = report.violations.length
  if (report.events === 0) lines.push(`${report.file}: ${EMPTY_LOG}`)
  else lines.push(n
    ? `${report.file}: ${n} violation${n === 1 ? '' : 's'} in ${report.events} events`
    : `${report.file}: ok, ${report.events} events, no violations`)
  return lines.join('\n') + '\n'
}
