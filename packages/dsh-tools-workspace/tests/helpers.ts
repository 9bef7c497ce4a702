import { Context } from '@deepseek-ai/cordis'
import { mkdtempSync, realpathSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SessionService from 'dsh-session'
import ToolService from 'dsh-tools'
import * as WorkspaceTools from 'dsh-tools-workspace'

export function tempDir(prefix = 'dsh-ws-'): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)))
}

/** A real Context with sessions, tools and the workspace tools, and a session on a fresh temp workspace. */
export async function setup(config: Partial<WorkspaceTools.Config> = {}) {
  const ctx = new Context()
  await ctx.plugin(SessionService)
  await ctx.plugin(ToolService)
  await ctx.plugin(WorkspaceTools, config)
  const ws = tempDir()
  const session = ctx.sessions.create(undefined, { cwd: ws })
  let n = 0
  const call = (name: string, args: Record<string, unknown>) =>
    ctx.tools.execute({ session, callId: `c${n++}`, name, arguments: args })
  return { ctx, ws, session, call }
}
