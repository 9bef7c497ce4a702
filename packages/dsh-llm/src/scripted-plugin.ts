import type { Context } from '@deepseek-ai/cordis'
import Schema from '@deepseek-ai/schemastery'
import { resolve } from 'node:path'
import { optional } from 'dsh-common'
import { loadScript, parseScript, type ScriptStep } from './script.ts'
import { createScriptedAdapter } from './scripted.ts'
import './index.ts'

export const name = 'dsh-llm/scripted'
export const inject = ['llm']

export const Config = Schema.object({
  path: optional(Schema.string().description('Path of a JSON Lines script (relative to the process cwd).')),
  script: optional(Schema.string().description('Inline JSON Lines script, used when path is not given.')),
})
export type Config = Schemastery.TypeT<typeof Config>

/** Registers the scripted adapter; a malformed script throws at apply, before anything runs. */
export function apply(ctx: Context, config: Config) {
  const steps: ScriptStep[] = config.path ? loadScript(resolve(config.path)) : parseScript(config.script ?? '', '<inline script>')
  ctx.llm.register(createScriptedAdapter(steps))
}
