import type { Session } from 'dsh-session'
import type { CliIO } from './command.ts'
import { bootHarness, type Harness, type HarnessOptions } from './harness.ts'
import { attachProgress, progressMode } from './progress.ts'

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
}

/**
 * Boot the harness, run prompts to idle in a new session, and stream a
 * transcript (or, with `json`, the session's events as JSON Lines and nothing
 * else on stdout). The harness is left running for the caller to inspect
 * and dispose. Exit code: 0 completed, 1 otherwise.
 */
export async function runSession(options: RunOptions, io: CliIO): Promise<RunOutcome> {
  const harness = await bootHarness({ ...options, log: line => io.stderr(`${line}\n`) })
  const { session, agent } = harness.createSession(options.sessionId)
  const view = attachProgress(harness.ctx, session, io, { mode: progressMode(io, options.json) })
  // The log so far (e.g. a handoff injected at creation), then live events.
  for (const event of session.events) view.event(event)
  let reason: string | undefined
  for (const prompt of options.prompts) {
    reason = await agent.send(prompt)
    if (reason !== 'completed') break
  }
  await session.flush()
  view.dispose()
  return { harness, session, sessionId: session.id, reason, exitCode: reason === 'completed' ? 0 : 1 }
}
