import { crc32 } from 'node:zlib'
import type { JournalOwner } from './owner.ts'
import type { CaptureEntry } from './types.ts'

/**
 * The on-disk journal of one session's snapshots: a fixed-size header line,
 * then records appended in order. A record is one JSON line; a captured
 * file's bytes follow its line raw, then a newline. Every record carries
 * the header's generation `g`: when no scope is open the journal is reset
 * by bumping the generation and truncating, so a reset that a crash only
 * half persisted leaves stale records that readers ignore, never resurrect.
 */
export const JOURNAL_FORMAT = 'dsh-snapshot-journal'
export const JOURNAL_SUFFIX = '.journal'

export interface JournalHeader {
  format: typeof JOURNAL_FORMAT
  version: 1
  /** Generation; records of another generation are stale. */
  gen: number
  /** Byte length of the header line (padded), where records start. */
  len: number
  sessionId: string
  /** Real path of the workspace root the entries are relative to. */
  root: string
  owner: JournalOwner
  created: number
  /**
   * The tools run in another process (an agent's, seen through its hooks):
   * a scope whose post record never came is not rolled back at recovery
   * (what the call left was never seen; a later write may be on disk).
   */
  elsewhere?: true
}

export type Verdict = 'commit' | 'rollback'

/** One journal record, as written (`g` is added by the writer). */
export type JournalRecord =
  | { t: 'open'; scope: string; key: string; callIds: string[]; step?: number; turn?: number; time: number }
  | { t: 'join'; scope: string; callId: string }
  | { t: 'cap'; scope: string; entry: CaptureEntry }
  | { t: 'verdict'; scope: string; verdict: Verdict; reason?: string }
  /** A rollback finished (its restores are durable); recovery must not repeat it. */
  | { t: 'done'; scope: string; failed: number }
  /** A shell call's changes were recorded as captures of their own; its `manifest` entry is spent. */
  | { t: 'measured'; scope: string }
  /** What the call left (its tool returned): each captured path's content hash then (null: absent). Recovery restores only a path still so. */
  | { t: 'post'; scope: string; items: { path: string; sha: string | null }[] }

export interface ParsedRecord {
  record: JournalRecord
  /** Where a captured file's bytes start. */
  payloadOffset?: number
}

export interface ParsedJournal {
  file: string
  header?: JournalHeader
  records: ParsedRecord[]
  /** Offset just past the last whole record. */
  end: number
  /** The file ended inside a record (a write cut short by a crash); that record was dropped. */
  torn: boolean
  /** A whole record that could not be read; everything from it on was ignored. */
  damage?: string
  /** The torn last record is a capture whose line is whole and whose bytes end early: what of it there is. */
  tornCapture?: { path: string; size: number; have: number; offset: number }
  /** The last record is a capture whose bytes are all there but lack the closing newline: kept (its checksum is checked on use). */
  unframed?: string
  /**
   * The file ends inside a record's line (no newline, not a whole record):
   * where the line starts, the bytes of it there are, and the record type its
   * text names (`cap`, `verdict`…) when the cut came after it.
   */
  tornLine?: { offset: number; bytes: number; type?: string }
}

/** Bytes of captured content that follow a record's line. */
export function payloadSize(record: JournalRecord): number {
  return record.t === 'cap' && record.entry.kind === 'file' ? record.entry.size : 0
}

/** A record, named for messages. */
export function describeRecord(record: JournalRecord): string {
  return record.t === 'cap' ? `capture of ${record.entry.path}` : `${record.t} record`
}

/** Checksum stored with each captured file. */
export function checksum(data: Uint8Array): number {
  return crc32(data)
}

