import { Context } from '@deepseek-ai/cordis'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SessionService from 'dsh-session'
import ToolService, { type ToolDefinition } from 'dsh-tools'

export async function createContext(): Promise<Context> {
  const ctx = new Context()
  await ctx.plugin(SessionService)
  await ctx.plugin(ToolService)
  return ctx
}

export function session(ctx: Context) {
  return ctx.sessions.create(undefined, { cwd: mkdtempSync(join(tmpdir(), 'dsh-tools-')) })
}

export const echoTool: ToolDefinition<{ text: string }> = {
  name: 'echo',
  description: 'Echo text.',
  effects: 'read',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
  execute: args => ({ content: args.text }),
}
