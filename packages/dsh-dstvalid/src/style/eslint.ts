import { toPosixRelative } from 'dsh-common'
import { diagnostic } from '../problems.ts'
import { checkEnv, runRecorded, whyNotJudged } from '../run.ts'
import type { CheckIO, Problem } from '../types.ts'
import { STYLE_CHECK, type StyleRun, type StyleTool } from './tool.ts'

/** The parts of ESLint's JSON formatter output this tool reads. */
interface EslintFileResult {
  filePath: string
  messages: { ruleId: string | null; severity: number; message: string; line?: number; fatal?: boolean }[]
}

const LINTED = /\.(?:[cm]?[jt]sx?|vue|svelte|astro)$/

/** Parse `eslint --format json`: errors only (severity 2; warnings are the project's own "not blocking"). */
export function parseEslintJson(root: string, stdout: string): Problem[] | undefined {
  let results: EslintFileResult[]
  try {
    results = JSON.parse(stdout) as EslintFileResult[]
  } catch {
    // Not a report (a crash, or output cut at the cap): the caller reports it.
    return undefined
  }
  if (!Array.isArray(results)) return undefined
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
    // 0: clean, 1: lint errors; 2: a configuration problem or a crash.
    const r = await runRecorded(STYLE_CHECK, argv, this.root, io, { env: checkEnv(), passed: x => x.exitCode === 0 })
    if (r.outcome === 'timeout' || r.outcome === 'error' || r.exitCode === 2) {
      return { status: r.outcome === 'timeout' ? 'timeout' : 'error', error: whyNotJudged('eslint', r, io.timeoutMs) }
    }
    const problems = parseEslintJson(this.root, r.stdout)
    return problems ? { status: 'ok', problems } : { status: 'error', error: whyNotJudged('eslint (no JSON report)', r, io.timeoutMs) }
  }
}
