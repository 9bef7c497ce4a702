import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { STYLE_CHECK, type StyleTool } from './style-tool.ts'
import type { Change, Check, CheckIO, Measurement, Problem } from '../types.ts'

export interface StyleCheckOptions {
  root: string
  /** The workspace's formatters and linters, run in this order. */
  tools: StyleTool[]
  /** `warn`: new problems are warnings (advisory); `rollback`: new problems in product code roll the write back. */
  mode: 'warn' | 'rollback'
}

/**
 * The workspace's own formatters and linters (the style mode), judged by
 * delta like diagnostics: the baseline runs each tool on the whole
 * workspace, a write re-runs them on the files it changed only, and a
 * problem the accepted state already had (a pre-existing lint error) is not
 * the write's.
 */
export class StyleCheck implements Check {
  readonly name = STYLE_CHECK
  readonly verb = 'checking style'
  readonly advisory: boolean

  constructor(private readonly options: StyleCheckOptions) {
    this.advisory = options.mode === 'warn'
  }

  /** The tools this check runs (for status and tests). */
  get tools(): readonly StyleTool[] {
    return this.options.tools
  }

  async measure(change: Change | undefined, io: CheckIO): Promise<Measurement> {
    const problems: Problem[] = []
    for (const tool of this.options.tools) {
      let files: string[] | undefined
      if (change) {
        // Deleted files are in the scope (their problems go away) but not given to the tool.
        files = change.files.filter(f => tool.handles(f) && existsSync(join(this.options.root, f)))
        if (!files.length) continue
      }
      const run = await tool.run(files, io)
      if (run.status !== 'ok') return { status: run.status, problems: [], scope: change ? change.files : 'all', error: run.error }
      problems.push(...run.problems)
    }
    return { status: 'ok', problems, scope: change ? [...change.files] : 'all' }
  }
}
