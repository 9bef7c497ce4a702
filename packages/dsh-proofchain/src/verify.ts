import { closeSync, fstatSync, openSync } from 'node:fs'
import { ChainCursor, short, type ChainHead } from './cursor.ts'
import { ProofChainError } from './errors.ts'
import { readLines } from './internal/lines.ts'
import { parseRecordLine } from './records.ts'
import { headPath, readHeadRecord } from './head.ts'
import { readChainSeal, type ChainSeal } from './seal.ts'
import type { ChainProblem } from './types.ts'

export interface VerifyReport {
  ok: boolean
  file: string
  /** Entries that verified (before the first problem, if any). */
  entries: number
  /** The last verified entry; after an anchor with no entry yet, the anchor's position. */
  head?: ChainHead
  /** The anchor the chain starts from, when it was pruned. */
  anchor?: { seq: number; prevHash: string; pruned: number; carried: number; hash: string }
  /** The head record checked against the chain; absent when there is none (cut-off newest entries then go unnoticed). */
  headRecord?: { seq: number; hash: string; frozen?: string }
  /** The seal in dsh's key store the chain was checked against; absent when this machine never sealed it (or its key store cannot be read). */
  seal?: ChainSeal
  /** The first bad record; absent when `ok`. */
  problem?: ChainProblem
}

/** The chain's seal, or undefined when the key store cannot be read (reported as no seal). */
function sealOf(file: string): ChainSeal | 'forged' | undefined {
  try {
    return readChainSeal(file)
  } catch {
    // The key store is not readable here (another user, a sandbox): no seal to check against.
    return undefined
  }
}

const when = (time: number) => new Date(time).toISOString()

/**
 * Recompute a stored chain from its first line and name the first record
 * that does not verify: a torn or corrupt line, a malformed entry, a hash
 * that does not match the record, a seq/prevHash that does not continue
 * the previous entry, or an anchor that is misplaced or does not verify.
 * Streams the file (constant memory). Never modifies it.
 * @throws ProofChainError when the file does not exist.
 */
