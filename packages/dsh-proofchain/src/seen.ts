import { join } from 'node:path'
import { existsSync } from 'node:fs'
import { ProofChain } from './chain.ts'
import type { ProofSummary } from './summary.ts'

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

export interface ReadSummaryOptions {
  /** The vault holding `proofchain.jsonl`. */
  vault: string
  /** One session's summary; every session's when omitted. */
  sessionId?: string
  /** Token budget (0 = unbounded). Default 400, as the plugin's default. */
  budgetTokens?: number
}

/** Read a vault's chain from disk and summarise it, without a harness (CLI, demo). Undefined when there is no chain. */
export function readProofSummary(options: ReadSummaryOptions): ProofSummary | undefined {
  const file = proofChainPath(options.vault)
  if (!existsSync(file)) return undefined
  const chain = ProofChain.open({ file })
  return chain.summary(options.sessionId, { budgetTokens: options.budgetTokens ?? 400 })
}
