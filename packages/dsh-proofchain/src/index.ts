import type { Context } from '@deepseek-ai/cordis'
import Schema from '@deepseek-ai/schemastery'
import type { Session } from 'dsh-session'
import type { Agent } from 'dsh-agent'
import type {} from 'dsh-claims'
import type {} from 'dsh-dstvalid'
import type {} from 'dsh-snapshot'
import { ensureVault } from 'dsh-common'
import { ProofChain } from './chain.ts'
import { PROOF_SOURCE, proofChainPath, proofSummarySeen } from './seen.ts'
import { proofFromCheckpoint, proofFromLearning, proofFromRestore, proofFromVerifyResult } from './sources.ts'
import type { ProofEntry, ProofInput } from './types.ts'

/*
 * Listens (declared by their owners; their types come from the type-only
 * imports above, their code never):
 *   verify/result, verify/learning   (dsh-dstvalid)      @mode emit
 *   snapshot/restored                (dsh-snapshot)      @mode emit
 *   session/event 'claims/checkpoint' (dsh-claims, a session-log event)
 *   agent/turn-start, agent/step-start (dsh-agent)       — to show the summary
 */
declare module '@deepseek-ai/cordis' {
  interface Events {
    /** A proof entry was written to a vault's chain (it now has its seq and hash). @mode emit */
    'proofchain/appended'(entry: ProofEntry, file: string): void
  }
}

export const name = 'dsh-proofchain'
export const inject = ['sessions']

export const Config = Schema.object({
  budgetTokens: Schema.natural().min(64).default(400).description('Approximate token budget of the summary shown to the model (≈ 4 characters a token).'),
  inject: Schema.union(['turn', 'step', 'never'] as const).default('turn').description('When to show the summary, if it changed since last shown: each turn start, each step start, or never.'),
  detailMaxBytes: Schema.natural().min(64).default(1024).description("Cap on an entry's detail, in UTF-8 bytes."),
  maxBytes: Schema.natural().default(8 * 1024 * 1024).description('Prune the chain file to about half when it grows past this many bytes; 0 never prunes.'),
  fsync: Schema.boolean().default(false).description('fsync each appended batch before it counts as written.'),
  lockStaleMs: Schema.natural().min(100).default(10_000).description('A chain lock older than this many milliseconds (or held by a dead process) is broken.'),
})
export type Config = Schemastery.TypeT<typeof Config>

/**
 * Records every proof the suite emits in the session vault's chain
 * (`<vault>/proofchain.jsonl`) and, when a session's summary changed since
 * it was last shown, appends it as `context/message` (source `proofchain`)
 * at the start of the next turn (or step), where the model reads it.
 */
export function apply(ctx: Context, config: Config) {
  const logger = ctx.logger('dsh-proofchain')
  const chains = new Map<string, ProofChain>()
  const lastShown = new Map<string, string | undefined>()

  const chainFor = (session: Session): ProofChain => {
    const file = proofChainPath(session.vault)
    let chain = chains.get(file)
    if (!chain) {
      ensureVault(session.vault)
      chain = ProofChain.open({
        file,
        fsync: config.fsync,
        detailMaxBytes: config.detailMaxBytes,
        maxBytes: config.maxBytes,
        lock: { staleMs: config.lockStaleMs },
        onWarning: message => logger.warn(message),
      })
      chains.set(file, chain)
    }
    return chain
  }

  /** Never throws into the emitter: a proof that cannot be recorded is a warning, not a broken check. */
  const record = (session: Session | string | undefined, inputs: ProofInput[]) => {
    if (!inputs.length) return
    const target = typeof session === 'string' ? ctx.sessions.get(session) : session
    if (!target) {
      logger.warn('proof for unknown session %s not recorded: %s', String(session), inputs.map(i => i.subject).join(', '))
      return
    }
    let chain: ProofChain
    try {
      chain = chainFor(target)
    } catch (error) {
      logger.warn('proofs not recorded in %s: %s', proofChainPath(target.vault), (error as Error).message)
      return
    }
    for (const input of inputs) {
      chain.append(input).then(
        (entry) => {
          try {
            ctx.emit('proofchain/appended', entry, chain.file)
          } catch (error) {
            logger.warn(error)
          }
        },
        error => logger.warn('proof "%s" not recorded in %s: %s', input.subject, chain.file, (error as Error).message),
      )
    }
  }

  ctx.on('verify/result', result => record(result?.sessionId, proofFromVerifyResult(result)))
  ctx.on('verify/learning', learning => record(learning?.sessionId, proofFromLearning(learning)))
  ctx.on('snapshot/restored', info => record(info?.sessionId, proofFromRestore(info)))
  ctx.on('session/event', (session, event) => {
    if (event.type === 'claims/checkpoint') record(session, proofFromCheckpoint(session.id, event.data))
  })

  const show = async (session: Session) => {
    let text: string
    try {
      const chain = chainFor(session)
      await chain.flush()
      chain.sync()
      text = chain.summary(session.id, { budgetTokens: config.budgetTokens }).text
    } catch (error) {
      logger.warn('proof summary of session %s unavailable: %s', session.id, (error as Error).message)
      return
    }
    if (!text) return
    // A resumed session (or a hot reload) knows what it last showed from its own log.
    const last = lastShown.has(session.id) ? lastShown.get(session.id) : proofSummarySeen(session.events)
    lastShown.set(session.id, text)
    if (text === last) return
    session.append('context/message', { source: PROOF_SOURCE, text })
  }

  // A session checkpoint (the agent awaits one at each turn end) also writes out queued proofs.
  ctx.on('session/flush', session => chains.get(proofChainPath(session.vault))?.flush() ?? Promise.resolve())

  if (config.inject === 'turn') ctx.on('agent/turn-start', (agent: Agent) => show(agent.session))
  if (config.inject === 'step') ctx.on('agent/step-start', (agent: Agent) => show(agent.session))

  // Disposal (hot reload, shutdown) writes out every queued proof first.
  ctx.effect(() => () => Promise.all([...chains.values()].map(chain => chain.flush())).then(() => {}))
}

export * from './types.ts'
export * from './canonical.ts'
export * from './records.ts'
export * from './cursor.ts'
export * from './chain.ts'
export * from './verify.ts'
export * from './summary.ts'
export * from './sources.ts'
export * from './seen.ts'
export * from './errors.ts'
export * from './head.ts'
export * from './seal.ts'
