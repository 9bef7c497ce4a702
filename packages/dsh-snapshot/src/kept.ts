import { createHash } from 'node:crypto'
import { appendFileSync, closeSync, existsSync, fsyncSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync,
  utimesSync } from 'node:fs'
import { join } from 'node:path'
import { writeFileAtomicSync } from 'dsh-common'

/**
 * What judged calls changed, kept after their verdict so a person can look
 * at it and take it back (`dsh review`, `dsh undo`): for each call, each
 * changed path's state before and after it. Files' bytes are
 * content-addressed blobs (`<vault>/kept/blobs/<sha256>`, shared between
 * records); the index is append-only JSON Lines (`<vault>/kept/index.jsonl`).
 *
 * Pruning appends a `pruned` line naming the record and why, then removes
 * blobs no kept record names any more — only blobs untouched for a minute,
 * and a writer touches a blob it reuses before naming it, so a prune racing
 * a commit never removes bytes the commit is about to name.
 */

/** One path's state on one side of a call. */
export type KeptState =
  | { k: 'file'; mode: number; size: number; sha: string }
  | { k: 'symlink'; target: string }
  | { k: 'dir'; mode: number }
  /** Nothing there; `dirs`: missing ancestor directories (outermost first), removed with it. */
  | { k: 'absent'; dirs?: string[] }
  /** Its bytes were not kept (over a size cap, not measured): can be shown, not put back. */
  | { k: 'unknown'; why: string }

/** One path a call changed. */
export interface KeptChange {
  path: string
  before: KeptState
  after: KeptState
}

/** What a record is: a call kept by its verdict, a call rolled back (kept for the record, not undoable), or an undo. */
export type KeptKind = 'commit' | 'rollback' | 'undo'

/** One judged call (or one undo), as the index keeps it. */
export interface KeptRecord {
  v: 1
  /** Unique in the vault. */
  id: string
  sessionId: string
  callIds: string[]
  turn?: number
  step?: number
  /** When the verdict (or the undo) was given, ms since the epoch. */
  time: number
  kind: KeptKind
  /** Why it was rolled back; what an undo did. */
  reason?: string
  /** An undo: the ids of the records it took back. */
  undoes?: string[]
  changes: KeptChange[]
  /** A shell call whose changes were never measured: what it changed is not known. */
  unmeasured?: boolean
  /** Blob bytes this record names (before and after). */
  bytes: number
  /** Set once pruned: its blobs may be gone. */
  pruned?: { time: number; why: string }
}

/** The size and age bound of kept records (sessions still running are never pruned). */
export interface KeepBounds {
  /** Total blob bytes the records may name, oldest pruned first past it. */
  maxBytes: number
  /** Records older than this (ms) are pruned. */
  maxAgeMs: number
}

type IndexLine = KeptRecord | { v: 1; prune: string; time: number; why: string }

/** `<vault>/kept` */
export function keptDir(vault: string): string {
  return join(vault, 'kept')
}

/** Where a state's blob would be, when it has one. */
function blobPath(vault: string, sha: string): string {
  return join(keptDir(vault), 'blobs', sha.slice(0, 2), sha)
}

/**
 * The kept records of one vault. Synchronous on purpose: a commit records
 * what it kept before it returns.
 */
export class KeptStore {
  constructor(readonly vault: string, private readonly fsync = false) {}

  private get index(): string {
    return join(keptDir(this.vault), 'index.jsonl')
  }

