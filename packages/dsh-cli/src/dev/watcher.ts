import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { watch, type FSWatcher } from 'chokidar'

export interface SourceWatcherOptions {
  /** Quiet time after the last change before a batch is delivered (ms). */
  debounceMs: number
  /**
   * Receives each batch of changed files (absolute paths, each once).
   * Batches never overlap: changes arriving while one is handled form the next.
   */
  onBatch(files: string[]): Promise<void>
  /** A watcher error (e.g. EMFILE); the watcher keeps going. */
  onError?(error: Error): void
}

function contentKey(file: string): string {
  try {
    return createHash('sha1').update(readFileSync(file)).digest('hex')
  } catch {
    return 'missing' // deleted (or mid-rename): a state of its own
  }
}

/**
 * Watches an exact, changing set of files with chokidar and turns bursts of
 * saves into one batch of files whose content changed. Editors that save
 * by rename are seen as a change.
 *
 * chokidar drops a second `change` of a path within 50 ms of the first
 * (a save right after a reload would be lost), so its unthrottled `raw`
 * events queue the path too; the content check then drops saves that
 * changed nothing (and the duplicate events).
 */
export class SourceWatcher {
  private _watcher?: FSWatcher
  private _watched = new Set<string>()
  /** Content of each watched file as last delivered (or first seen). */
  private readonly _contents = new Map<string, string>()
  private readonly _pending = new Set<string>()
  private _timer?: NodeJS.Timeout
  private _running?: Promise<void>
  private _closed = false

  constructor(private readonly options: SourceWatcherOptions) {}

  /** Files watched right now. */
  get files(): string[] {
    return [...this._watched]
  }

  /**
   * Watch exactly `files` from now on; resolves once every one of them is
   * watched. (chokidar signals readiness once per watcher, so a grown set
   * gets a fresh watcher, ready before the previous one is closed.)
   */
  async set(files: Iterable<string>): Promise<void> {
    if (this._closed) return
    const next = new Set(files)
    const grows = [...next].some(f => !this._watched.has(f))
    const shrinks = [...this._watched].some(f => !next.has(f))
    if (!grows && !shrinks) return
    const previous = this._watcher
    this._watched = next
    for (const file of next) if (!this._contents.has(file)) this._contents.set(file, contentKey(file))
    for (const file of this._contents.keys()) if (!next.has(file)) this._contents.delete(file)
    this._watcher = undefined
    if (next.size) {
      const watcher = watch([...next], { ignoreInitial: true, atomic: true })
      watcher.on('all', (event, path) => {
        if (event === 'change' || event === 'add' || event === 'unlink') this.queue(path)
      })
      watcher.on('raw', (_event, path: string | null, details: unknown) => {
        const watched = (details as { watchedPath?: unknown } | undefined)?.watchedPath
        if (typeof watched !== 'string') return
        this.queue(this._watched.has(watched) || !path ? watched : join(watched, path))
      })
      watcher.on('error', (error) => {
        this.options.onError?.(error instanceof Error ? error : new Error(String(error)))
      })
      await new Promise<void>(resolve => watcher.once('ready', () => resolve()))
      if (this._closed) {
        await watcher.close() // closed while this one was getting ready
        return
      }
      this._watcher = watcher
    }
    await previous?.close()
  }

  /** Resolves when no batch is waiting or being handled. */
  async idle(): Promise<void> {
    while (this._running || this._timer) {
      if (this._running) await this._running
      else await new Promise(resolve => setTimeout(resolve, this.options.debounceMs))
    }
  }

  private queue(path: string) {
    if (this._closed || !this._watched.has(path)) return
    this._pending.add(path)
    clearTimeout(this._timer)
    this._timer = setTimeout(() => {
      this._timer = undefined
      void this.flush()
    }, this.options.debounceMs)
  }

  private async flush() {
    if (this._running || this._closed || !this._pending.size) return
    const files = [...this._pending].filter((file) => {
      const key = contentKey(file)
      if (this._contents.get(file) === key) return false
      this._contents.set(file, key)
      return true
    })
    this._pending.clear()
    if (!files.length) return
    this._running = this.options.onBatch(files).finally(() => {
      this._running = undefined
    })
    await this._running
    // Changes that arrived during the batch and whose quiet time already passed.
    if (this._pending.size && !this._timer) await this.flush()
  }

  /** Stop watching; a batch in progress is awaited, pending changes are dropped. */
  async close(): Promise<void> {
    this._closed = true
    clearTimeout(this._timer)
    this._timer = undefined
    this._pending.clear()
    await this._watcher?.close()
    this._watcher = undefined
    if (this._running) await this._running
  }
}
