import { Context } from '@deepseek-ai/cordis'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SessionService from 'dsh-session'
import * as jsonl from 'dsh-session/jsonl'

export function tempDir(prefix = 'dsh-session-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

/** A real Context with the sessions service (and, optionally, JSONL persistence). */
export async function createContext(options: { persist?: boolean } = {}): Promise<Context> {
  const ctx = new Context()
  await ctx.plugin(SessionService)
  if (options.persist) await ctx.plugin(jsonl, { intervalMs: 0 })
  return ctx
}
