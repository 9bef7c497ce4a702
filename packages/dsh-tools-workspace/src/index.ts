import type { Context } from '@deepseek-ai/cordis'
import type {} from 'dsh-tools'
import { createFileTools } from './files.ts'
import { createBashTool } from './bash.ts'
import { Config } from './config.ts'

export const name = 'dsh-tools-workspace'
export const inject = ['tools']

export { Config }

/** Registers read_file, write_file, edit_file, multi_edit and bash, each contained in the session's workspace. */
export function apply(ctx: Context, config: Config) {
  const logger = ctx.logger('dsh-tools-workspace')
  for (const tool of [...createFileTools(config), createBashTool(config, message => logger.warn(message))]) {
    ctx.tools.register(tool)
  }
}

export { createFileTools, createBashTool }
export { applyEdits, type Edit } from './edits.ts'