export function verifyChainFile(file: string): VerifyReport {
  const recorded = readHeadRecord(file)
  const headRecord = recorded && recorded !== 'corrupt' ? recorded : undefined
  const sealRead = sealOf(file)
  const seal = sealRead === 'forged' ? undefined : sealRead
  const sealField = seal ? { seal } : {}
  let fd: number
  try {
    fd = openSync(file, 'r')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    if (!headRecord && !seal && sealRead !== 'forged') throw new ProofChainError(`no proof chain at ${file}`)
    const message = headRecord
      ? `the chain file is gone, but ${headPath(file)} records seq ${headRecord.seq} as written`
      : seal
        ? `the chain file is gone, but dsh sealed seq ${seal.seq} (${short(seal.hash)}) in it at ${when(seal.time)}: it was removed`
        : 'the chain file is gone, and its seal does not verify with this machine\'s key'
    const problem: ChainProblem = { line: 1, seq: 0, kind: 'missing entries', message }
    return { ok: false, file, entries: 0, ...(headRecord ? { headRecord } : {}), ...sealField, problem }
  }
  const cursor = new ChainCursor()
  let problem: ChainProblem | undefined
  let lastLine = 0
  /** The line of the first entry after the sealed one. */
  let unsealedLine: number | undefined
  /** The same after the entry sealed as next, for a dsh stopped between writing a batch and sealing it. */
  let unsealedAfterNextLine: number | undefined
  let nextSeen = false
  try {
    const size = fstatSync(fd).size
    for (const read of readLines(fd, 0, size)) {
      lastLine = read.line
      if (!read.complete) {
        problem = { line: read.line, kind: 'torn line', message: `the last line has no newline (${read.end - read.start} bytes): a write cut short, or a truncated file` }
        break
      }
      if (!read.text.trim()) {
        problem = { line: read.line, kind: 'corrupt line', message: 'a blank line (the chain never writes one)' }
        break
      }
      const parsed = parseRecordLine(read.text)
      if (!parsed.ok) {
        problem = { line: read.line, ...(parsed.seq !== undefined ? { seq: parsed.seq } : {}), kind: parsed.kind, message: parsed.message }
        break
      }
      problem = cursor.accept(parsed.record, read.line)
      if (problem) break
      const record = parsed.record
      if (headRecord && record.kind !== 'anchor' && record.seq === headRecord.seq && record.hash !== headRecord.hash) {
        problem = { line: read.line, seq: record.seq, kind: 'hash mismatch', message: `not the entry that was written: ${headPath(file)} records hash ${short(headRecord.hash)} for seq ${headRecord.seq}, the file has ${short(record.hash)}` }
        break
      }
      if (seal && record.kind !== 'anchor' && record.seq === seal.seq && record.hash !== seal.hash) {
        problem = { line: read.line, seq: record.seq, kind: 'hash mismatch', message: `not the entry dsh sealed: the seal has hash ${short(seal.hash)} for seq ${seal.seq}, the file has ${short(record.hash)} (rewritten, hashes recomputed)` }
        break
      }
      if (seal && record.kind !== 'anchor' && record.seq > seal.seq) unsealedLine ??= read.line
      if (seal?.next && record.kind !== 'anchor' && record.seq > seal.next.seq) unsealedAfterNextLine ??= read.line
      if (seal?.next && record.kind !== 'anchor' && record.seq === seal.next.seq && record.hash === seal.next.hash) nextSeen = true
    }
  } finally {
    closeSync(fd)
  }
  if (!problem && recorded === 'corrupt') {
    problem = { line: lastLine + 1, kind: 'bad head record', message: `${headPath(file)} cannot be read` }
  }
  if (!problem && headRecord && headRecord.seq > cursor.head.seq) {
    problem = {
      line: lastLine + 1, seq: cursor.head.seq + 1, kind: 'missing entries',
      message: `the chain ends at seq ${cursor.head.seq}, but ${headPath(file)} records seq ${headRecord.seq} as written: entries were removed from the end`,
    }
  }
  if (!problem && sealRead === 'forged') {
    problem = { line: lastLine + 1, kind: 'bad seal', message: 'the seal in dsh\'s key store does not verify with its key' }
  }
  if (!problem && seal?.frozen) {
    problem = { line: lastLine + 1, kind: 'bad seal', message: `frozen as evidence: ${seal.frozen}` }
  }
  if (!problem && seal && seal.seq > cursor.head.seq) {
    problem = {
      line: lastLine + 1, seq: cursor.head.seq + 1, kind: 'missing entries',
      message: `the chain ends at seq ${cursor.head.seq}, but dsh sealed seq ${seal.seq} at ${when(seal.time)}: entries were removed from the end`,
    }
  }
  // A chain ending at the entry sealed as next was written by dsh, which stopped before moving the seal.
  const sealedTo = seal?.next && nextSeen ? seal.next.seq : seal?.seq
  const firstUnsealed = seal?.next && nextSeen ? unsealedAfterNextLine : unsealedLine
  if (!problem && seal && sealedTo !== undefined && firstUnsealed !== undefined) {
    problem = { line: firstUnsealed, seq: sealedTo + 1, kind: 'not sealed', message: `dsh sealed the chain at seq ${sealedTo}; the entries after it (to seq ${cursor.head.seq}) were not sealed by dsh: written by something else, or while dsh could not use its key store` }
  }
  const anchor = cursor.anchor
  return {
    ok: !problem,
    file,
    entries: cursor.entries,
    ...(cursor.head.seq >= 0 ? { head: cursor.head } : {}),
    ...(anchor ? { anchor: { seq: anchor.seq, prevHash: anchor.prevHash, pruned: anchor.pruned, carried: anchor.carried.length, hash: anchor.hash } } : {}),
    ...(headRecord ? { headRecord: { seq: headRecord.seq, hash: headRecord.hash, ...(headRecord.frozen ? { frozen: headRecord.frozen } : {}) } } : {}),
    ...sealField,
    ...(problem ? { problem } : {}),
  }
}

/** One line for people: `line 17 (seq 16): hash mismatch — stored …, recomputed …`. */
export function describeProblem(problem: ChainProblem): string {
  return `line ${problem.line}${problem.seq !== undefined ? ` (seq ${problem.seq})` : ''}: ${problem.kind} — ${problem.message}`
}
