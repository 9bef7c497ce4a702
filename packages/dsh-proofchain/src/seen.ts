import { join } from 'node:path'

/** `source` of the `context/message` events the plugin appends. */
export const PROOF_SOURCE = 'proofchain'

/** `<vault>/proofchain.jsonl` */
export function proofChainPath(vault: string): string {
  return join(vault, 'proofchain.jsonl')
}

/** A logged event, structurally (a live `SessionEvent` or a stored line). */
interface LoggedEvent {
  type: string
  data: unknown
}

/**
 * The proof summary the model last saw in a session: the text of the
 * newest `context/message` from the proof chain in its log, or undefined
 * when none was shown. What `dsh demo` prints at its end.
 */
export function proofSummarySeen(events: readonly LoggedEvent[]): string | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!
    if (event.type !== 'context/message') continue
    const data = event.data as { source?: unknown; text?: unknown } | null
    if (data?.source === PROOF_SOURCE && typeof data.text === 'string') return data.text
  }
  return undefined
}
