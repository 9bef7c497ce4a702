import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import type { Agent } from 'dsh-agent'
import type { Session } from 'dsh-session'
import type { CliIO } from './command.ts'
import { bootHarness, describeSavedLog, saveSessionLog, type Harness, type HarnessOptions } from './harness.ts'
import { attachProgress, progressMode } from './progress.ts'
import { exitOnStopSignals, type StopSignal } from './signals.ts'

export interface RunOptions extends HarnessOptions {
  /** Prompts sent one after another, each run to idle (one turn each). */
  prompts: string[]
  json: boolean
  sessionId?: string
  /** The command named in the stop message (`dsh run`, `dsh demo`). */
  command?: string
}

export interface RunOutcome {
  harness: Harness
  sessionId: string
  session: Session
  reason: string | undefined
  /** Why the session log could not be saved (its last flush failed: a full disk); the run then exits 1. */
  saveError?: string
  exitCode: number
}

/** How long a stop signal waits for the aborted turn to end before flushing the log anyway. */
const ABORT_WAIT_MS = 2_000

/**
 * Boot the harness, run prompts to idle in a new session, and stream a
 * transcript (or, with `json`, the session's events as JSON Lines and nothing
 * else on stdout). The harness is left running for the caller to inspect
 * and dispose. Exit code: 0 completed, 1 otherwise — also when the session
 * log could not be saved (said on stderr with the reason).
 *
 * While it runs, SIGINT, SIGTERM and SIGHUP abort the turn (unless a write
 * is being checked), flush the session log, kill every process group still
 * running (a hanging check included, so it gives no verdict) and exit 130,
 * 143 or 129; a write still being checked stays unjudged in the snapshot
 * journal, for `dsh recover` to roll back.
 */
export async function runSession(options: RunOptions, io: CliIO): Promise<RunOutcome> {
  let running: { harness: Harness; session: Session; agent: Agent } | undefined
  const release = exitOnStopSignals(async signal => {
    if (!running) return
    const { harness, session, agent } = running
    // A write still being checked is not judged by a cut-short check: it stays
    // unjudged in the snapshot journal (its check is killed at exit). Anything
    // else (a model request, a shell command) is aborted so the turn ends in the log.
    if (!unfinishedCalls(session).some(name => harness.ctx.tools.get(name)?.effects === 'write')) {
      agent.abort()
      await Promise.race([agent.idle(), delay(ABORT_WAIT_MS)])
    }
    const saveError = await saveSessionLog(session)
    io.stderr(stopMessage(options.command ?? 'dsh run', signal, harness, session, saveError))
  })
  try {
    const harness = await bootHarness({ ...options, log: line => io.stderr(`${line}\n`) })
    const { session, agent } = harness.createSession(options.sessionId)
    // A log that cannot be written is said once, at the end of the run (below).
    harness.ctx.on('agent/flush-failed', failed => failed === agent || undefined)
    running = { harness, session, agent }
    const view = await attachProgress(harness.ctx, session, io, { mode: progressMode(io, options.json) })
    // The log so far (e.g. a handoff injected at creation), then live events.
    for (const event of session.events) view.event(event)
    let reason: string | undefined
    for (const prompt of options.prompts) {
      reason = await agent.send(prompt)
      if (reason !== 'completed') break
    }
    const saveError = await saveSessionLog(session)
    await view.dispose()
    if (saveError) io.stderr(`${options.command ?? 'dsh run'}: the session log was not saved: ${saveError}\n`)
    return { harness, session, sessionId: session.id, reason, ...(saveError ? { saveError } : {}), exitCode: reason === 'completed' && !saveError ? 0 : 1 }
  } finally {
    release()
  }
}

/** Names of the tool calls logged without a result. */
function unfinishedCalls(session: Session): string[] {
  const finished = new Set(session.ofType('tool/result').map(e => e.data.callId))
  return session.ofType('tool/call').filter(e => !finished.has(e.data.callId)).map(e => e.data.name)
}

/** What a stop signal left: the log, and the tool calls that never finished. */
function stopMessage(command: string, signal: StopSignal, harness: Harness, session: Session, saveError?: string): string {
  const unfinished = unfinishedCalls(session)
  const lines = [`${command}: stopped by ${signal} · session ${session.id} · ${describeSavedLog(harness.vault, session.id, saveError)}`]
  if (unfinished.length) {
    const vault = harness.vault === join(harness.workspace, '.dsh') ? '' : ` --vault ${harness.vault}`
    lines.push(`${command}: ${unfinished.length} tool call(s) did not finish (${unfinished.join(', ')}); a write among them stays in the snapshot journal, unjudged: \`dsh recover --workspace ${harness.workspace}${vault}\` puts its files back (so does the next session on this workspace)`)
  }
  return lines.map(l => `${l}\n`).join('')
}
