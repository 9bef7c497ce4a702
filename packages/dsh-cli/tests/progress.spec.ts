import { Readable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import type { SessionEvent } from 'dsh-session'
import { harness, listenerCounts } from 'dsh-testkit'
import type { CliIO } from 'dsh-cli'
import { attachProgress, progressMode, ProgressView, Spinner } from '../src/progress.ts'

function fakeIO(stderrIsTTY: boolean) {
  const writes: [string, string][] = []
  const io: CliIO = {
    stdout: text => { writes.push(['out', text]) },
    stderr: text => { writes.push(['err', text]) },
    stdin: Readable.from([]),
    stderrIsTTY,
    env: {},
  }
  return { io, writes, text: (stream: 'out' | 'err') => writes.filter(w => w[0] === stream).map(w => w[1]).join('') }
}

let seq = 0
function ev<T extends SessionEvent['type']>(type: T, data: Extract<SessionEvent, { type: T }>['data']): SessionEvent {
  return { seq: seq++, time: 0, type, data } as SessionEvent
}

const CLEAR = '\r\x1b[2K'
const HIDE = '\x1b[?25l'
const SHOW = '\x1b[?25h'

describe('progress view', () => {
  it('tty: a spinner on stderr while waiting for the model, a tool or a check; streamed text on stdout never shares a line with it', () => {
    const { io, writes } = fakeIO(true)
    const view = new ProgressView(io, { mode: 'tty', spinnerIntervalMs: 60_000 })
    view.modelRequest()
    view.event(ev('assistant/chunk', { text: 'Hel' }))
    view.event(ev('assistant/chunk', { text: 'lo' }))
    view.event(ev('assistant/message', { text: 'Hello', toolCalls: [{ callId: 'c', name: 'edit_file', arguments: { path: 'a.ts' } }] }))
    view.event(ev('tool/call', { callId: 'c', name: 'edit_file', arguments: { path: 'a.ts' } }))
    view.notice({ level: 'info', text: 'type-checking after edit_file a.ts…', phase: 'start' })
    view.notice({ level: 'info', text: 'typecheck passed', phase: 'end' })
    view.event(ev('tool/result', { callId: 'c', name: 'edit_file', content: 'edited a.ts', isError: false }))
    view.event(ev('turn/end', { turn: 0, reason: 'completed' }))
    expect(writes).toEqual([
      ['err', `${HIDE}${CLEAR}⠋ waiting for the model…`],
      ['err', CLEAR],
      ['err', SHOW],
      ['out', 'assistant: Hel'],
      ['out', 'lo'],
      ['out', '\n'],
      ['out', '  → edit_file a.ts\n'],
      ['err', `${HIDE}${CLEAR}⠙ running edit_file…`],
      ['err', `${CLEAR}⠹ type-checking after edit_file a.ts…`],
      ['err', CLEAR],
      ['err', '  · typecheck passed\n'],
      ['err', `${CLEAR}⠸ running edit_file…`],
      ['err', CLEAR],
      ['out', '  ✓ edit_file\n      edited a.ts\n'],
      ['err', SHOW],
    ])
  })

  it('the spinner ticks with the elapsed seconds', async () => {
    const frames: string[] = []
    let now = 0
    let ticked!: () => void
    const tick = new Promise<void>(resolve => { ticked = resolve })
    const spinner = new Spinner(t => { frames.push(t); if (t.endsWith(' 2s')) ticked() }, 5, () => now)
    spinner.start('waiting for the model…')
    now = 2400
    await tick
    spinner.stop()
    expect(frames[0]).toBe(`${HIDE}${CLEAR}⠋ waiting for the model…`)
    expect(frames.at(-3)).toMatch(/^\r\x1b\[2K. waiting for the model… 2s$/)
    expect(frames.slice(-2)).toEqual([CLEAR, SHOW])
  })

  it('the spinner line is cut to the terminal width (never wraps); the cursor comes back at exit if it still spins', () => {
    const frames: string[] = []
    const spinner = new Spinner(t => frames.push(t), 60_000, () => 0, () => 12)
    const exitHooks = process.listenerCount('exit')
    spinner.start('type-checking after edit_file src/very/long/path.ts…')
    expect(frames).toEqual([`${HIDE}${CLEAR}⠋ type-che…`])
    expect([...'⠋ type-che…'].length).toBe(11)
    expect(process.listenerCount('exit')).toBe(exitHooks + 1)
    process.listeners('exit').at(-1)!.call(process, 0)
    expect(frames.at(-1)).toBe(SHOW)
    spinner.stop()
    expect(process.listenerCount('exit')).toBe(exitHooks)
  })

  it('the spinner is decided by stderr alone, and never with TERM=dumb or under CI', () => {
    const io = (stderrIsTTY: boolean, env: NodeJS.ProcessEnv = {}) => ({ ...fakeIO(stderrIsTTY).io, env })
    expect(progressMode(io(true), false)).toBe('tty')
    expect(progressMode(io(false), false)).toBe('plain') // `dsh run … 2>log` in a terminal: no frames in the log
    expect(progressMode(io(true, { TERM: 'dumb' }), false)).toBe('plain')
    expect(progressMode(io(true, { CI: 'true' }), false)).toBe('plain')
    expect(progressMode(io(true, { CI: 'false' }), false)).toBe('tty')
    expect(progressMode(io(true), true)).toBe('json')
  })

  it('plain: no escape codes; notices and retries as lines on stderr; a message that was not streamed is printed whole', () => {
    const { io, text, writes } = fakeIO(false)
    const view = new ProgressView(io, { mode: 'plain' })
    view.event(ev('user/message', { text: 'go' }))
    view.modelRequest()
    view.retry({ sessionId: 's', requestIndex: 0, attempt: 1, maxAttempts: 4, delayMs: 1500, reason: 'http://x/v1 is rate limiting requests (HTTP 429)', status: 429 })
    view.event(ev('assistant/message', { text: 'whole answer', toolCalls: [] }))
    view.notice({ level: 'info', text: 'type-checking…', phase: 'start' })
    view.notice({ level: 'warn', text: 'coverage dropped' })
    view.event(ev('error', { message: 'API key rejected by http://x/v1 (HTTP 401)', source: 'agent' }))
    view.event(ev('turn/end', { turn: 0, reason: 'error' }))
    expect(text('out')).toBe('› go\nassistant: whole answer\nerror: API key rejected by http://x/v1 (HTTP 401)\nturn ended: error\n')
    expect(text('err')).toBe('  ! http://x/v1 is rate limiting requests (HTTP 429); retrying in 1.5 s (attempt 2 of 4)\n  · type-checking…\n  ! coverage dropped\n')
    expect(writes.some(w => w[1].includes('\x1b'))).toBe(false)
  })

  it('json: nothing but the events as JSON Lines on stdout', () => {
    const { io, writes } = fakeIO(true)
    const view = new ProgressView(io, { mode: 'json' })
    const events = [ev('user/message', { text: 'go' }), ev('assistant/chunk', { text: 'x' }), ev('turn/end', { turn: 0, reason: 'completed' })]
    view.modelRequest()
    for (const e of events) view.event(e)
    view.notice({ level: 'info', text: 'checking', phase: 'start' })
    view.say('banner')
    view.dispose()
    expect(writes).toEqual(events.map(e => ['out', JSON.stringify(e) + '\n']))
  })
})

describe('attachProgress', () => {
  it('shows only its own session, and its disposer removes every listener', async () => {
    const { ctx, dispose } = await harness({ workspaceTools: false })
    const before = listenerCounts(ctx)
    const mine = ctx.sessions.create('mine')
    const other = ctx.sessions.create('other')
    const { io, text } = fakeIO(false)
    const view = await attachProgress(ctx, mine, io, { mode: 'plain' })
    mine.append('user/message', { text: 'for me' })
    other.append('user/message', { text: 'not for me' })
    ctx.emit('dstvalid/notice', { sessionId: 'other', level: 'info', text: 'other check' })
    ctx.emit('dstvalid/notice', { sessionId: 'mine', level: 'info', text: 'my check' })
    const disposed = view.dispose()
    mine.append('user/message', { text: 'after dispose' })
    await disposed
    expect(text('out')).toBe('› for me\n')
    expect(text('err')).toBe('  · my check\n')
    expect(listenerCounts(ctx)).toEqual(before)
    await dispose()
  })
})
