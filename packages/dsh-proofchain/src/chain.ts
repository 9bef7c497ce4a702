import { closeSync, fstatSync, fsyncSync, ftruncateSync, mkdirSync, openSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import { fsyncDirSync, withFileLock, type FileLockOptions } from 'dsh-common'
import { ChainCursor, type ChainHead } from './cursor.ts'
import { readLines } from './internal/lines.ts'
import { pruneChainFile, writeAll } from './prune.ts'
import { isAnchor, normaliseInput, parseRecordLine, sealEntry, serializeRecord, type EntryFields } from './records.ts'
import { SummaryIndex, type ProofSummary, type SummaryOptions } from './summary.ts'
import { describeProblem } from './verify.ts'
import { reconcileHeadRecord, writeHeadRecord } from './head.ts'
import { reconcileSeal, writeChainSeal } from './seal.ts'
import type { ChainProblem, ProofAnchor, ProofEntry, ProofInput } from './types.ts'

export interface ProofChainOptions {
  /** The JSONL file, e.g. `<vault>/proofchain.jsonl`. */
  file: string
  /** fsync each appended batch (and a prune's rename) before resolving. Default false. */
  fsync?: boolean
  /** Cap on an entry's `detail`, in UTF-8 bytes (default 1024). */
  detailMaxBytes?: number
  /** Prune when the file grows past this many bytes, down to about half; 0 (default) never prunes. */
  maxBytes?: number
  /** Cap on subjects an anchor carries over a prune (default 1000). */
  maxCarried?: number
  /** Cross-process lock (`<file>.lock`) timing. */
  lock?: FileLockOptions
  /** Clock seam (default `Date.now`). */
  now?: () => number
  /** Told about damage found while reading (a tampered line, a torn tail repaired, a prune). */
  onWarning?: (message: string) => void
  /** Seal each batch's newest entry in dsh's key store (`seal.ts`). Default true. */
  seal?: boolean
}

interface Pending {
  fields: EntryFields
  resolve: (entry: ProofEntry) => void
  reject: (error: unknown) => void
}

/** Upper bound on entries written under one lock hold. */
const MAX_BATCH = 4096

/**
 * An append-only, hash-linked proof chain in one JSONL file, shared safely
 * by several processes. Appends are queued and written in batches under a
 * cross-process lock; before each batch the chain re-reads whatever other
 * processes appended (or a prune rewrote), so the next entry always links
 * to the true tail and the chain never forks. History is never re-hashed.
 * `index` holds the newest entry per subject for O(subjects) summaries.
 *
 * @example
 * const chain = ProofChain.open({ file: '.dsh/proofchain.jsonl' })
 * await chain.append({ sessionId: 's1', kind: 'typecheck', subject: 'typecheck src/a.ts', outcome: 'ok' })
 * console.log(chain.summary('s1', { budgetTokens: 400 }).text)
 */
export class ProofChain {
  readonly file: string
  readonly index = new SummaryIndex()
  private readonly _options: ProofChainOptions
  private _cursor = new ChainCursor()
  private _ino = -1
  private _offset = 0
  private _line = 0
  private _problem?: ChainProblem
  private _pending: Pending[] = []
  private _draining?: Promise<void>
  private _dirReady = false
  /** The head record this process last wrote, valid while nobody else touched the file since. */
  private _headWritten?: { seq: number; hash: string; offset: number; ino: number }

  private constructor(options: ProofChainOptions) {
    this.file = options.file
    this._options = options
  }

  /** Open (and read) a chain; a missing file is an empty chain, created by the first append. */
  static open(options: ProofChainOptions): ProofChain {
    const chain = new ProofChain(options)
    chain.sync()
    return chain
  }

  /** The newest entry's seq and hash as last read or written (seq -1 when empty). */
  get head(): ChainHead {
    return this._cursor.head
  }

  /** The anchor the file starts from, when it has been pruned. */
  get anchor(): ProofAnchor | undefined {
    return this._cursor.anchor
  }

  /** The first damage seen while reading the file, if any (`verifyChainFile` names it authoritatively). */
  get problem(): ChainProblem | undefined {
    return this._problem
  }

  /** Appends not yet written. */
  get pendingCount(): number {
    return this._pending.length
  }

  /**
   * Queue one entry; resolves with it once it is written (with its seq and
   * hash). Entries queued together are written in one batch.
   * @throws ProofChainError (as a rejection) for an entry without session or subject.
   */
  append(input: ProofInput): Promise<ProofEntry> {
    let fields: Pending['fields']
    try {
      fields = normaliseInput(input, { now: this._options.now ?? Date.now, detailMaxBytes: this._options.detailMaxBytes ?? 1024 })
    } catch (error) {
      return Promise.reject(error)
    }
    return new Promise<ProofEntry>((resolve, reject) => {
      this._pending.push({ fields, resolve, reject })
      void this.drain()
    })
  }

  /** Queue several entries, written in order (usually in one batch). */
  appendMany(inputs: readonly ProofInput[]): Promise<ProofEntry[]> {
    return Promise.all(inputs.map(input => this.append(input)))
  }

  /** Resolves when every entry queued so far has been written (or has failed). */
  async flush(): Promise<void> {
    while (this._draining) await this._draining
  }

  /**
   * Read what other processes appended since the last read (without the
   * lock; an incomplete last line is left for later). A file replaced by a
   * prune, or removed, is re-read from the start.
   */
  sync(): void {
    this.readFromDisk(false)
  }

  /** The summary of one session, or of every session when `sessionId` is undefined. */
  summary(sessionId: string | undefined, options: SummaryOptions): ProofSummary {
    return this.index.summary(sessionId, options)
  }

  private drain(): Promise<void> {
    this._draining ??= (async () => {
      try {
        // Let synchronous bursts of appends join the first batch.
        await Promise.resolve()
        while (this._pending.length) {
          const batch = this._pending.splice(0, MAX_BATCH)
          try {
            if (!this._dirReady) {
              // The lock file lives beside the chain: its directory must exist first.
              mkdirSync(dirname(this.file), { recursive: true })
              this._dirReady = true
            }
            const entries = await withFileLock(`${this.file}.lock`, () => this.commit(batch.map(p => p.fields)), this._options.lock)
            batch.forEach((p, i) => p.resolve(entries[i]!))
          } catch (error) {
            for (const p of batch) p.reject(error)
          }
        }
      } finally {
        this._draining = undefined
      }
    })()
    return this._draining
  }

  /** Under the lock: catch up with the file, then append the batch after its true tail. */
  private commit(batch: Pending['fields'][]): ProofEntry[] {
    this.readFromDisk(true)
    const recordHead = this.checkHeadRecord()
    let moveSeal = this.checkSeal()
    let head = this._cursor.head
    const entries = batch.map(fields => {
      const entry = sealEntry({ seq: head.seq + 1, ...fields, prevHash: head.hash })
      head = { seq: entry.seq, hash: entry.hash }
      return entry
    })
    // Seal the batch's last entry before writing it: a stop in between leaves a chain the seal still vouches for.
    if (moveSeal) moveSeal = this.sealNext(head)
    const fd = openSync(this.file, 'a')
    let size: number
    try {
      writeAll(fd, Buffer.from(entries.map(serializeRecord).join('')))
      if (this._options.fsync) fsyncSync(fd)
      const st = fstatSync(fd)
      if (st.ino !== this._ino && this._options.fsync) fsyncDirSync(dirname(this.file))
      this._ino = st.ino
      size = st.size
    } finally {
      closeSync(fd)
    }
    this._offset = size
    for (const entry of entries) this.ingest(entry, ++this._line, true)
    // The entries are written: what follows is upkeep, and its failure must not unsay them.
    try {
      if (recordHead) {
        writeHeadRecord(this.file, { seq: head.seq, hash: head.hash, time: (this._options.now ?? Date.now)() }, !!this._options.fsync)
        this._headWritten = { seq: head.seq, hash: head.hash, offset: this._offset, ino: this._ino }
      } else {
        this._headWritten = undefined
      }
      if (moveSeal) writeChainSeal(this.file, { seq: head.seq, hash: head.hash, time: (this._options.now ?? Date.now)() })
      const maxBytes = this._options.maxBytes ?? 0
      if (maxBytes > 0 && size > maxBytes) this.prune(Math.floor(maxBytes / 2))
    } catch (error) {
      this._headWritten = undefined
      this.warn(`${this.file}: entries up to seq ${head.seq} are written, but updating the head record or the seal, or pruning, failed: ${(error as Error).message}`)
    }
    return entries
  }

  /** Under the lock: whether to update the head record after this batch (see `reconcileHeadRecord`). */
  private checkHeadRecord(): boolean {
    const mine = this._headWritten
    const tail = this._cursor.head
    // Nothing changed since our own last batch: the record is the one we wrote.
    if (mine && mine.offset === this._offset && mine.ino === this._ino && mine.seq === tail.seq && mine.hash === tail.hash) return true
    const { update, warning } = reconcileHeadRecord(this.file, tail, !!this._options.fsync)
    if (warning) this.warn(warning)
    return update
  }

  /** Under the lock, before writing: the seal names `next` as the entry the batch ends with (false when the key store cannot be written). */
  private sealNext(next: ChainHead): boolean {
    const tail = this._cursor.head
    try {
      writeChainSeal(this.file, { seq: tail.seq, hash: tail.hash, time: (this._options.now ?? Date.now)(), next })
      return true
    } catch (error) {
      this.warn(`${this.file}: cannot use the seal in dsh's key store: ${(error as Error).message}`)
      return false
    }
  }

  /** Under the lock: whether this batch may move the seal (see `reconcileSeal`); a key store that cannot be used is a warning. */
  private checkSeal(): boolean {
    if (this._options.seal === false) return false
    try {
      const { update, warning } = reconcileSeal(this.file, this._cursor.head)
      if (warning) this.warn(warning)
      return update
    } catch (error) {
      this.warn(`${this.file}: cannot use the seal in dsh's key store: ${(error as Error).message}`)
      return false
    }
  }

  private prune(keepBytes: number) {
    const result = pruneChainFile(this.file, {
      keepBytes,
      carriedBefore: seq => this.index.carriedBefore(seq),
      maxCarried: this._options.maxCarried ?? 1000,
      now: (this._options.now ?? Date.now)(),
      fsync: !!this._options.fsync,
    })
    if (!result) return
    if (result.forgotten) this.warn(`pruning ${this.file} forgot ${result.forgotten} old subjects (more than ${this._options.maxCarried ?? 1000} to carry)`)
    // Re-read the rewritten file: it must verify from its new anchor, and our offsets changed.
    this.reset()
    this.readFromDisk(false)
  }

  private reset() {
    this._headWritten = undefined
    this._cursor = new ChainCursor()
    this.index.clear()
    this._ino = -1
    this._offset = 0
    this._line = 0
    this._problem = undefined
  }

  /** Read new complete lines. With `repair` (lock held), a torn tail left by a crashed writer is cut off. */
  private readFromDisk(repair: boolean) {
    let st
    try {
      st = statSync(this.file)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      if (this._ino !== -1) {
        this.warn(`${this.file} disappeared; a new chain starts at genesis`)
        this.reset()
      }
      return
    }
    if (this._ino !== -1 && (st.ino !== this._ino || st.size < this._offset)) this.reset()
    this._ino = st.ino
    if (st.size === this._offset) return
    const fd = openSync(this.file, repair ? 'r+' : 'r')
    try {
      for (const read of readLines(fd, this._offset, st.size, this._line + 1)) {
        if (!read.complete) {
          if (repair) {
            ftruncateSync(fd, read.start)
            this.warn(`${this.file}: cut a torn last line (line ${read.line}, ${read.end - read.start} bytes) left by an interrupted write`)
          }
          break
        }
        this._offset = read.end
        this._line = read.line
        if (!read.text.trim()) {
          this.noteProblem({ line: read.line, kind: 'corrupt line', message: 'a blank line (the chain never writes one)' })
          continue
        }
        const parsed = parseRecordLine(read.text)
        if (!parsed.ok) {
          this.noteProblem({ line: read.line, ...(parsed.seq !== undefined ? { seq: parsed.seq } : {}), kind: parsed.kind, message: parsed.message })
          continue
        }
        this.ingest(parsed.record, read.line)
      }
    } finally {
      closeSync(fd)
    }
  }

  /**
   * Take a record into the cursor and index. A record that does not verify
   * is noted; it still becomes the head (new entries link to the file's
   * true tail, so the damage stays confined to where it is), but an entry
   * whose hash does not match its content never reaches the summary.
   */
  private ingest(record: ProofEntry | ProofAnchor, line: number, sealed = false) {
    const problem = this._cursor.accept(record, line, sealed)
    if (problem) {
      this.noteProblem(problem)
      if (isAnchor(record)) {
        this._cursor.anchor = record
        this._cursor.head = { seq: record.seq, hash: record.prevHash }
      } else {
        this._cursor.head = { seq: record.seq, hash: record.hash }
      }
      if (problem.kind === 'hash mismatch' || isAnchor(record)) return
    }
    if (isAnchor(record)) for (const carried of record.carried) this.index.add(carried)
    else this.index.add(record)
  }

  private noteProblem(problem: ChainProblem) {
    if (this._problem) return
    this._problem = problem
    this.warn(`${this.file} does not verify at ${describeProblem(problem)}; appending continues after its last line (run dsh proof verify)`)
  }

  private warn(message: string) {
    this._options.onWarning?.(message)
  }
}

