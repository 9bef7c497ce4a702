import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readlinkSync, type Stats } from 'node:fs'
import { join } from 'node:path'
import { lstatOrUndefined } from 'dsh-common'
import { formatBytes, readFdWhole } from '../capture.ts'
import { SnapshotError } from '../errors.ts'
import type { CaptureEntry } from '../types.ts'
import { IgnoreRules } from './ignore-rules.ts'
import { packSum, Pack, type Held, type PackEntry } from './pack.ts'
import { DirWatcher } from './watch.ts'

/** What a shell command changed: workspace-relative posix paths of files and symlinks. */
export interface ShellChanges {
  created: string[]
  modified: string[]
  deleted: string[]
  /**
   * Each changed file's content before the command (null: it did not
   * exist), where the pack kept it: a judge can measure the state before on
   * it. A path missing here (over the size cap, a symlink) has no known content.
   */
  before?: ReadonlyMap<string, Buffer | null>
}

/** One path that differs from the pack: what the pack held (undefined: nothing) and what is there now. */
export interface Difference {
  path: string
  before: Held | undefined
  now: PackEntry | undefined
  /** A file's bytes now (for the pack when the difference is adopted). */
  data?: Buffer
  /** When the path is not a file, its stat key is not kept. */
  key?: string
}

export interface TrackerOptions {
  root: string
  pack: string
  marker: string
  /** Globs left out besides .gitignore (always: .git, node_modules, the vault). */
  skip: readonly string[]
  /** Files over this are tracked by size and mode only: a change is seen, their bytes are not kept. */
  maxFileBytes: number
  /** Cap on the bytes the pack holds at start. */
  maxBytes: number
}

/** What starting the tracker cost. */
export interface TrackerStart {
  files: number
  dirs: number
  bytes: number
  ms: number
  watched: boolean
}

/** Events in one interval past which hints are not trusted (the kernel queue may have overflowed). */
const FLOOD = 4096

/**
 * The warm picture of a workspace for shell calls: a pack of every tracked
 * file's bytes (built once), kept current by comparing only the paths a
 * directory watch hinted at — so what a command changed is known by
 * reading what it changed, not the workspace. Without trustworthy hints
 * (no watch, a flood of events, a barrier that timed out) it compares
 * everything (stat first, bytes when the stat differs or is too recent).
 */
export class WorkspaceTracker {
  readonly pack: Pack
  private readonly _rules: IgnoreRules
  private readonly _watcher: DirWatcher
  /** In-memory stat keys of packed files (skip re-reading an unchanged file in a full comparison). */
  private readonly _keys = new Map<string, string>()
  private _full = false
  /** Paths found different and not adopted yet: looked at again next time. */
  private readonly _pending = new Set<string>()

  private constructor(private readonly o: TrackerOptions) {
    this.pack = Pack.create(o.pack)
    this._rules = new IgnoreRules(o.root, o.skip)
    this._watcher = new DirWatcher(o.root, o.marker)
  }

  /**
   * Walk the workspace once: pack every tracked file, watch every tracked directory.
   * @throws SnapshotError `too-large` when the tracked files hold over `maxBytes`.
   */
  static start(o: TrackerOptions): { tracker: WorkspaceTracker; stats: TrackerStart } {
    const t0 = performance.now()
    const tracker = new WorkspaceTracker(o)
    try {
      const stats = tracker.build()
      return { tracker, stats: { ...stats, ms: performance.now() - t0, watched: !tracker._watcher.failed } }
    } catch (error) {
      tracker.close(true)
      throw error
    }
  }

  get root(): string {
    return this.o.root
  }

  private build() {
    let bytes = 0
    let files = 0
    let dirs = 0
    let batch: { path: string; entry: PackEntry; data?: Buffer }[] = []
    let batchBytes = 0
    const flush = () => {
      this.pack.put(batch)
      batch = []
      batchBytes = 0
    }
    this._watcher.add('')
    this.pack.put([{ path: '', entry: { k: 'dir', mode: lstatSync(this.o.root).mode & 0o7777 } }])
    this.walk('', (rel, st) => {
      const read = this.read(rel, st)
      if (!read) return
      if (read.entry.k === 'dir') {
        dirs++
        this._watcher.add(rel)
      } else if (read.entry.k === 'file') {
        files++
        bytes += read.entry.size
        batchBytes += read.entry.size
        if (bytes > this.o.maxBytes) {
          throw new SnapshotError('too-large', `the workspace holds over ${formatBytes(this.o.maxBytes)} of tracked files, the cap for shell tracking (dsh-snapshot maxDirBytes); add ignore globs or raise the cap`)
        }
      }
      batch.push(read)
      if (read.key) this._keys.set(rel, read.key)
      if (batch.length >= 512 || batchBytes >= 8 << 20) flush()
    })
    flush()
    this.pack.sync()
    return { files, dirs, bytes }
  }

