import { closeSync, fdatasyncSync, ftruncateSync, mkdirSync, openSync, unlinkSync, writeSync } from 'node:fs'
import { basename, dirname } from 'node:path'
import { fsyncDirSync } from 'dsh-common'
import { SnapshotError } from './errors.ts'
import { describeRecord, JOURNAL_FORMAT, payloadSize, type JournalHeader, type JournalRecord, type ParsedJournal } from './journal-format.ts'
import { readPayloadFd } from './journal-read.ts'
import { writeAllAt } from './internal/write-all.ts'
import type { JournalOwner } from './owner.ts'
import type { SyncMode } from './types.ts'

const MIN_HEADER = 512

function encodeHeader(header: JournalHeader): Buffer {
  const json = JSON.stringify(header)
  if (Buffer.byteLength(json) + 1 > header.len) throw new SnapshotError('journal', `journal header does not fit in ${header.len} bytes`)
  return Buffer.from(json.padEnd(header.len - 1, ' ') + '\n')
}

/** Append-only writer of one journal file. Synchronous on purpose: a capture must be on disk before `next()` runs the tool. */
export class JournalWriter {
  private _end: number
  private _closed = false

  private constructor(readonly file: string, private _fd: number, private _header: JournalHeader, end: number, private readonly _sync: SyncMode) {
    this._end = end
  }

  /** Create a new journal file (exclusive) with its header, durably. */
  static create(file: string, init: Omit<JournalHeader, 'format' | 'version' | 'gen' | 'len'>, sync: SyncMode): JournalWriter {
    const dir = dirname(file)
    try {
      mkdirSync(dir, { recursive: true })
      const probe = JSON.stringify({ format: JOURNAL_FORMAT, version: 1, gen: 0, len: 0, ...init })
      const len = Math.max(MIN_HEADER, Math.ceil((Buffer.byteLength(probe) + 64) / MIN_HEADER) * MIN_HEADER)
      const header: JournalHeader = { format: JOURNAL_FORMAT, version: 1, gen: 1, len, ...init }
      const fd = openSync(file, 'wx+', 0o600)
      writeSync(fd, encodeHeader(header), 0, len, 0)
      if (sync !== 'off') {
        fdatasyncSync(fd)
        fsyncDirSync(dir)
      }
      return new JournalWriter(file, fd, header, len, sync)
    } catch (error) {
      if (error instanceof SnapshotError) throw error
      throw new SnapshotError('journal', `cannot create snapshot journal ${file}: ${(error as Error).message}`)
    }
  }

  /** Continue a journal read by {@link readJournal} under a new owner (a hot reload in the same process). */
  static adopt(parsed: ParsedJournal, owner: JournalOwner, sync: SyncMode): JournalWriter {
    if (!parsed.header) throw new SnapshotError('journal', `${parsed.file} has no readable header`)
    const header: JournalHeader = { ...parsed.header, owner }
    const fd = openSync(parsed.file, 'r+')
    writeSync(fd, encodeHeader(header), 0, header.len, 0)
    // Drop a torn or damaged tail so appends continue after the last whole record.
    ftruncateSync(fd, parsed.end)
    if (sync !== 'off') fdatasyncSync(fd)
    return new JournalWriter(parsed.file, fd, header, parsed.end, sync)
  }

  get header(): JournalHeader {
    return this._header
  }

  get closed(): boolean {
    return this._closed
  }

  /** Bytes past the header: nonzero means some record was written since the last reset. */
  get used(): number {
    return this._end - this._header.len
  }

  /**
   * Append records (a captured file's bytes right after its record); with
   * `durable` (captures) fsync once unless the mode is `off`, otherwise only
   * in mode `always`. Returns each record's payload offset (undefined without payload).
   */
  append(items: readonly { record: JournalRecord; payload?: Uint8Array }[], durable = false): (number | undefined)[] {
    this.assertOpen()
    const buffers: Uint8Array[] = []
    const offsets: (number | undefined)[] = []
    let at = this._end
    for (const { record, payload } of items) {
      const line = Buffer.from(JSON.stringify({ ...record, g: this._header.gen }) + '\n')
      buffers.push(line)
      at += line.length
      const size = payloadSize(record)
      if (size) {
        if (!payload || payload.length !== size) throw new SnapshotError('journal', `payload of ${describeRecord(record)} is not ${size} bytes`)
        buffers.push(payload, NEWLINE)
        offsets.push(at)
        at += size + 1
      } else {
        offsets.push(undefined)
      }
    }
    try {
      writeAllAt(this._fd, buffers, this._end)
      if (this.mustSync(durable)) fdatasyncSync(this._fd)
    } catch (error) {
      // Whatever part of the batch reached the file is cut off, so the next append starts clean.
      try { ftruncateSync(this._fd, this._end) } catch { /* the write error below is the one to report */ }
      throw new SnapshotError('journal', `cannot write snapshot journal ${this.file}: ${(error as Error).message}`)
    }
    this._end = at
    return offsets
  }

  /** Read and check `size` captured bytes at `offset`. */
  readPayload(offset: number, size: number, sum: number): Buffer {
    this.assertOpen()
    return readPayloadFd(this._fd, this.file, offset, size, sum)
  }

  /** Forget every record: next generation, truncated to the header. */
  reset(): void {
    this.assertOpen()
    if (this._end === this._header.len) return
    this._header = { ...this._header, gen: this._header.gen + 1 }
    try {
      writeSync(this._fd, encodeHeader(this._header), 0, this._header.len, 0)
      ftruncateSync(this._fd, this._header.len)
      if (this.mustSync(false)) fdatasyncSync(this._fd)
    } catch (error) {
      throw new SnapshotError('journal', `cannot reset snapshot journal ${this.file}: ${(error as Error).message}`)
    }
    this._end = this._header.len
  }

  /** Make every record written so far durable (unless the mode is `off`). */
  flush(): void {
    this.assertOpen()
    if (this._sync !== 'off') fdatasyncSync(this._fd)
  }

  close(): void {
    if (this._closed) return
    this._closed = true
    closeSync(this._fd)
  }

  private mustSync(durable: boolean): boolean {
    return this._sync === 'always' || (durable && this._sync === 'capture')
  }

  /** Close and delete the file. */
  remove(): void {
    this.close()
    try {
      unlinkSync(this.file)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
  }

  private assertOpen() {
    if (this._closed) throw new SnapshotError('closed', `snapshot journal ${basename(this.file)} is closed`)
  }
}

const NEWLINE = Buffer.from('\n')

