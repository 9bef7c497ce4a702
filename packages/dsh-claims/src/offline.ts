import { basename } from 'node:path'
import { streamJsonlOfTypes } from 'dsh-common'
import type { RawSessionEvent } from 'dsh-session'
import { ActivityRecorder, type Activity, type ActivityOptions } from './activity.ts'
import { checkClaims } from './check.ts'
import type { Checkpoint, ClaimsReport } from './types.ts'

export interface OfflineOptions {
  /** Tool names that are shell tools (definitions are not available offline). Default `['bash']`. */
  shellTools?: readonly string[]
  /** Fixed cut-off seq: only runs after it count; default: the whole session. */
  after?: ActivityOptions['after']
}

/** The log event types the activity record reads; lines of other types are not even parsed. */
export const ACTIVITY_TYPES: ReadonlySet<string> = new Set(['tool/call', 'tool/result', 'verify/run', 'verify/verdict', 'claims/checkpoint', 'claims/questioned'])

/**
 * Stream a stored session log (`<vault>/sessions/<id>.jsonl`) into the
 * activity record without loading it whole; memory stays bounded by the
 * number of distinct commands. A torn last line is tolerated; a corrupt line
 * that had to be parsed throws `JsonlError` naming it.
 */
export async function readActivity(file: string, options: OfflineOptions = {}): Promise<Activity> {
  const shell = new Set(options.shellTools ?? ['bash'])
  const recorder = new ActivityRecorder({ isShellTool: name => shell.has(name), after: options.after })
  for await (const [event] of streamJsonlOfTypes<RawSessionEvent>(file, ACTIVITY_TYPES)) recorder.add(event)
  return recorder.activity
}

/** Check claims against a stored session log, as the `checkpoint` tool would at the log's end. */
export async function checkSessionLog(
  file: string,
  checkpoint: Pick<Checkpoint, 'verified' | 'failed'>,
  options: OfflineOptions & { sessionId?: string } = {},
): Promise<ClaimsReport> {
  const activity = await readActivity(file, options)
  return checkClaims(checkpoint, activity, options.sessionId ?? basename(file).replace(/\.jsonl$/, ''))
}
