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

/**
 * `tty` only when the spinner's own stream, stderr, is an interactive
 * terminal that can redraw a line: not with `TERM=dumb`, not under CI
 * (`CI` set, as CI services do), whatever stdout is (`dsh run … 2>log` in
 * a terminal writes no frames into the log).
 */
export function progressMode(io: CliIO, json: boolean): ProgressMode {
  if (json) return 'json'
  const ci = io.env.CI !== undefined && io.env.CI !== '' && io.env.CI !== 'false' && io.env.CI !== '0'
  return io.stderrIsTTY && io.env.TERM !== 'dumb' && !ci ? 'tty' : 'plain'
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏']
const CLEAR_LINE = '\r\x1b[2K'
const HIDE_CURSOR = '\x1b[?25l'
const SHOW_CURSOR = '\x1b[?25h'

/**
 * A one-line spinner (frame, text, elapsed seconds) redrawn in place; for a
 * terminal only. The cursor is hidden while it spins and shown again when it
 * stops — or when the process exits with it still spinning. The line is cut
 * to the terminal's width, so it never wraps (a wrapped line cannot be
 * cleared with one carriage return).
 *
 * Ours rather than yocto-spinner or ora: yocto-spinner 1.2 installs its own
 * SIGINT/SIGTERM handlers that call `process.exit` while it spins, which
 * would skip the session-log flush of our stop handler; ora adds ten
 * dependencies and a stdin discarder that fights `dsh chat`'s readline.
 */
export class Spinner {
  private _text?: string
  private _since = 0
  private _frame = 0
  private _timer?: NodeJS.Timeout
  private _drawn = false
  private _hidden = false
  private readonly _restore = () => this.write(SHOW_CURSOR)

  constructor(
    private readonly write: (text: string) => void,
    private readonly intervalMs = 80,
    private readonly now: () => number = Date.now,
    private readonly columns: () => number | undefined = () => undefined,
  ) {}

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

  /** Remove the line, show the cursor, and stop. */
  stop() {
    clearInterval(this._timer)
    this._timer = undefined
    this._text = undefined
    this.clear()
    if (!this._hidden) return
    this._hidden = false
    process.off('exit', this._restore)
    this.write(SHOW_CURSOR)
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
    let line = `${FRAMES[this._frame++ % FRAMES.length]} ${this._text}${seconds ? ` ${seconds}s` : ''}`
    const width = this.columns()
    // One column spare: writing the last column makes some terminals wrap.
    if (width && [...line].length > width - 1) line = `${[...line].slice(0, Math.max(1, width - 2)).join('')}…`
    let prefix = CLEAR_LINE
    if (!this._hidden) {
      this._hidden = true
      process.once('exit', this._restore)
      prefix = HIDE_CURSOR + CLEAR_LINE
    }
    this.write(prefix + line)
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
  private _closed = false

  constructor(private readonly io: CliIO, private readonly options: ProgressOptions) {
    if (options.mode === 'tty') this._spinner = new Spinner(text => io.stderr(text), options.spinnerIntervalMs, Date.now, () => io.columns?.())
  }

  /** The loop is about to ask the model. */
  modelRequest() {
    if (this._closed) return
    this._model = WAITING_FOR_MODEL
    this.refresh()
  }

  event(event: SessionEvent) {
    if (this._closed) return
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
    if (this._closed || this.options.mode === 'json') return
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
    if (this._closed || this.options.mode === 'json') return
    const wait = info.delayMs >= 1000 ? `${+(info.delayMs / 1000).toFixed(1)} s` : `${info.delayMs} ms`
    this.line('stderr', `  ! ${info.reason}; retrying in ${wait} (attempt ${info.attempt + 1} of ${info.maxAttempts})`)
  }

  /** A line of the command's own (a banner, a hint), on stderr, clear of the spinner and of streamed text. */
  say(text: string) {
    if (this.options.mode === 'json') return
    this.line('stderr', text)
  }

  dispose() {
    this._closed = true
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

/** A {@link ProgressView} fed by a harness; `dispose` also removes its listeners. */
export type AttachedProgress = Omit<ProgressView, 'dispose'> & {
  /** Stop showing (nothing more is written from now on) and remove the listeners. */
  dispose(): Promise<void>
}

/**
 * Show one session's progress on `io` until `dispose`: its log events,
 * `agent/step-start` of its agent (the model is being asked),
 * `dstvalid/notice` and `llm/retry` for it. Works whichever of those
 * plugins are loaded. The listeners live in a child fiber of `ctx`, so
 * disposing it (or `ctx`) removes them all.
 *
 * @example
 * const view = await attachProgress(harness.ctx, session, io, { mode: progressMode(io, json) })
 * await agent.send(prompt)
 * await view.dispose()
 */
export async function attachProgress(ctx: Context, session: Session, io: CliIO, options: ProgressOptions): Promise<AttachedProgress> {
  const view = new ProgressView(io, options)
  const fiber = ctx.plugin((ctx: Context) => {
    ctx.on('session/event', (s, event) => { if (s === session) view.event(event) })
    ctx.on('agent/step-start', async (agent: Agent) => { if (agent.session === session) view.modelRequest() })
    ctx.on('dstvalid/notice', (n) => { if (!n.sessionId || n.sessionId === session.id) view.notice(n) })
    ctx.on('llm/retry', (info) => { if (info.sessionId === session.id) view.retry(info) })
  })
  // The plugin applies on a later tick: wait, so no event of the session is missed.
  await fiber
  const close = view.dispose.bind(view)
  return Object.assign(view, {
    async dispose() {
      close()
      await fiber.dispose()
    },
  })
}
