import { askPendingVerdicts, settleHostVerdicts, type PendingVerdict } from 'dsh-host-hooks'
import { pendingCalls } from 'dsh-review'
import type { CliIO } from './command.ts'

/** What a verdict still running in the background is shown as: what the agent was told of it. */
const PENDING_MARK = 'pending (kept for now: tests running)'

function describe(pending: readonly PendingVerdict[]): string {
  return pending.map(p => `${p.tool} ${p.paths.join(', ') || '(no paths)'}`).join('; ')
}

/**
 * Before a command reads verdicts from a vault: with the workspace's hooks
 * host live, wait until its background verdicts are final and its logs
 * written (saying so on stderr when there were any), so what is read is
 * the truth; without one (a lean harness in another process, no host),
 * the calls the logs show pending, for the command to mark as such.
 */
export async function settleBeforeReading(vault: string, who: string, io: CliIO, sessionId?: string): Promise<PendingVerdict[]> {
  const live = await askPendingVerdicts(vault)
  if (live !== undefined) {
    const mine = sessionId === undefined ? live : live.filter(p => p.sessionId === sessionId)
    if (mine.length) io.stderr(`dsh ${who}: waiting for ${mine.length === 1 ? 'the verdict' : `${mine.length} verdicts`} still running in the live hooks host (${describe(mine)})\n`)
    // Also with none pending: the host writes its logs first.
    if (await settleHostVerdicts(vault) !== undefined) return []
  }
  return pendingCalls(vault, sessionId)
}

/** One line per pending call. */
export function pendingLines(pending: readonly PendingVerdict[]): string[] {
  return pending.map(p => `${PENDING_MARK}: ${p.tool} ${p.paths.join(', ') || '(no paths)'} (call ${p.callId}, session ${p.sessionId})`)
}
