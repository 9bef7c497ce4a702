import type { SessionEventMap } from 'dsh-session'
import type {} from 'dsh-claims'
import type { VerifyLearning, VerifyResult } from 'dsh-dstvalid'
import type { RestoredInfo } from 'dsh-snapshot'
import type { ProofInput } from './types.ts'

/*
 * The events a proof comes from. Their owners (dsh-dstvalid, dsh-snapshot,
 * dsh-claims) declare them; this package imports their types only, never
 * their code, so it works with any of them absent. Every mapper still reads
 * its input defensively and returns no proof for a payload it cannot read.
 */

/** Data of the `claims/checkpoint` session-log event (dsh-claims); read defensively all the same. */
type ClaimsCheckpoint = SessionEventMap['claims/checkpoint']

const SUBJECT_MAX = 240

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string' && v.trim() !== '') : []
}

/** One-line subject: whitespace runs collapsed, capped. */
export function toSubject(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length <= SUBJECT_MAX ? flat : `${flat.slice(0, SUBJECT_MAX - 1)}…`
}

/** `check` as a kind: a lowercase word, or `check` when it is not one. */
function toKind(check: string): string {
  const kind = check.trim().toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '')
  return !kind || kind === 'anchor' ? 'check' : kind
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`
}

/**
 * `verify/result` → one proof. Subject `<check> <paths…>`; ok for `pass`,
 * fail for `fail` and `rolled-back`, none for `error` (not judged); the detail says what the model must
 * know: whether its write was undone, and the new problems.
 */
export function proofFromVerifyResult(result: VerifyResult): ProofInput[] {
  if (typeof result?.sessionId !== 'string' || typeof result.check !== 'string') return []
  const paths = strings(result.paths)
  const tool = typeof result.tool === 'string' && result.tool ? result.tool : 'a write'
  const subject = toSubject([result.check, ...paths].join(' '))
  const problems = strings(result.newProblems)
  // A check that could not judge the write (timeout, crash, no baseline) proved
  // nothing either way: it is no proof, and the tool result already said so.
  if (result.outcome === 'error') return []
  if (result.outcome === 'pass') {
    const ms = Number.isFinite(result.durationMs) ? ` (${Math.round(result.durationMs)} ms)` : ''
    // A pass may carry tolerated problems (test-first work): keep them on record as warnings.
    const warnings = problems.length ? `; ${plural(problems.length, 'warning')}: ${problems.join('; ')}` : ''
    return [{ sessionId: result.sessionId, kind: toKind(result.check), subject, outcome: 'ok', detail: `passed after ${tool}${ms}${warnings}` }]
  }
  const what = result.outcome === 'rolled-back' ? `rolled back after ${tool}` : `failed after ${tool}`
  const detail = problems.length ? `${what}: ${plural(problems.length, 'new problem')}: ${problems.join('; ')}` : what
  return [{ sessionId: result.sessionId, kind: toKind(result.check), subject, outcome: 'fail', detail }]
}

/** `verify/learning` → one `write` proof: these paths were written and kept, verified by these checks. */
export function proofFromLearning(learning: VerifyLearning): ProofInput[] {
  const paths = strings(learning?.paths)
  if (typeof learning?.sessionId !== 'string' || !paths.length) return []
  const checks = strings(learning.checks)
  const tool = typeof learning.tool === 'string' && learning.tool ? learning.tool : 'a write'
  return [{
    sessionId: learning.sessionId, kind: 'write', subject: toSubject(`write ${paths.join(' ')}`), outcome: 'ok',
    detail: `kept after ${tool}${checks.length ? `; verified by ${checks.join(', ')}` : ''}`,
  }]
}

/** `snapshot/restored` → one `restore` proof: ok when every file came back, fail naming those that did not. */
export function proofFromRestore(info: RestoredInfo): ProofInput[] {
  if (typeof info?.sessionId !== 'string') return []
  const failed = Array.isArray(info.failed) ? info.failed.filter(f => typeof f?.path === 'string') : []
  const paths = [...new Set([...strings(info.restored), ...strings(info.deleted), ...failed.map(f => f.path)])].sort()
  if (!paths.length) return []
  const reason = typeof info.reason === 'string' && info.reason.trim() ? info.reason.replace(/\s+/g, ' ').trim() : 'rollback'
  const detail = failed.length
    ? `NOT restored: ${failed.map(f => `${f.path} (${String(f.error)})`).join('; ')} — check these files by hand; reason: ${reason}`
    : `restored ${plural(paths.length, 'file')} (${reason})`
  return [{ sessionId: info.sessionId, kind: 'restore', subject: toSubject(`restore ${paths.join(' ')}`), outcome: failed.length ? 'fail' : 'ok', detail }]
}

/** A report item as a string: dsh-claims lists claim lines (or commands); objects are read by their text field. */
function reportItems(value: unknown): string[] {
  if (!Array.isArray(value)) return []
  const out: string[] = []
  for (const item of value) {
    if (typeof item === 'string') out.push(item)
    else if (item && typeof item === 'object') {
      const rec = item as Record<string, unknown>
      const text = [rec.claim, rec.line, rec.text, rec.verified, rec.command].find((v): v is string => typeof v === 'string')
      if (text) out.push(text)
    }
  }
  return out.filter(s => s.trim() !== '')
}

/** Why a verified line is unsupported: an exact listing wins; else a listed command the line contains. */
function markOf(claim: string, marks: [string[], string][]): string | undefined {
  return marks.find(([items]) => items.includes(claim))?.[1] ?? marks.find(([items]) => items.some(item => claim.includes(item)))?.[1]
}

/**
 * `claims/checkpoint` → one `claim` proof per verified and failed line.
 * A verified line is ok unless the report marks it (unseen, failing, no
 * evidence); a line the agent itself listed as failed is a failure.
 */
export function proofFromCheckpoint(sessionId: string, data: ClaimsCheckpoint): ProofInput[] {
  if (typeof sessionId !== 'string' || !data || typeof data !== 'object') return []
  const failed: ProofInput[] = []
  for (const line of strings(data.failed)) {
    failed.push({ sessionId, kind: 'claim', subject: toSubject(`claim ${line}`), outcome: 'fail', detail: 'reported failed by the agent' })
  }
  // Without the report there is nothing the harness checked: verified lines are not proofs.
  if (!data.report || typeof data.report !== 'object') return failed
  const report = data.report
  const marks: [string[], string][] = [
    [reportItems(report.noEvidence), 'claimed verified, but names no command to check it by'],
    [reportItems(report.unseen), 'claimed verified, but its command was not seen run in this session'],
    [reportItems(report.failing), 'claimed verified, but its command failed on its last run'],
    [reportItems(report.unconfirmed), "claimed verified, but its command's exit status was hidden (a pipe, ;, ||)"],
  ]
  const verified: ProofInput[] = []
  for (const line of strings(data.verified)) {
    const subject = toSubject(`claim ${line}`)
    const why = markOf(line, marks)
    verified.push(why
      ? { sessionId, kind: 'claim', subject, outcome: 'fail', detail: why }
      : { sessionId, kind: 'claim', subject, outcome: 'ok', detail: 'claimed verified; its command was seen passing' })
  }
  return [...verified, ...failed]
}
