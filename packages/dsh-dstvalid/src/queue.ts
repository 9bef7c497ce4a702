/**
 * Runs tasks one at a time, in the order they were queued. One per
 * workspace: checks of one workspace never overlap. A failing task does not
 * stop the queue.
 */
export class SerialQueue {
  private _tail: Promise<unknown> = Promise.resolve()
  private _pending = 0

  /** Tasks queued or running. */
  get pending(): number {
    return this._pending
  }

  run<T>(task: () => Promise<T>): Promise<T> {
    this._pending++
    // A task queued behind a preemptible one: it is asked to end early (see yieldSignal).
    if (this._pending > 1) for (const c of this._yielding) c.abort()
    const result = this._tail.then(task)
    this._tail = result.then(() => {}, () => {}).finally(() => { this._pending-- })
    return result
  }

  private readonly _yielding = new Set<AbortController>()

  /**
   * For a preemptible task (the warm-up's pieces): a signal that aborts as
   * soon as another task is queued, or is already waiting. The task ends
   * early at it and queues its remainder behind the newcomer; `done()`
   * when the task ends.
   */
  yieldSignal(): { signal: AbortSignal; done(): void } {
    const c = new AbortController()
    if (this._pending > 1) c.abort()
    else this._yielding.add(c)
    return { signal: c.signal, done: () => { this._yielding.delete(c) } }
  }

  private readonly _held = new Set<Promise<unknown>>()

  /** Background work that queues its tasks one after another (a warm-up in pieces): {@link idle} waits for it too. */
  hold<T>(work: Promise<T>): Promise<T> {
    this._held.add(work)
    void work.then(() => {}, () => {}).finally(() => this._held.delete(work))
    return work
  }

  /** Resolves when everything queued so far has settled, and the work held (see {@link hold}). */
  async idle(): Promise<void> {
    for (;;) {
      const tail = this._tail
      await Promise.all([tail, ...[...this._held].map(w => w.catch(() => {}))])
      if (tail === this._tail && !this._held.size) return
    }
  }
}
