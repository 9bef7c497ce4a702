import type { Session, SessionEvent } from 'dsh-session'
import type { CliIO } from './command.ts'
import { bootHarness, type Harness, type HarnessOptions } from './harness.ts'
import { renderEvent } from './transcript.ts'

export interface RunOptions extends HarnessOptions {
  /** Prompts sent one after another, each run to idle (one turn each). */
  prompts: string[]
  json: boolean
  sessionId?: string
}

export interface RunOutcome {
  harness: Harness
  sessionId: string
  session: Session
  reason: string | undefined
  exitCode: number
  /** Write a session's events as the transcript (or JSON Lines) would. */
  print(event: SessionEvent): void
}

type Notice = { sessionId?: string; level?: string; text?: string }

/**
 * Boot the harness, run prompts to idle in a new session, and stream a
 * transcript (or, with `json`, the session's events as JSON Lines and nothing
 * else on stdout). The harness is left running for the caller to inspect
 * and dispose. Exit code: 0 completed, 1 otherwise.
 */
export async function runSession(options: RunOptions, io: CliIO): Promise<RunOutcome> {
  const harness = await bootHarness({ ...options, log: line => io.stderr(`${line}\n`) })
  const { session, agent } = harness.createSession(options.sessionId)
  const print = (event: SessionEvent) => {
    if (options.json) {
      io.stdout(JSON.stringify(event) + '\n')
      return
    }
    const text = renderEvent(event)
    if (text) io.stdout(text + '\n')
  }
  // The log so far (e.g. a handoff injected at creation), then live events.
  for (const event of session.events) print(event)
  harness.ctx.on('session/event', (s, event) => {
    if (s === session) print(event)
  })
  if (!options.json) {
    const on = harness.ctx.on as unknown as (name: string, cb: (n: Notice) => void) => () => boolean
    on('dstvalid/notice', (notice) => {
      if (notice.sessionId && notice.sessionId !== session.id) return
      if (notice.text) io.stderr(`  · ${notice.text}\n`)
    })
  }
  let reason: string | undefined
  for (const prompt of options.prompts) {
    reason = await agent.send(prompt)
    if (reason !== 'completed') break
  }
  await session.flush()
  return { harness, session, sessionId: session.id, reason, exitCode: reason === 'completed' ? 0 : 1, print }
}
