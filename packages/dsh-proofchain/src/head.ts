import { readFileSync } from 'node:fs'
import { writeFileAtomicSync } from 'dsh-common'

/**
 * The chain's last written entry, kept beside it (`proofchain.head.json`)
 * and replaced atomically after every batch. A hash chain alone cannot
 * tell that its newest entries were cut off; with the head record,
 * `verify` can. `frozen` is set (and the record never updated again) once
 * an appender finds the file no longer reaches the recorded head, so the
 * evidence survives later appends.
 */
export interface HeadRecord {
  seq: number
  hash: string
  time: number
  frozen?: string
}

/** `<dir>/proofchain.head.json` for `<dir>/proofchain.jsonl`. */
export function headPath(chainFile: string): string {
  return chainFile.replace(/\.jsonl$/, '') + '.head.json'
}

/** The head record, undefined when there is none, or 'corrupt' when it cannot be read. */
export function readHeadRecord(chainFile: string): HeadRecord | undefined | 'corrupt' {
  let text: string
  try {
    text = readFileSync(headPath(chainFile), 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  try {
    const value = JSON.parse(text) as Partial<HeadRecord>
    if (Number.isSafeInteger(value.seq) && typeof value.hash === 'string' && typeof value.time === 'number') return value as HeadRecord
  } catch {
    // Falls through: an unreadable head record is reported as corrupt.
  }
  return 'corrupt'
}

export function writeHeadRecord(chainFile: string, head: HeadRecord, fsync: boolean): void {
  writeFileAtomicSync(headPath(chainFile), JSON.stringify(head) + '\n', { fsync })
}

/**
 * Under the chain's lock, before appending after `tail`: does the file
 * still reach the entry the head record says was written last? If not,
 * its newest entries were cut off (or replaced); the record is frozen,
 * never updated again, so `verify` keeps reporting it, and the append goes
 * on after the file's true tail. Returns whether to update the record
 * after the batch, and a warning to pass on.
 */
export function reconcileHeadRecord(chainFile: string, tail: { seq: number; hash: string }, fsync: boolean): { update: boolean; warning?: string } {
  const recorded = readHeadRecord(chainFile)
  if (recorded === 'corrupt') return { update: false, warning: `${chainFile}: its head record cannot be read; it is left as found (run dsh proof verify)` }
  if (!recorded) return { update: true }
  if (recorded.frozen) return { update: false }
  const cut = recorded.seq > tail.seq
  if (!cut && !(recorded.seq === tail.seq && recorded.hash !== tail.hash)) return { update: true }
  const frozen = cut
    ? `the file ended at seq ${tail.seq} although seq ${recorded.seq} had been written`
    : `seq ${tail.seq} in the file is not the entry that was written`
  writeHeadRecord(chainFile, { ...recorded, frozen }, fsync)
  return { update: false, warning: `${chainFile}: ${frozen}; the head record is frozen as evidence (run dsh proof verify)` }
}
