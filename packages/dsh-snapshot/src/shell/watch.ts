import { readdirSync, rmSync, watch, writeFileSync, type FSWatcher } from 'node:fs'
import { basename, dirname, join } from 'node:path'

/**
 * Change hints for a tracked workspace: one non-recursive `fs.watch` per
 * tracked directory (inotify on Linux), collecting the paths that saw an
 * event. Hints only — every hinted path is compared with the pack before
 * it counts as changed — so a spurious or misplaced event costs one stat.
 * What a hint can miss is handled by the tracker: a new directory is
 * walked whole, and a flood of events (the kernel queue may overflow
 * silently) falls back to a full walk.
 *
 * `settle()` is the barrier: it writes a marker file in a watched
 * directory of the vault and resolves when that event arrives. Every
 * watch of a process shares one inotify queue, read in order, so by then
 * every event of a write that happened before the call was delivered.
 * Each barrier writes a file of its own (`<marker>.<seq>`): an event of an
 * earlier barrier still being dispatched (a write makes several) must not
 * release a later one before the events queued in between.
 */
export class DirWatcher {
  private readonly _watchers = new Map<string, FSWatcher>()
  private _hints = new Set<string>()
  private _events = 0
  private _failed: string | undefined
  private _markWatcher: FSWatcher | undefined
  private _markSeq = 0
  private _waiting: { seq: number; resolve: (ok: boolean) => void }[] = []

  constructor(private readonly root: string, private readonly marker: string) {
    try {
      const prefix = `${basename(marker)}.`
      this._markWatcher = watch(dirname(marker), { persistent: false }, (_, name) => {
        if (!name?.startsWith(prefix)) return
        const seq = Number(name.slice(prefix.length))
        const due = this._waiting.filter(w => w.seq <= seq)
        if (!due.length) return
        this._waiting = this._waiting.filter(w => w.seq > seq)
        for (const w of due) w.resolve(true)
      })
      this._markWatcher.on('error', error => this.fail(`watching ${dirname(marker)}: ${(error as Error).message}`))
    } catch (error) {
      this.fail(`cannot watch ${dirname(marker)}: ${(error as Error).message}`)
    }
  }

  /** Why hints can no longer be trusted (a watch failed), if so. */
  get failed(): string | undefined {
    return this._failed
  }

  /** Events since the last `take()`. */
  get events(): number {
    return this._events
  }

  has(dir: string): boolean {
    return this._watchers.has(dir)
  }

  /** Watch a tracked directory (workspace-relative, '' for the root). */
  add(dir: string): boolean {
    if (this._watchers.has(dir) || this._failed) return !this._failed
    try {
      const w = watch(dir ? join(this.root, dir) : this.root, { persistent: false }, (_, name) => {
        this._events++
        this._hints.add(name ? (dir ? `${dir}/${name}` : String(name)) : dir)
      })
      w.on('error', error => {
        // The directory itself went away (ENOENT on some systems) or the watch broke: hint the directory.
        this._hints.add(dir)
        this.remove(dir)
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.fail(`watching ${dir || '.'}: ${(error as Error).message}`)
      })
      this._watchers.set(dir, w)
      return true
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ENOENT' || code === 'ENOTDIR') {
        this._hints.add(dir)
        return true
      }
      this.fail(`cannot watch ${dir || '.'} (${code ?? (error as Error).message})`)
      return false
    }
  }

  /** Stop watching a directory and everything below it. */
  remove(dir: string) {
    for (const [d, w] of this._watchers) {
      if (d === dir || (dir === '' ? true : d.startsWith(`${dir}/`))) {
        w.close()
        this._watchers.delete(d)
      }
    }
  }

  get size(): number {
    return this._watchers.size
  }

  /** Wait until every event of what happened before this call was delivered; false on timeout or a broken watch. */
  settle(timeoutMs = 5000): Promise<boolean> {
    if (this._failed || !this._markWatcher) return Promise.resolve(false)
    return new Promise(resolve => {
      const seq = ++this._markSeq
      const timer = setTimeout(() => {
        this._waiting = this._waiting.filter(w => w.seq !== seq)
        resolve(false)
      }, timeoutMs)
      this._waiting.push({ seq, resolve: ok => { clearTimeout(timer); resolve(ok) } })
      try {
        writeFileSync(`${this.marker}.${seq}`, '')
        if (seq > 1) rmSync(`${this.marker}.${seq - 1}`, { force: true })
      } catch (error) {
        clearTimeout(timer)
        this._waiting = this._waiting.filter(w => w.seq !== seq)
        this.fail(`cannot write ${this.marker}: ${(error as Error).message}`)
        resolve(false)
      }
    })
  }

  /** The paths hinted since the last call, and how many events came. */
  take(): { hints: Set<string>; events: number } {
    const out = { hints: this._hints, events: this._events }
    this._hints = new Set()
    this._events = 0
    return out
  }

  private fail(why: string) {
    this._failed ??= why
  }

  close() {
    for (const w of this._watchers.values()) w.close()
    this._watchers.clear()
    this._markWatcher?.close()
    this._markWatcher = undefined
    for (const w of this._waiting) w.resolve(false)
    this._waiting = []
    removeMarkers(this.marker)
  }
}

/** Remove the barrier files of `marker` (what a crashed tracker left). */
export function removeMarkers(marker: string): void {
  const prefix = `${basename(marker)}.`
  let names: string[]
  try {
    names = readdirSync(dirname(marker))
  } catch {
    // ENOENT: the directory is gone, and its markers with it.
    return
  }
  for (const name of names) if (name.startsWith(prefix) && /^\d+$/.test(name.slice(prefix.length))) rmSync(join(dirname(marker), name), { force: true })
}
