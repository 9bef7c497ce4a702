import { toPosixRelative } from 'dsh-common'
import { diagnostic } from '../../problems.ts'
import type { CheckIO, Problem } from '../../types.ts'
import { STYLE_CHECK, jsonArray, runJsonLinter, type StyleRun, type StyleTool } from '../../modes/style-tool.ts'

/** The parts of ESLint's JSON formatter output this tool reads. */
interface EslintFileResult {
  filePath: string
  messages: { ruleId: string | null; severity: number; message: string; line?: number; fatal?: boolean }[]
}

const LINTED = /\.(?:[cm]?[jt]sx?|vue|svelte|astro)$/

/** Parse `eslint --format json`: errors only (severity 2; warnings are the project's own "not blocking"). */
export function parseEslintJson(root: string, stdout: string): Problem[] | undefined {
  const results = jsonArray<EslintFileResult>(stdout)
  if (!results) return undefined
  const problems: Problem[] = []
  for (const r of results) {
    const file = toPosixRelative(root, r.filePath)
    for (const m of r.messages ?? []) {
      if (m.severity !== 2) continue
      problems.push(diagnostic(STYLE_CHECK, file, m.line, m.ruleId ? `eslint/${m.ruleId}` : 'eslint', m.message))
    }
  }
  return problems
}

/** The workspace's own ESLint, through its JSON formatter. */
export class EslintTool implements StyleTool {
  readonly name = 'eslint'

  /** `bin`: `[node, <ws>/node_modules/eslint/bin/eslint.js]`; `major`: its major version (flags differ before 9). */
  constructor(private readonly root: string, private readonly bin: string[], private readonly major: number) {}

  handles(file: string): boolean {
    return LINTED.test(file)
  }

  async run(files: string[] | undefined, io: CheckIO): Promise<StyleRun> {
    const argv = [...this.bin, '--format', 'json', '--no-error-on-unmatched-pattern', ...(this.major >= 9 ? ['--no-warn-ignored'] : []), ...(files ?? ['.'])]
    return runJsonLinter('eslint', argv, this.root, io, stdout => parseEslintJson(this.root, stdout))
  }
}
