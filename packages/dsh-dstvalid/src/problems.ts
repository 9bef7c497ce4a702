import { stripAnsi } from './run.ts'
import type { Problem } from './types.ts'

/**
 * Normalise a diagnostic message for comparison: one line, collapsed
 * whitespace, no line:column positions (code that moved is not a new problem).
 */
export function normaliseMessage(message: string): string {
  return stripAnsi(message)
    .replace(/\r?\n\s*/g, ' ')
    .replace(/(\.\w+):\d+(:\d+)?/g, '$1')
    .replace(/\(\d+,\d+\)/g, '')
    .replace(/\s+/g, ' ')
    .trim()
}

/** A diagnostic problem with its key (file + code + normalised message). */
export function diagnostic(check: string, file: string, line: number | undefined, code: string, message: string): Problem {
  const text = normaliseMessage(message)
  return { check, kind: 'diagnostic', key: `${file}\u0000${code}\u0000${text}`, file, line, code, message: text }
}

/** A failing-test problem; `id` identifies the test across runs. */
export function failingTest(check: string, id: string, file: string, line: number | undefined, message: string): Problem {
  return { check, kind: 'test', key: id, file, line, code: 'FAIL', message: normaliseLine(message) }
}

/**
 * How much longer a test that failed by its time limit is given when it is
 * re-run alone: one slowed by load passes, one the write made hang still
 * times out.
 */
export const TIMEOUT_FACTOR = 4

/** The limit a timed-out test is re-run with. */
export function longerLimit(limitMs: number): number {
  return limitMs * TIMEOUT_FACTOR
}

function normaliseLine(text: string): string {
  return stripAnsi(text).replace(/\s+/g, ' ').trim()
}

/** `file:line code message` — the line the model sees for one problem. */
export function formatProblem(p: Problem): string {
  const where = p.file ? `${p.file}${p.line !== undefined ? `:${p.line}` : ''} ` : ''
  const message = p.message.length > 300 ? `${p.message.slice(0, 299)}…` : p.message
  return `${where}${p.code} ${message}`
}

/** Count problems by key. */
function countByKey(problems: readonly Problem[]): Map<string, number> {
  const counts = new Map<string, number>()
  for (const p of problems) counts.set(p.key, (counts.get(p.key) ?? 0) + 1)
  return counts
}

/**
 * Problems of `after` that `before` did not have, as a multiset: a second
 * copy of an existing diagnostic is new too. Among equal keys, occurrences on
 * lines `before` did not report are blamed first.
 */
export function newProblems(before: readonly Problem[], after: readonly Problem[]): Problem[] {
  const budget = countByKey(before)
  const oldLines = new Set(before.map(p => `${p.key}\u0000${p.line}`))
  const ordered = [...after].sort((a, b) => Number(oldLines.has(`${b.key}\u0000${b.line}`)) - Number(oldLines.has(`${a.key}\u0000${a.line}`)))
  // Consume the budget with the occurrences most likely to be the old ones.
  const kept = new Set<Problem>()
  for (const p of ordered) {
    const left = budget.get(p.key) ?? 0
    if (left > 0) {
      budget.set(p.key, left - 1)
      kept.add(p)
    }
  }
  return after.filter(p => !kept.has(p))
}
