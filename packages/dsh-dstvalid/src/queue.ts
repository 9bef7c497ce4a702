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
    const result = this._tail.then(task)
    this._tail = result.then(() => {}, () => {}).finally(() => { this._pending-- })
    return result
  }

  /** Resolves when everything queued so far has settled. */
  idle(): Promise<void> {
    return this._tail.then(() => {})
  }
}
