import { hashRecord } from './canonical.ts'
import { GENESIS, isAnchor } from './records.ts'
import type { ChainProblem, ProofAnchor, ProofEntry, ProofRecord } from './types.ts'

/** Where the next entry must attach: its seq and the hash it must link to. */
export interface ChainHead {
  /** seq of the last entry (or of the last pruned entry, right after an anchor); -1 for an empty chain. */
  seq: number
  hash: string
}

export const EMPTY_HEAD: ChainHead = Object.freeze({ seq: -1, hash: GENESIS })

/**
 * Walks a chain record by record and names the first that does not
 * belong: a recomputed hash differing from the stored one, a seq or
 * prevHash not continuing the previous entry, or an anchor that is not the
 * first record or does not verify. Shared by `verifyChainFile` and by the
 * chain's own loading, so both judge a file the same way.
 */
export class ChainCursor {
  head: ChainHead = EMPTY_HEAD
  anchor?: ProofAnchor
  /** Entries accepted (anchors and carried entries not counted). */
  entries = 0
  private _records = 0

  /**
   * Check `record` (read from 1-based `line`); on success advance and return
   * undefined. `sealed` skips recomputing the hash of an entry this process
   * has just sealed itself (its link is still checked).
   */
  accept(record: ProofRecord, line: number, sealed = false): ChainProblem | undefined {
    const problem = isAnchor(record) ? this.checkAnchor(record, line) : this.checkEntry(record, line, sealed)
    if (problem) return problem
    this._records++
    if (isAnchor(record)) {
      this.anchor = record
      this.head = { seq: record.seq, hash: record.prevHash }
    } else {
      this.entries++
      this.head = { seq: record.seq, hash: record.hash }
    }
    return undefined
  }

  private checkAnchor(anchor: ProofAnchor, line: number): ChainProblem | undefined {
    const bad = (message: string): ChainProblem => ({ line, seq: anchor.seq, kind: 'bad anchor', message })
    if (this._records > 0) return bad('an anchor may only be the first record of the chain')
    const recomputed = hashRecord(anchor)
    if (recomputed !== anchor.hash) return bad(`anchor hash mismatch: stored ${short(anchor.hash)}, recomputed ${short(recomputed)}`)
    for (const carried of anchor.carried) {
      if (carried.seq > anchor.seq) return bad(`carried entry seq ${carried.seq} is newer than the anchor (seq ${anchor.seq})`)
      const own = hashRecord(carried)
      if (own !== carried.hash) return bad(`carried entry seq ${carried.seq}: hash mismatch (stored ${short(carried.hash)}, recomputed ${short(own)})`)
    }
    return undefined
  }

  private checkEntry(entry: ProofEntry, line: number, sealed: boolean): ChainProblem | undefined {
    const recomputed = sealed ? entry.hash : hashRecord(entry)
    if (recomputed !== entry.hash) {
      return { line, seq: entry.seq, kind: 'hash mismatch', message: `stored ${short(entry.hash)}, recomputed ${short(recomputed)}` }
    }
    const expectSeq = this.head.seq + 1
    if (this._records === 0 && (entry.seq !== 0 || entry.prevHash !== GENESIS)) {
      return { line, seq: entry.seq, kind: 'broken link', message: `the chain starts at seq ${entry.seq} with no anchor (expected seq 0 linked to genesis)` }
    }
    if (entry.seq !== expectSeq) {
      return { line, seq: entry.seq, kind: 'broken link', message: `seq ${entry.seq} where ${expectSeq} was expected` }
    }
    if (entry.prevHash !== this.head.hash) {
      const after = this.anchor && this.head.seq === this.anchor.seq ? 'the anchor' : `seq ${this.head.seq}`
      return { line, seq: entry.seq, kind: 'broken link', message: `prevHash ${short(entry.prevHash)} does not match ${after} (${short(this.head.hash)})` }
    }
    return undefined
  }
}

export function short(hash: string): string {
  return hash.length > 12 ? `${hash.slice(0, 12)}…` : hash
}
