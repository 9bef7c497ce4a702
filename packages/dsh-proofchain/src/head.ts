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