  /** Store bytes (deduplicated by content); returns their sha256. */
  put(data: Uint8Array): string {
    const sha = createHash('sha256').update(data).digest('hex')
    const file = blobPath(this.vault, sha)
    try {
      // Fresh again, so a prune running now leaves it.
      const now = new Date()
      utimesSync(file, now, now)
      return sha
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
    mkdirSync(join(keptDir(this.vault), 'blobs', sha.slice(0, 2)), { recursive: true })
    writeFileAtomicSync(file, data, { mode: 0o600, fsync: this.fsync })
    return sha
  }

  /** A blob's bytes, or undefined when it is gone (pruned). */
  get(sha: string): Buffer | undefined {
    try {
      return readFileSync(blobPath(this.vault, sha))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw error
    }
  }

  /** Append one record (its blobs already put). */
  append(record: KeptRecord): void {
    mkdirSync(keptDir(this.vault), { recursive: true })
    const fd = openSync(this.index, 'a', 0o600)
    try {
      appendFileSync(fd, JSON.stringify(record) + '\n')
      if (this.fsync) fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
  }

  /** Every record, oldest first, pruned ones marked. A torn or unreadable line is skipped. */
  read(): KeptRecord[] {
    let text: string
    try {
      text = readFileSync(this.index, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
      throw error
    }
    const records = new Map<string, KeptRecord>()
    for (const line of text.split('\n')) {
      if (!line) continue
      let item: IndexLine
      try {
        item = JSON.parse(line) as IndexLine
      } catch {
        continue
      }
      if ('prune' in item) {
        const r = records.get(item.prune)
        if (r) r.pruned = { time: item.time, why: item.why }
      } else if (item && item.v === 1 && typeof item.id === 'string') {
        records.set(item.id, item)
      }
    }
    return [...records.values()]
  }

  /**
   * Prune records past the bound, oldest first, except those of `live`
   * sessions; then remove blobs no remaining record names. Returns the ids pruned.
   */
  prune(bounds: KeepBounds, live: ReadonlySet<string>, now = Date.now()): string[] {
    const records = this.read().filter(r => !r.pruned)
    const pruned: { id: string; why: string }[] = []
    let total = records.reduce((n, r) => n + r.bytes, 0)
    for (const r of records) {
      if (live.has(r.sessionId)) continue
      const old = now - r.time > bounds.maxAgeMs
      if (!old && total <= bounds.maxBytes) continue
      pruned.push({ id: r.id, why: old ? `older than ${formatAge(bounds.maxAgeMs)}` : `over the ${formatSize(bounds.maxBytes)} kept for undo` })
      total -= r.bytes
    }
    if (!pruned.length) return []
    for (const p of pruned) this.appendLine({ v: 1, prune: p.id, time: now, why: p.why })
    const gone = new Set(pruned.map(p => p.id))
    const named = new Set<string>()
    for (const r of records) {
      if (gone.has(r.id)) continue
      for (const c of r.changes) for (const s of [c.before, c.after]) if (s.k === 'file') named.add(s.sha)
    }
    this.removeBlobsExcept(named, now)
    return pruned.map(p => p.id)
  }

  private appendLine(line: IndexLine) {
    mkdirSync(keptDir(this.vault), { recursive: true })
    appendFileSync(this.index, JSON.stringify(line) + '\n')
  }

  private removeBlobsExcept(named: ReadonlySet<string>, now: number) {
    const root = join(keptDir(this.vault), 'blobs')
    if (!existsSync(root)) return
    for (const sub of readdirSync(root)) {
      for (const sha of readdirSync(join(root, sub))) {
        if (named.has(sha)) continue
        const file = join(root, sub, sha)
        try {
          if (now - statSync(file).mtimeMs < 60_000) continue
          rmSync(file, { force: true })
        } catch (error) {
          // Removed by another prune meanwhile: what this one wanted.
          if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
        }
      }
    }
  }
}

/**
 * The state of `rel` below `root` now, its bytes put in the store; a file
 * over `maxFileBytes` is `unknown`.
 */
export function readKeptState(store: KeptStore, root: string, rel: string, maxFileBytes: number): KeptState {
  const abs = join(root, rel)
  let st
  try {
    st = lstatSync(abs)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return { k: 'absent' }
    throw error
  }
  if (st.isSymbolicLink()) return { k: 'symlink', target: readlinkSync(abs) }
  if (st.isDirectory()) return { k: 'dir', mode: st.mode & 0o7777 }
  if (!st.isFile()) return { k: 'unknown', why: 'not a regular file' }
  if (st.size > maxFileBytes) return { k: 'unknown', why: `its bytes were not kept: ${formatSize(st.size)}, over the ${formatSize(maxFileBytes)} cap` }
  const data = readFileSync(abs)
  return { k: 'file', mode: st.mode & 0o7777, size: data.length, sha: store.put(data) }
}

/** Whether two states are the same (same kind, bytes, mode, target). */
export function sameState(a: KeptState, b: KeptState): boolean {
  if (a.k !== b.k) return false
  switch (a.k) {
    case 'file': return b.k === 'file' && a.sha === b.sha && a.mode === b.mode
    case 'symlink': return b.k === 'symlink' && a.target === b.target
    case 'dir': return b.k === 'dir' && a.mode === b.mode
    case 'absent': return true
    case 'unknown': return false
  }
}

/** Blob bytes a list of changes names. */
export function changeBytes(changes: readonly KeptChange[]): number {
  let n = 0
  for (const c of changes) for (const s of [c.before, c.after]) if (s.k === 'file') n += s.size
  return n
}

function formatSize(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MiB` : `${(bytes / 1024).toFixed(1)} KiB`
}

function formatAge(ms: number): string {
  const h = ms / 3_600_000
  return h >= 48 ? `${Math.round(h / 24)} days` : `${Math.round(h)} h`
}
