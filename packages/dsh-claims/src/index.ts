import type { Context } from '@deepseek-ai/cordis'
import Schema from '@deepseek-ai/schemastery'
import { capText } from 'dsh-common'
import type { Session } from 'dsh-session'
import type { ToolResult } from 'dsh-tools'
import type { ShellResultLike } from './activity.ts'
import type { ActivityRecorder } from './activity.ts'
import { createCheckpointTool, foldActivity } from './checkpoint-tool.ts'
import { latestCheckpoint } from './store.ts'
import { formatHandoff } from './text.ts'
import type { Checkpoint, ClaimsReport, FailedRun } from './types.ts'

declare module 'dsh-session' {
  interface SessionEventMap {
    /** A checkpoint as the agent gave it, with the report on its claims. */
    'claims/checkpoint': Checkpoint & { report: ClaimsReport; callId?: string }
    /** An empty `failed` was questioned; appended before the question is asked, so it is asked once per session. */
    'claims/questioned': { failedRuns: FailedRun[]; callId?: string }
  }
}

export const name = 'dsh-claims'
export const inject = ['sessions', 'tools']

export const Config = Schema.object({
  handoff: Schema.boolean().default(true).description('Append the latest checkpoint of another session, with its marks, to each new session on the same workspace.'),
  handoffMaxBytes: Schema.natural().default(8192).description('Byte cap on the handoff text.'),
  shellTools: Schema.array(Schema.string()).default(['bash']).description('Tool names read as shell tools when no definition is registered (logs of tools since unloaded).'),
})
export type Config = Schemastery.TypeT<typeof Config>

/**
 * Registers the `checkpoint` tool; keeps the results of shell calls of the
 * running step (they reach the log only after the whole step) so a
 * checkpoint later in the same step sees them; hands the latest checkpoint
 * over to each new session.
 */
export function apply(ctx: Context, config: Config) {
  const logger = ctx.logger('dsh-claims')
  const pending = new WeakMap<Session, Map<string, ShellResultLike>>()
  const isShellTool = (toolName: string) => {
    const def = ctx.tools.get(toolName)
    return def ? def.effects === 'shell' : config.shellTools.includes(toolName)
  }

  // The activity record of each session, kept as events are appended, so a
  // checkpoint never re-reads the log. A session this plugin has not seen
  // yet (seeded, or created before a reload) is folded once, on first use.
  const live = new WeakMap<Session, { recorder: ActivityRecorder; seq: number }>()
  const activityOf = (session: Session) => {
    let entry = live.get(session)
    if (!entry) live.set(session, entry = { recorder: foldActivity(session, isShellTool), seq: session.nextSeq - 1 })
    return entry.recorder
  }

  ctx.tools.register(createCheckpointTool({
    isShellTool,
    pending: (session, callId) => pending.get(session)?.get(callId),
    activity: activityOf,
  }))

  ctx.on('tools/execute', async (exec, next) => {
    // A checkpoint is held against final verdicts: every verdict still running in the background comes in first.
    if (exec.name === 'checkpoint') await ctx.serial('verify/settle', exec.session.id)
    const result: ToolResult = await next()
    if (exec.tool ? exec.tool.effects === 'shell' : config.shellTools.includes(exec.name)) {
      let calls = pending.get(exec.session)
      if (!calls) pending.set(exec.session, calls = new Map())
      calls.set(exec.callId, { content: result.content, isError: result.isError, exitCode: result.exitCode })
    }
    return result
  })

  ctx.on('session/event', (session, event) => {
    const entry = live.get(session)
    if (entry && event.seq > entry.seq) {
      entry.recorder.add(event)
      entry.seq = event.seq
    }
    if (event.type === 'tool/result') pending.get(session)?.delete(event.data.callId)
    else if (event.type === 'step/end' || event.type === 'turn/end') pending.delete(session)
  })

  ctx.on('session/created', (session) => {
    activityOf(session)
    if (!config.handoff || session.length > 0) return
    let text: string
    try {
      const latest = latestCheckpoint(session.vault, {
        excludeSession: session.id,
        cwd: session.cwd,
        onSkip: (file, why) => logger.warn('skipped %s: %s', file, why),
      })
      if (!latest) return
      text = capText(formatHandoff(latest), config.handoffMaxBytes)
    } catch (error) {
      logger.warn('handoff for session %s failed: %s', session.id, (error as Error).message)
      return
    }
    // Appended inside `session/created`, so the handoff is the new log's first
    // event. Persistence must see the session first: list dsh-claims after
    // dsh-session/jsonl in cordis.yml.
    try {
      session.append('context/message', { source: 'claims', text })
    } catch (error) {
      logger.warn('handoff for session %s failed: %s', session.id, (error as Error).message)
    }
  })
}

export * from './types.ts'
export * from './shell.ts'
export * from './attribution.ts'
export * from './command-key.ts'
export * from './evidence.ts'
export * from './activity.ts'
export * from './check.ts'
export * from './text.ts'
export * from './store.ts'
export * from './offline.ts'
export * from './checkpoint-tool.ts'
