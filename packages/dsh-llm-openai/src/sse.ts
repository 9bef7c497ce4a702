/** One dispatched server-sent event. */
export interface SseEvent {
  /** The `event:` field, when the server set one. */
  event?: string
  /** The `data:` lines joined with "\n". */
  data: string
  /** 1-based line of the stream where the event's first field was (for error messages). */
  line: number
}

/**
 * An incremental parser for `text/event-stream` (the WHATWG rules that
 * matter here): lines end with CRLF, LF or CR; `:` starts a comment; a
 * blank line dispatches the pending `data:` lines. Bytes may arrive split
 * anywhere — inside a line, a CRLF pair, or a multi-byte character — and
 * the events are the same as if they had arrived at once. Each byte is
 * scanned once.
 */
export class SseParser {
  private readonly _decoder = new TextDecoder('utf-8')
  private _buffer = ''
  /** How far into `_buffer` has been scanned for a line end already. */
  private _scanned = 0
  private _data: string[] = []
  private _event?: string
  private _line = 0
  private _eventLine = 0
  private _started = false

  /** Feed bytes; returns the events they completed. */
  push(bytes: Uint8Array): SseEvent[] {
    return this._consume(this._decoder.decode(bytes, { stream: true }), false)
  }

  /** The stream ended: a last line without a terminator still counts, and pending data is dispatched. */
  end(): SseEvent[] {
    const out = this._consume(this._decoder.decode(), true)
    if (this._buffer) {
      this._line++
      this._field(this._buffer)
      this._buffer = ''
    }
    this._dispatch(out)
    return out
  }

  private _consume(text: string, final: boolean): SseEvent[] {
    const out: SseEvent[] = []
    let buf = this._buffer + text
    if (!this._started && buf) {
      this._started = true
      if (buf.charCodeAt(0) === 0xfeff) buf = buf.slice(1)
    }
    let start = 0
    let end = buf.length
    const lineEnd = /[\r\n]/g
    lineEnd.lastIndex = this._scanned
    for (let m = lineEnd.exec(buf); m; m = lineEnd.exec(buf)) {
      const i = m.index
      const cr = buf.charCodeAt(i) === 13
      // A CR at the very end may be the first half of a CRLF still in flight.
      if (cr && i === buf.length - 1 && !final) {
        end = i
        break
      }
      const line = buf.slice(start, i)
      start = cr && buf.charCodeAt(i + 1) === 10 ? i + 2 : i + 1
      lineEnd.lastIndex = start
      this._line++
      if (line === '') this._dispatch(out)
      else this._field(line)
    }
    this._buffer = buf.slice(start)
    this._scanned = Math.max(0, end - start)
    return out
  }

  private _field(line: string) {
    if (line.startsWith(':')) return
    if (!this._data.length && this._event === undefined) this._eventLine = this._line || 1
    const colon = line.indexOf(':')
    const name = colon === -1 ? line : line.slice(0, colon)
    let value = colon === -1 ? '' : line.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    if (name === 'data') this._data.push(value)
    else if (name === 'event') this._event = value
    // `id` and `retry` only matter for reconnecting EventSources; ignored.
  }

  private _dispatch(out: SseEvent[]) {
    if (this._data.length) {
      out.push({ ...(this._event !== undefined ? { event: this._event } : {}), data: this._data.join('\n'), line: this._eventLine })
    }
    this._data = []
    this._event = undefined
  }
}
