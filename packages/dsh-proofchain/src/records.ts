import { capText, maskCredentials } from 'dsh-common'
import { hashRecord } from './canonical.ts'
import { ProofChainError } from './errors.ts'
import { toSubject } from './sources.ts'
import type { ProofAnchor, ProofEntry, ProofInput, ProofRecord } from './types.ts'

/** `prevHash` of the first entry of an unpruned chain. */
export const GENESIS = '0'.repeat(64)

const HEX64 = /^[0-9a-f]{64}$/

/** An entry before the chain places it: everything but seq, prevHash and hash. */
export type EntryFields = Omit<ProofEntry, 'seq' | 'prevHash' | 'hash'>

/**
 * Check and tidy a caller's input: a one-line subject, a lowercase kind,
 * a capped detail, a time; credential values masked (`maskCredentials`).
 * @throws ProofChainError for a missing session or subject, a bad outcome, or the reserved kind `anchor`.
 */
export function normaliseInput(input: ProofInput, options: { now: () => number; detailMaxBytes: number }): EntryFields {
  if (typeof input?.sessionId !== 'string' || !input.sessionId) throw new ProofChainError('a proof entry needs a sessionId')
  // A check's output (a test that printed what it found) may hold a credential value: never recorded.
  const subject = typeof input.subject === 'string' ? toSubject(maskCredentials(input.subject)) : ''
  if (!subject) throw new ProofChainError('a proof entry needs a subject')
  if (input.outcome !== 'ok' && input.outcome !== 'fail') throw new ProofChainError(`outcome must be "ok" or "fail", not ${JSON.stringify(input.outcome)}`)
  const kind = String(input.kind ?? '').trim().toLowerCase() || 'check'
  if (kind === 'anchor') throw new ProofChainError('kind "anchor" is reserved for pruning records')
  const time = typeof input.time === 'number' && Number.isFinite(input.time) ? input.time : options.now()
  const detail = capText(typeof input.detail === 'string' ? maskCredentials(input.detail) : '', options.detailMaxBytes)
  return { time, sessionId: input.sessionId, kind, subject, outcome: input.outcome, detail }
}

/** Build an entry and compute its hash. */
export function sealEntry(fields: Omit<ProofEntry, 'hash'>): ProofEntry {
  const entry = {
    seq: fields.seq, time: fields.time, sessionId: fields.sessionId, kind: fields.kind,
    subject: fields.subject, outcome: fields.outcome, detail: fields.detail, prevHash: fields.prevHash,
  }
  return { ...entry, hash: hashRecord(entry) }
}

/** Build an anchor and compute its hash (carried entries keep their own hashes). */
export function sealAnchor(fields: Omit<ProofAnchor, 'hash' | 'kind'>): ProofAnchor {
  const anchor = {
    kind: 'anchor' as const, seq: fields.seq, time: fields.time, prevHash: fields.prevHash,
    pruned: fields.pruned, prevAnchor: fields.prevAnchor, carried: fields.carried,
  }
  return { ...anchor, hash: hashRecord(anchor) }
}

/** One JSONL line (with its newline), fields in a fixed, readable order. */
export function serializeRecord(record: ProofRecord): string {
  return JSON.stringify(record) + '\n'
}

export function isAnchor(record: ProofRecord): record is ProofAnchor {
  return record.kind === 'anchor'
}

export type ParsedLine =
  | { ok: true; record: ProofRecord }
  | { ok: false; kind: 'corrupt line' | 'malformed entry'; message: string; seq?: number }

/** Parse one stored line and check its shape (not its hash or link). */
export function parseRecordLine(line: string): ParsedLine {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch (error) {
    return { ok: false, kind: 'corrupt line', message: `not JSON (${(error as Error).message})` }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, kind: 'corrupt line', message: 'not a JSON object' }
  }
  const record = value as Record<string, unknown>
  const seq = Number.isSafeInteger(record.seq) ? (record.seq as number) : undefined
  const bad = record.kind === 'anchor' ? anchorShapeError(record) : entryShapeError(record)
  if (bad) return { ok: false, kind: 'malformed entry', message: bad, seq }
  return { ok: true, record: value as ProofRecord }
}

function entryShapeError(r: Record<string, unknown>): string | undefined {
  if (!Number.isSafeInteger(r.seq) || (r.seq as number) < 0) return 'seq is not a non-negative integer'
  if (typeof r.time !== 'number' || !Number.isFinite(r.time)) return 'time is not a number'
  for (const key of ['sessionId', 'kind', 'subject', 'detail'] as const) {
    if (typeof r[key] !== 'string') return `${key} is not a string`
  }
  if (r.outcome !== 'ok' && r.outcome !== 'fail') return 'outcome is neither "ok" nor "fail"'
  if (typeof r.prevHash !== 'string' || !HEX64.test(r.prevHash)) return 'prevHash is not a SHA-256 hex digest'
  if (typeof r.hash !== 'string' || !HEX64.test(r.hash)) return 'hash is not a SHA-256 hex digest'
  return undefined
}

function anchorShapeError(r: Record<string, unknown>): string | undefined {
  if (!Number.isSafeInteger(r.seq) || (r.seq as number) < 0) return 'anchor seq is not a non-negative integer'
  if (typeof r.time !== 'number' || !Number.isFinite(r.time)) return 'anchor time is not a number'
  if (typeof r.prevHash !== 'string' || !HEX64.test(r.prevHash)) return 'anchor prevHash is not a SHA-256 hex digest'
  if (!Number.isSafeInteger(r.pruned) || (r.pruned as number) < 1) return 'anchor pruned is not a positive integer'
  if (r.prevAnchor !== null && (typeof r.prevAnchor !== 'string' || !HEX64.test(r.prevAnchor))) return 'anchor prevAnchor is neither null nor a digest'
  if (!Array.isArray(r.carried)) return 'anchor carried is not an array'
  for (const [i, carried] of (r.carried as unknown[]).entries()) {
    if (typeof carried !== 'object' || carried === null) return `anchor carried[${i}] is not an object`
    const bad = entryShapeError(carried as Record<string, unknown>)
    if (bad) return `anchor carried[${i}]: ${bad}`
  }
  if (typeof r.hash !== 'string' || !HEX64.test(r.hash)) return 'anchor hash is not a SHA-256 hex digest'
  return undefined
}
