import { Context } from '@deepseek-ai/cordis'
import { mkdtempSync, realpathSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SessionService from 'dsh-session'
import ToolService from 'dsh-tools'
import * as WorkspaceTools from 'dsh-tools-workspace'
import LlmService from 'dsh-llm'
import * as Scripted from 'dsh-llm/scripted'
import AgentService from 'dsh-agent'

export function tempDir(): string {
  return realpathSync(mkdtempSync(join(tmpdir(), 'dsh-agent-')))
}

/** A real harness in one Context: sessions, tools, workspace tools, the scripted model and the agent loop. */
export async function harness(script: object[]) {
  const ctx = new Context()
  await ctx.plugin(SessionService)
  await ctx.plugin(ToolService)
  await ctx.plugin(WorkspaceTools, {})
  await ctx.plugin(LlmService)
  await ctx.plugin(Scripted, { script: script.map(s => JSON.stringify(s)).join('\n') })
  await ctx.plugin(AgentService, {})
  await new Promise(r => setTimeout(r, 0))
  const ws = tempDir()
  const session = ctx.sessions.create(undefined, { cwd: ws })
  const agent = ctx.agents.create(session)
  return { ctx, ws, session, agent, types: () => session.events.map(e => e.type) }
}
