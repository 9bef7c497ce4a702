import { closeSync, fstatSync, fsyncSync, openSync, readSync, renameSync, rmSync, writeSync } from 'node:fs'
import { dirname } from 'node:path'
import { atomicTempPath, fsyncDirSync } from 'dsh-common'
import { readLines } from './internal/lines.ts'
import { parseRecordLine, sealAnchor, serializeRecord } from './records.ts'
import type { ProofAnchor, ProofEntry } from './types.ts'

export interface PruneOptions {
  /** Keep about this many bytes of the newest entries (at least one entry is always kept). */
  keepBytes: number
  /** Newest entry per subject (every session) with seq below the cut: see `SummaryIndex.carriedBefore`. */
  carriedBefore: (seq: number) => ProofEntry[]
  /** Cap on carried entries; failures are kept first, then the newest. */
  maxCarried: number
  now: number
  fsync: boolean
}

export interface PruneResult {
  anchor: ProofAnchor
  /** Entries dropped by this prune. */
  dropped: number
  /** Carried subjects left out because of `maxCarried`. */
  forgotten: number
}

/**
 * Cut the oldest entries of a chain file, replacing them with one anchor
 * record, and keep the rest byte for byte (never re-hashed): the first
 * kept entry still links to the last dropped entry's hash, which the
 * anchor records. The new file is written beside the old one and renamed
 * over it, so a crash leaves one or the other. The caller must hold the
 * chain's lock. Returns undefined when there is nothing to cut.
 */
export function pruneChainFile(file: string, options: PruneOptions): PruneResult | undefined {
  const fd = openSync(file, 'r')
  try {
    const size = fstatSync(fd).size
    const target = size - options.keepBytes
    let oldAnchor: ProofAnchor | undefined
    let lastDropped: ProofEntry | undefined
    let dropped = 0
    let cut = -1
    // State before the most recent line, to cut there when no line starts past the target.
    let before: { start: number; lastDropped?: ProofEntry; dropped: number } | undefined
    for (const read of readLines(fd, 0, size)) {
      if (!read.complete) break
      if (!read.text.trim()) continue
      if (lastDropped && read.start >= target) {
        cut = read.start
        break
      }
      const parsed = parseRecordLine(read.text)
      if (!parsed.ok) return undefined // a damaged chain is left for `verify` to name, never rewritten
      before = { start: read.start, lastDropped, dropped }
      if (parsed.record.kind === 'anchor') oldAnchor = parsed.record as ProofAnchor
      else {
        lastDropped = parsed.record as ProofEntry
        dropped++
      }
    }
    if (cut < 0 && before?.lastDropped) {
      // Even the newest entry alone exceeds keepBytes: keep just that one.
      cut = before.start
      lastDropped = before.lastDropped
      dropped = before.dropped
    }
    if (cut < 0 || !lastDropped) return undefined
    let carried = options.carriedBefore(lastDropped.seq + 1)
    let forgotten = 0
    if (carried.length > options.maxCarried) {
      const ranked = [...carried].sort((a, b) => (a.outcome === b.outcome ? b.seq - a.seq : a.outcome === 'fail' ? -1 : 1))
      forgotten = carried.length - options.maxCarried
      carried = ranked.slice(0, options.maxCarried).sort((a, b) => a.seq - b.seq)
    }
    const anchor = sealAnchor({
      seq: lastDropped.seq,
      time: options.now,
      prevHash: lastDropped.hash,
      pruned: (oldAnchor?.pruned ?? 0) + dropped,
      prevAnchor: oldAnchor?.hash ?? null,
      carried,
    })
    writeRewritten(file, fd, serializeRecord(anchor), cut, size, options.fsync)
    return { anchor, dropped, forgotten }
  } finally {
    closeSync(fd)
  }
}

function writeRewritten(file: string, src: number, head: string, from: number, to: number, fsync: boolean) {
  const tmp = atomicTempPath(file)
  const out = openSync(tmp, 'wx', fstatSync(src).mode & 0o777)
  try {
    writeAll(out, Buffer.from(head))
    const buf = Buffer.allocUnsafe(1 << 20)
    for (let pos = from; pos < to;) {
      const n = readSync(src, buf, 0, Math.min(buf.length, to - pos), pos)
      if (n === 0) break
      writeAll(out, buf.subarray(0, n))
      pos += n
    }
    if (fsync) fsyncSync(out)
  } catch (error) {
    closeSync(out)
    rmSync(tmp, { force: true })
    throw error
  }
  closeSync(out)
  try {
    renameSync(tmp, file)
  } catch (error) {
    rmSync(tmp, { force: true })
    throw error
  }
  if (fsync) fsyncDirSync(dirname(file))
}

/** `writeSync` until every byte is written. */
export function writeAll(fd: number, data: Buffer) {
  for (let off = 0; off < data.length;) off += writeSync(fd, data, off, data.length - off)
}
