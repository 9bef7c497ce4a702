import type { Context } from '@deepseek-ai/cordis'
import type { Session, SessionEvent } from 'dsh-session'
import type { Agent } from 'dsh-agent'
import type { DstvalidNotice } from 'dsh-dstvalid'
import type { RetryInfo } from 'dsh-llm-openai'
import type { CliIO } from './command.ts'
import { renderEvent } from './transcript.ts'

/**
 * How progress is shown: `tty` — transcript on stdout, notices and a
 * spinner on stderr; `plain` — the same without the spinner (one line per
 * notice); `json` — nothing but the session's events as JSON Lines on stdout.
 */
export type ProgressMode = 'tty' | 'plain' | 'json'

export function progressMode(io: CliIO, json: boolean): ProgressMode {
  return json ? 'json' : io.isTTY ? 'tty' : 'plain'
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏']
const CLEAR_LINE = '\r\x1b[2K'

/** A one-line spinner (frame, text, elapsed seconds) redrawn in place; for a terminal only. */
export class Spinner {
  private _text?: string
  private _since = 0
  private _frame = 0
  private _timer?: NodeJS.Timeout
  private _drawn = false

  constructor(private readonly write: (text: string) => void, private readonly intervalMs = 80, private readonly now: () => number = Date.now) {}

  get text(): string | undefined {
    return this._text
  }

  /** Show `text` (the clock restarts when the text changes). */
  start(text: string) {
    if (this._text !== text) this._since = this.now()
    this._text = text
    this._timer ??= setInterval(() => this.draw(), this.intervalMs).unref()
    this.draw()
  }

  /** Remove the line and stop. */
  stop() {
    clearInterval(this._timer)
    this._timer = undefined
    this._text = undefined
    this.clear()
  }

  /** Take the line away (before other output); the next tick or `draw` brings it back. */
  clear() {
    if (!this._drawn) return
    this.write(CLEAR_LINE)
    this._drawn = false
  }

  draw() {
    if (this._text === undefined) return
    const seconds = Math.floor((this.now() - this._since) / 1000)
    this.write(`${CLEAR_LINE}${FRAMES[this._frame++ % FRAMES.length]} ${this._text}${seconds ? ` ${seconds}s` : ''}`)
    this._drawn = true
  }
}

export interface ProgressOptions {
  mode: ProgressMode
  /** Print the user's messages (`› text`); off for an interactive prompt, where they are already on screen. Default true. */
  echoUser?: boolean
  spinnerIntervalMs?: number
}

const WAITING_FOR_MODEL = 'waiting for the model…'

/**
 * Renders one session for a person (or, in json mode, for a program).
 * Assistant text streams as it arrives; other events print as transcript
 * lines; notices go to stderr; in tty mode a spinner shows while the model
 * or a check is being waited for. No Cordis here: {@link attachProgress}
 * feeds it.
 */
export class ProgressView {
  private readonly _spinner?: Spinner
  /** stdout holds a partial line of streamed assistant text. */
  private _midLine = false
  /** Assistant text of the current step has been streamed (so the whole message is not printed again). */
  private _streamed = false
  private _model?: string
  private _tool?: string
  private _check?: string

  constructor(private readonly io: CliIO, private readonly options: ProgressOptions) {
    if (options.mode === 'tty') this._spinner = new Spinner(text => io.stderr(text), options.spinnerIntervalMs)
  }

  /** The loop is about to ask the model. */
  modelRequest() {
    this._model = WAITING_FOR_MODEL
    this.refresh()
  }

  event(event: SessionEvent) {
    if (this.options.mode === 'json') {
      this.io.stdout(JSON.stringify(event) + '\n')
      return
    }
    switch (event.type) {
      case 'assistant/chunk':
        this._model = undefined
        this._spinner?.stop()
        this.io.stdout((this._streamed ? '' : 'assistant: ') + event.data.text)
        this._streamed = true
        this._midLine = !event.data.text.endsWith('\n')
        return
      case 'assistant/message':
        this._model = undefined
        if (this._streamed) {
          this.endLine()
          this._streamed = false
          this.refresh()
          return
        }
        break
      case 'user/message':
        if (this.options.echoUser === false) return
        break
      case 'tool/call':
        this._model = undefined
        this._tool = `running ${event.data.name}…`
        break
      case 'tool/result':
        this._tool = undefined
        break
      case 'error':
        this._model = undefined
        break
      case 'turn/end':
        this._model = undefined
        this._tool = undefined
        this._check = undefined
        this._streamed = false
        break
    }
    const text = renderEvent(event)
    if (text) this.line('stdout', text)
    else this.refresh()
  }

  notice(notice: Pick<DstvalidNotice, 'level' | 'text' | 'phase'>) {
    if (this.options.mode === 'json') return
    if (notice.phase === 'start') {
      this._check = notice.text
      // On a terminal the spinner says it; elsewhere, a line.
      if (this._spinner) this.refresh()
      else this.line('stderr', `  · ${notice.text}`)
      return
    }
    if (notice.phase === 'end') this._check = undefined
    this.line('stderr', `  ${notice.level === 'info' ? '·' : '!'} ${notice.text}`)
  }

  retry(info: RetryInfo) {
    if (this.options.mode === 'json') return
    const wait = info.delayMs >= 1000 ? `${+(info.delayMs / 1000).toFixed(1)} s` : `${info.delayMs} ms`
    this.line('stderr', `  ! ${info.reason}; retrying in ${wait} (attempt ${info.attempt + 1} of ${info.maxAttempts})`)
  }

  /** A line of the command's own (a banner, a hint), on stderr, clear of the spinner and of streamed text. */
  say(text: string) {
    if (this.options.mode === 'json') return
    this.line('stderr', text)
  }

  dispose() {
    this._model = undefined
    this._tool = undefined
    this._check = undefined
    this._spinner?.stop()
    this.endLine()
  }

  private endLine() {
    if (!this._midLine) return
    this.io.stdout('\n')
    this._midLine = false
  }

  private line(stream: 'stdout' | 'stderr', text: string) {
    this._spinner?.clear()
    this.endLine()
    this.io[stream](text + '\n')
    this.refresh()
  }

  /** Show the spinner for what is being waited for (a check, else a tool, else the model), or remove it. */
  private refresh() {
    if (!this._spinner) return
    const waiting = this._check ?? this._tool ?? this._model
    if (waiting === undefined || this._midLine) this._spinner.stop()
    else this._spinner.start(waiting)
  }
}

/**
 * Show one session's progress on `io` until the returned disposer is called:
 * its log events, `agent/step-start` of its agent (the model is being
 * asked), `dstvalid/notice` and `llm/retry` for it. Works whichever of
 * those plugins are loaded.
 *
 * @example
 * const view = attachProgress(harness.ctx, session, io, { mode: progressMode(io, json) })
 * await agent.send(prompt)
 * view.dispose()
 */
export function attachProgress(ctx: Context, session: Session, io: CliIO, options: ProgressOptions): ProgressView & { dispose(): void } {
  const view = new ProgressView(io, options)
  const offs = [
    ctx.on('session/event', (s, event) => { if (s === session) view.event(event) }),
    ctx.on('agent/step-start', async (agent: Agent) => { if (agent.session === session) view.modelRequest() }),
    ctx.on('dstvalid/notice', (n) => { if (!n.sessionId || n.sessionId === session.id) view.notice(n) }),
    ctx.on('llm/retry', (info) => { if (info.sessionId === session.id) view.retry(info) }),
  ]
  const dispose = view.dispose.bind(view)
  view.dispose = () => {
    for (const off of offs.splice(0)) off()
    dispose()
  }
  return view
}
