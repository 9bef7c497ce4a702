import type { Context } from '@deepseek-ai/cordis'
import Schema from '@deepseek-ai/schemastery'
import { resolve } from 'node:path'
import { loadScript, parseScript, type ScriptStep } from './script.ts'
import { createScriptedAdapter } from './scripted.ts'
import './index.ts'

export const name = 'dsh-llm/scripted'
export const inject = ['llm']

export interface Config {
  /** Path of a JSON Lines script (relative to the process cwd). */
  path?: string
  /** Inline script text, used when `path` is not given. */
  script?: string
}

export const Config: Schema<Config> = Schema.object({
  path: Schema.string().description('Path of a JSON Lines script (relative to the process cwd).'),
  script: Schema.string().description('Inline JSON Lines script, used when path is not given.'),
})

/** Registers the scripted adapter; a malformed script throws at apply, before anything runs. */
export function apply(ctx: Context, config: Config) {
  const steps: ScriptStep[] = config.path ? loadScript(resolve(config.path)) : parseScript(config.script ?? '', '<inline script>')
  ctx.llm.register(createScriptedAdapter(steps))
}
