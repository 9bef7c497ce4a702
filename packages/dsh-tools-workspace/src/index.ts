import type { Context } from '@deepseek-ai/cordis'
import Schema from '@deepseek-ai/schemastery'
import type {} from 'dsh-tools'
import { createFileTools } from './files.ts'
import { createBashTool } from './bash.ts'

export { isCredentialName, hiddenEnv } from './bash.ts'

export const name = 'dsh-tools-workspace'
export const inject = ['tools']

export interface Config {
  /** bash: milliseconds before the command's whole process group is killed. */
  bashTimeoutMs: number
  /** bash: cap on combined output kept in the result, in bytes. */
  bashMaxOutputBytes: number
  /** read_file: cap on returned content, in bytes. */
  readMaxBytes: number
  /** bash: credential-looking variables a command may still see. */
  bashEnvAllow: string[]
}

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  bashTimeoutMs: Schema.natural().default(120_000).description('bash: milliseconds before the whole process group is killed.'),
  bashMaxOutputBytes: Schema.natural().default(32_768).description('bash: cap on combined output kept in the result, in bytes.'),
  readMaxBytes: Schema.natural().default(262_144).description('read_file: cap on returned content, in bytes.'),
  bashEnvAllow: Schema.array(String).default([]).description('bash: credential-looking environment variables (…KEY, …TOKEN…, …SECRET…, …PASSWORD…, …AUTH…) a command may still see; all others are removed from its environment.'),
})

/** Registers read_file, write_file, edit_file, multi_edit and bash, each contained in the session's workspace. */
export function apply(ctx: Context, config: Config) {
  for (const tool of [...createFileTools(config), createBashTool(config)]) {
    ctx.tools.register(tool)
  }
}

export { createFileTools, createBashTool }
export { applyEdits, type Edit } from './edits.ts'
