import { closeSync, fdatasyncSync, fstatSync, ftruncateSync, mkdirSync, openSync, readSync, unlinkSync } from 'node:fs'
import { dirname } from 'node:path'
import { crc32 } from 'node:zlib'
import { SnapshotError } from '../errors.ts'
import { readPayloadFd } from '../journal-read.ts'
import { writeAllAt } from '../internal/write-all.ts'

/**
 * The warm picture of a workspace that shell tracking keeps between calls:
 * for every tracked path, its kind and mode, and for a file its bytes — in
 * an append-only pack file under the vault, so a shell command's pre-images
 * exist before it runs without copying the workspace per call. A record is
 * one JSON line (a file's bytes follow it raw, then a newline); the last
 * record of a path wins; replaying the pack up to a length gives the
 * picture as it was at that length (what a journal's `manifest` entry names).
 */
export type PackEntry =
  | { k: 'file'; mode: number; size: number; sum: number }
  /** A file over the size cap: tracked (a change is seen) but its bytes are not kept. */
  | { k: 'big'; mode: number; size: number }
  | { k: 'symlink'; target: string }
  | { k: 'dir'; mode: number }

type PackRecord = { p: string } & (PackEntry | { k: 'gone' })

/** A tracked path's entry, with where a file's bytes are. */
export type Held = PackEntry & { offset?: number }

export class Pack {
  readonly entries = new Map<string, Held>()
  /** Per directory ('' the root): the paths directly below it that the pack holds. */
  private readonly _children = new Map<string, Set<string>>()
  private _end = 0
  private _synced = 0
  private _closed = false

  private constructor(readonly file: string, private readonly _fd: number) {}

  /** A new, empty pack (an old file of that name is replaced). */
  static create(file: string): Pack {
    mkdirSync(dirname(file), { recursive: true })
    const fd = openSync(file, 'w+', 0o600)
    return new Pack(file, fd)
  }

  /** The picture a pack held at `upto` bytes (recovery). */
  static replay(file: string, upto: number): Map<string, Held> {
    const fd = openSync(file, 'r')
    try {
      const out = new Map<string, Held>()
      const size = Math.min(upto, fstatSync(fd).size)
      let pos = 0
      const head = Buffer.allocUnsafe(64 * 1024)
      while (pos < size) {
        // A record line is short; read until its newline.
        let line: string | undefined
        let len = 0
        for (let want = 4096; ; want *= 4) {
          const buf = want <= head.length ? head : Buffer.allocUnsafe(want)
          const n = readAt(fd, buf, Math.min(want, size - pos), pos)
          const nl = buf.subarray(0, n).indexOf(0x0a)
          if (nl !== -1) {
            line = buf.subarray(0, nl).toString('utf8')
            len = nl + 1
            break
          }
          if (pos + n >= size) break
        }
        if (line === undefined) break
        const rec = JSON.parse(line) as PackRecord
        pos += len
        if (rec.k === 'gone') {
          out.delete(rec.p)
          continue
        }
        const { p, ...entry } = rec
        if (entry.k === 'file') {
          out.set(p, { ...entry, offset: pos })
          pos += entry.size + 1
        } else {
          out.set(p, entry)
        }
      }
      return out
    } finally {
      closeSync(fd)
    }
  }

  /** Bytes written so far: the length a journal entry names. */
  get length(): number {
    return this._end
  }

  /** Record paths' states; files come with their bytes. One write. */
  put(items: readonly { path: string; entry: PackEntry | { k: 'gone' }; data?: Buffer }[]): void {
    if (!items.length) return
    const buffers: Uint8Array[] = []
    const placed: [string, Held | undefined][] = []
    let at = this._end
    for (const { path, entry, data } of items) {
      const line = Buffer.from(JSON.stringify({ p: path, ...entry }) + '\n')
      buffers.push(line)
      at += line.length
      if (entry.k === 'file') {
        if (!data || data.length !== entry.size) throw new SnapshotError('journal', `pack: bytes of ${path} are not ${entry.size} long`)
        buffers.push(data, NEWLINE)
        placed.push([path, { ...entry, offset: at }])
        at += data.length + 1
      } else {
        placed.push([path, entry.k === 'gone' ? undefined : entry])
      }
    }
    try {
      writeAllAt(this._fd, buffers, this._end)
    } catch (error) {
      try { ftruncateSync(this._fd, this._end) } catch { /* the write error below is the one to report */ }
      throw new SnapshotError('journal', `cannot write shell pack ${this.file}: ${(error as Error).message}`)
    }
    this._end = at
    for (const [path, held] of placed) {
      if (!path) {
        if (held) this.entries.set(path, held)
        continue
      }
      const parent = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : ''
      if (held) {
        this.entries.set(path, held)
        let set = this._children.get(parent)
        if (!set) this._children.set(parent, set = new Set())
        set.add(path)
      } else {
        this.entries.delete(path)
        this._children.get(parent)?.delete(path)
      }
    }
  }

  /** The held paths directly below `dir` ('' the root). */
  children(dir: string): string[] {
    return [...(this._children.get(dir) ?? [])]
  }

  /** Every held path below `dir`, at any depth. */
  below(dir: string): string[] {
    const out: string[] = []
    const visit = (d: string) => {
      for (const p of this._children.get(d) ?? []) {
        out.push(p)
        visit(p)
      }
    }
    visit(dir)
    return out
  }

  /** A held file's bytes. */
  bytes(held: Held): Buffer {
    if (held.k !== 'file' || held.offset === undefined) throw new SnapshotError('journal', 'pack: not a file entry')
    return readPayloadFd(this._fd, this.file, held.offset, held.size, held.sum)
  }

  /** Make everything written so far durable (a no-op when nothing was added). */
  sync(): void {
    if (this._synced === this._end) return
    fdatasyncSync(this._fd)
    this._synced = this._end
  }

  close(remove = false): void {
    if (this._closed) return
    this._closed = true
    closeSync(this._fd)
    if (remove) {
      try {
        unlinkSync(this.file)
      } catch {
        // ENOENT: already gone.
      }
    }
  }
}

const NEWLINE = Buffer.from('\n')

function readAt(fd: number, buf: Buffer, want: number, pos: number): number {
  let got = 0
  while (got < want) {
    const n = readSync(fd, buf, got, want - got, pos + got)
    if (n === 0) break
    got += n
  }
  return got
}

/** Checksum kept with each packed file (the journal's). */
export function packSum(data: Uint8Array): number {
  return crc32(data)
}
