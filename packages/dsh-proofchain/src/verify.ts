import { closeSync, fstatSync, openSync } from 'node:fs'
import { ChainCursor, type ChainHead } from './cursor.ts'
import { ProofChainError } from './errors.ts'
import { readLines } from './internal/lines.ts'
import { parseRecordLine } from './records.ts'
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
  /** The first bad record; absent when `ok`. */
  problem?: ChainProblem
}

/**
 * Recompute a stored chain from its first line and name the first record
 * that does not verify: a torn or corrupt line, a malformed entry, a hash
 * that does not match the record, a seq/prevHash that does not continue
 * the previous entry, or an anchor that is misplaced or does not verify.
 * Streams the file (constant memory). Never modifies it.
 * @throws ProofChainError when the file does not exist.
 */
export function verifyChainFile(file: string): VerifyReport {
  let fd: number
  try {
    fd = openSync(file, 'r')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new ProofChainError(`no proof chain at ${file}`)
    throw error
  }
  const cursor = new ChainCursor()
  let problem: ChainProblem | undefined
  try {
    const size = fstatSync(fd).size
    for (const read of readLines(fd, 0, size)) {
      if (!read.complete) {
        problem = { line: read.line, kind: 'torn line', message: `the last line has no newline (${read.end - read.start} bytes): a write cut short, or a truncated file` }
        break
      }
      if (!read.text.trim()) continue
      const parsed = parseRecordLine(read.text)
      if (!parsed.ok) {
        problem = { line: read.line, ...(parsed.seq !== undefined ? { seq: parsed.seq } : {}), kind: parsed.kind, message: parsed.message }
        break
      }
      problem = cursor.accept(parsed.record, read.line)
      if (problem) break
    }
  } finally {
    closeSync(fd)
  }
  const anchor = cursor.anchor
  return {
    ok: !problem,
    file,
    entries: cursor.entries,
    ...(cursor.head.seq >= 0 ? { head: cursor.head } : {}),
    ...(anchor ? { anchor: { seq: anchor.seq, prevHash: anchor.prevHash, pruned: anchor.pruned, carried: anchor.carried.length, hash: anchor.hash } } : {}),
    ...(problem ? { problem } : {}),
  }
}

/** One line for people: `line 17 (seq 16): hash mismatch — stored …, recomputed …`. */
export function describeProblem(problem: ChainProblem): string {
  return `line ${problem.line}${problem.seq !== undefined ? ` (seq ${problem.seq})` : ''}: ${problem.kind} — ${problem.message}`
}