  /** Every tracked path below `dir` (not `dir` itself), parents first; ignored ones are not entered. */
  private walk(dir: string, visit: (rel: string, st: Stats) => void) {
    let names: string[]
    try {
      names = readdirSync(dir ? join(this.o.root, dir) : this.o.root)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ENOENT' || code === 'ENOTDIR') return
      throw error
    }
    names.sort()
    for (const name of names) {
      const rel = dir ? `${dir}/${name}` : name
      const st = lstatOrUndefined(join(this.o.root, rel))
      if (!st) continue
      if (this._rules.ignores(rel, st.isDirectory())) continue
      visit(rel, st)
      if (st.isDirectory()) this.walk(rel, visit)
    }
  }

  /** A path's state now, with a file's bytes (undefined: a special file, not tracked). */
  private read(rel: string, st: Stats): { path: string; entry: PackEntry; data?: Buffer; key?: string } | undefined {
    const abs = join(this.o.root, rel)
    if (st.isDirectory()) return { path: rel, entry: { k: 'dir', mode: st.mode & 0o7777 } }
    if (st.isSymbolicLink()) {
      try {
        return { path: rel, entry: { k: 'symlink', target: readlinkSync(abs) } }
      } catch {
        // Replaced meanwhile: the next comparison sees what it became.
        return undefined
      }
    }
    if (!st.isFile()) return undefined
    if (st.size > this.o.maxFileBytes) return { path: rel, entry: { k: 'big', mode: st.mode & 0o7777, size: st.size }, key: statKey(st) }
    const data = readNoFollow(abs)
    if (!data) return undefined
    return { path: rel, entry: { k: 'file', mode: data.mode, size: data.bytes.length, sum: packSum(data.bytes) }, data: data.bytes, key: statKey(data.st) }
  }

  /**
   * Every difference between the workspace and the pack, found from the
   * watch's hints (or a full comparison when they cannot be trusted).
   * Nothing is adopted: see {@link adopt}.
   */
  async differences(): Promise<Difference[]> {
    const settled = await this._watcher.settle()
    const { hints, events } = this._watcher.take()
    const full = this._full || !settled || events > FLOOD || !!this._watcher.failed
    this._full = false
    const found = new Map<string, Difference>()
    if (full) this.compareAll(found)
    else for (const h of [...new Set([...hints, ...this._pending])].sort()) this.compare(h, found, 'hint')
    this._pending.clear()
    for (const p of found.keys()) this._pending.add(p)
    return [...found.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  }

  /** Make the pack hold these differences' current states (they were kept, or happened out of band). */
  adopt(diffs: readonly Difference[]): void {
    for (const d of diffs) this._pending.delete(d.path)
    this.pack.put(diffs.map(d => {
      if (!d.now) {
        this._keys.delete(d.path)
        return { path: d.path, entry: { k: 'gone' } as const }
      }
      if (d.key) this._keys.set(d.path, d.key)
      else this._keys.delete(d.path)
      return { path: d.path, entry: d.now, ...(d.data ? { data: d.data } : {}) }
    }))
    for (const d of diffs) {
      if (d.now?.k === 'dir') this._watcher.add(d.path)
      else if (d.before?.k === 'dir') this._watcher.remove(d.path)
    }
  }

  /** The next comparison looks at everything (after a restore whose events are not this call's business). */
  compareAllNext() {
    this._full = true
  }

  /** Durable up to its current length. */
  sync() {
    this.pack.sync()
  }

  /** The capture entry a shell call's pre-image is: the pack as it is now. */
  entry(): Extract<CaptureEntry, { kind: 'manifest' }> {
    return { kind: 'manifest', path: '.', pack: this.pack.file, upto: this.pack.length, skip: [...this.o.skip] }
  }

  /** Compare one hinted path (and, for a directory, what is below it) with the pack. */
  private compare(rel: string, found: Map<string, Difference>, how: 'hint' | 'walked') {
    if (found.has(rel)) return
    if (rel.endsWith('/.gitignore') || rel === '.gitignore') this._rules.forget(rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '')
    const before = this.pack.entries.get(rel)
    const st = lstatOrUndefined(rel ? join(this.o.root, rel) : this.o.root)
    if (rel && this.parentIgnored(rel)) return
    if (st && rel && this._rules.ignores(rel, st.isDirectory())) {
      // Became ignored (or always was): only what the pack held counts, as gone.
      if (before) this.goneBelow(rel, before, found)
      return
    }
    if (!st) {
      if (before) this.goneBelow(rel, before, found)
      return
    }
    const now = this.read(rel, st)
    if (!now) {
      if (before) this.goneBelow(rel, before, found)
      return
    }
    if (before?.k === 'dir' && now.entry.k !== 'dir') this.goneBelow(rel, before, found, false)
    if (!same(before, now.entry, () => this.bytesOf(before!), now.data)) {
      found.set(rel, { path: rel, before, now: now.entry, ...(now.data ? { data: now.data } : {}), ...(now.key ? { key: now.key } : {}) })
    } else if (now.key) {
      this._keys.set(rel, now.key)
    }
    if (now.entry.k !== 'dir' || how === 'walked') return
    if (before?.k !== 'dir' || !this._watcher.has(rel)) {
      // A new directory (its watch comes too late for what was made in it): look at everything below.
      this.walk(rel, sub => this.compare(sub, found, 'walked'))
      if (before?.k === 'dir') this.missingBelow(rel, found)
    } else {
      // The directory itself was hinted: its entries may have come or gone without hints of their own.
      this.listChildren(rel, found)
    }
  }

  private listChildren(dir: string, found: Map<string, Difference>) {
    let names: string[]
    try {
      names = readdirSync(dir ? join(this.o.root, dir) : this.o.root)
    } catch {
      // Gone meanwhile: the next comparison sees it.
      return
    }
    const present = new Set(names.map(n => (dir ? `${dir}/${n}` : n)))
    for (const p of present) if (!this.pack.entries.has(p)) this.compare(p, found, 'hint')
    for (const p of this.childrenInPack(dir)) if (!present.has(p)) this.compare(p, found, 'hint')
  }

  private childrenInPack(dir: string): string[] {
    return this.pack.children(dir)
  }

  /** Pack paths below `dir` that are no longer there. */
  private missingBelow(dir: string, found: Map<string, Difference>) {
    for (const p of this.pack.below(dir)) {
      if (found.has(p)) continue
      if (!lstatOrUndefined(join(this.o.root, p))) found.set(p, { path: p, before: this.pack.entries.get(p), now: undefined })
    }
  }

  /** `rel` is gone (or no longer tracked): it and, for a directory, everything the pack held below it. */
  private goneBelow(rel: string, before: Held, found: Map<string, Difference>, self = true) {
    if (self) found.set(rel, { path: rel, before, now: undefined })
    if (before.k !== 'dir') return
    for (const p of this.pack.below(rel)) if (!found.has(p)) found.set(p, { path: p, before: this.pack.entries.get(p), now: undefined })
  }

  private parentIgnored(rel: string): boolean {
    const parts = rel.split('/')
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join('/')
      if (this._rules.ignores(dir, true)) return true
    }
    return false
  }

