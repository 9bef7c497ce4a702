import type { Context } from '@deepseek-ai/cordis'
import type { Session } from 'dsh-session'
import { takeUndoNotes } from './notes.ts'

/**
 * Tell a running session's model what a person's `dsh undo` changed under
 * it: at the next step's start as a `context/message` (source `undo`), or,
 * mid-step, appended to the next tool call's result — whichever comes
 * first.
 */
export function deliverUndoNotes(ctx: Context): void {
  const take = (session: Session) => takeUndoNotes(session.vault, session.id).map(text => `note: ${text}`)
  ctx.on('agent/step-start', async agent => {
    for (const text of take(agent.session)) agent.session.append('context/message', { source: 'undo', text })
  })
  ctx.on('tools/execute', async (exec, next) => {
    const result = await next()
    const notes = take(exec.session)
    return notes.length ? { ...result, content: [result.content, ...notes].join('\n') } : result
  }, { prepend: true })
}
