import { diagnostic } from '../../problems.ts'
import { checkEnv, runRecorded, whyNotJudged } from '../../run.ts'
import type { CheckIO, Problem } from '../../types.ts'
import { STYLE_CHECK, type StyleRun, type StyleTool } from '../../modes/style-tool.ts'

/** What `prettier --write` fixes; the model sees it after the file name. */
const NOT_FORMATTED = 'not formatted (prettier --write fixes it)'

const ERROR = /^\[error\] ([^:]+): (.*?)(?: \((\d+):\d+\))?$/

/**
 * Parse `prettier --list-different`: one unformatted file per stdout line;
 * a file prettier could not parse is an `[error] <file>: <message> (l:c)` line on stderr.
 */
export function parsePrettier(stdout: string, stderr: string): Problem[] {
  const problems: Problem[] = []
  for (const line of stdout.split('\n').map(l => l.trim()).filter(Boolean)) {
    problems.push(diagnostic(STYLE_CHECK, line.replace(/\\/g, '/'), undefined, 'prettier', NOT_FORMATTED))
  }
  for (const line of stderr.split('\n')) {
    const m = ERROR.exec(line.trim())
    if (m && !/No (?:files|matching files)/.test(line)) problems.push(diagnostic(STYLE_CHECK, m[1]!.replace(/\\/g, '/'),
      m[3] ? Number(m[3]) : undefined, 'prettier', m[2]!))
  }
  return problems
}

/** The workspace's own Prettier, as `--list-different` (nothing is written). */
export class PrettierTool implements StyleTool {
  readonly name = 'prettier'

  constructor(private readonly root: string, private readonly bin: string[]) {}

  handles(file: string): boolean {
    // Prettier decides itself (`--ignore-unknown`); lockfiles are never worth a run.
    return !/(^|\/)(pnpm-lock\.yaml|package-lock\.json|yarn\.lock)$/.test(file)
  }

  async run(files: string[] | undefined, io: CheckIO): Promise<StyleRun> {
    const argv = [...this.bin, '--list-different', '--ignore-unknown', '--no-error-on-unmatched-pattern', ...(files ?? ['.'])]
    // 0: all formatted, 1: some are not; 2: something could not be parsed (reported per file) or prettier failed.
    const r = await runRecorded(STYLE_CHECK, argv, this.root, io, { env: checkEnv(), passed: x => x.exitCode === 0 })
    if (r.outcome === 'timeout' || r.outcome === 'error') return { status: r.outcome, error: whyNotJudged('prettier', r, io.timeoutMs) }
    const problems = parsePrettier(r.stdout, r.stderr)
    if (r.exitCode === 2 && !problems.some(p => p.message !== NOT_FORMATTED)) return { status: 'error', error: whyNotJudged('prettier', r, io.timeoutMs) }
    return { status: 'ok', problems }
  }
}