  /** Compare everything: a file whose stat key is unchanged (and not too recent) is not re-read. */
  private compareAll(found: Map<string, Difference>) {
    const seen = new Set<string>([''])
    const recent = Date.now() - 2000
    this.walk('', (rel, st) => {
      seen.add(rel)
      const key = this._keys.get(rel)
      if (key && st.isFile() && key === statKey(st) && st.ctimeMs < recent) return
      const before = this.pack.entries.get(rel)
      const now = this.read(rel, st)
      if (!now) return
      if (!same(before, now.entry, () => this.bytesOf(before!), now.data)) {
        found.set(rel, { path: rel, before, now: now.entry, ...(now.data ? { data: now.data } : {}), ...(now.key ? { key: now.key } : {}) })
      } else if (now.key) {
        this._keys.set(rel, now.key)
      }
    })
    for (const [p, held] of this.pack.entries) if (!seen.has(p)) found.set(p, { path: p, before: held, now: undefined })
  }

  private bytesOf(held: Held): Buffer {
    return this.pack.bytes(held)
  }

  /** Packed bytes of a tracked file. */
  bytes(held: Held): Buffer {
    return this.pack.bytes(held)
  }

  /** How many directories are watched. */
  get watched(): number {
    return this._watcher.size
  }

  close(removePack = false) {
    this._watcher.close()
    this.pack.close(removePack)
  }
}

function statKey(st: Stats): string {
  return `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`
}

/** Whether what is there now is what the pack held (kind, mode, bytes or target). */
function same(before: Held | undefined, now: PackEntry, bytesBefore: () => Buffer, dataNow: Buffer | undefined): boolean {
  if (!before || before.k !== now.k) return false
  switch (now.k) {
    case 'dir':
      return before.k === 'dir' && before.mode === now.mode
    case 'symlink':
      return before.k === 'symlink' && before.target === now.target
    case 'big':
      // Bytes not kept: same size and mode count as unchanged.
      return before.k === 'big' && before.mode === now.mode && before.size === now.size
    case 'file':
      return before.k === 'file' && before.mode === now.mode && before.size === now.size && before.sum === now.sum && bytesBefore().equals(dataNow!)
  }
}

function readNoFollow(abs: string): { bytes: Buffer; mode: number; st: Stats } | undefined {
  let fd: number
  try {
    fd = openSync(abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch {
    // Gone, turned into a symlink, or unreadable meanwhile: the next comparison sees what it became.
    return undefined
  }
  try {
    const st = fstatSync(fd)
    if (!st.isFile()) return undefined
    return { bytes: readFdWhole(fd, st.size), mode: st.mode & 0o7777, st }
  } finally {
    closeSync(fd)
  }
}
