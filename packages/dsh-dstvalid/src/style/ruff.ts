import { toPosixRelative } from 'dsh-common'
import { diagnostic } from '../problems.ts'
import { checkEnv, runRecorded, whyNotJudged } from '../run.ts'
import type { CheckIO, Problem } from '../types.ts'
import { STYLE_CHECK, type StyleRun, type StyleTool } from './tool.ts'

/** The parts of `ruff check --output-format=json` this tool reads. */
interface RuffMessage {
  code: string | null
  message: string
  filename: string
  location?: { row: number; column: number }
}

/** Parse ruff's JSON output (a `null` code is a syntax error). */
export function parseRuffJson(root: string, stdout: string): Problem[] | undefined {
  let messages: RuffMessage[]
  try {
    messages = JSON.parse(stdout) as RuffMessage[]
  } catch {
    // Not a report: the caller reports why.
    return undefined
  }
  if (!Array.isArray(messages)) return undefined
  return messages.map(m => diagnostic(STYLE_CHECK, toPosixRelative(root, m.filename), m.location?.row, m.code ? `ruff/${m.code}` : 'ruff', m.message))
}

/** The workspace's ruff (`ruff check`, no fixes written). */
export class RuffTool implements StyleTool {
  readonly name = 'ruff'

  constructor(private readonly root: string, private readonly bin: string) {}

  handles(file: string): boolean {
    return /\.pyi?$/.test(file)
  }

  async run(files: string[] | undefined, io: CheckIO): Promise<StyleRun> {
    // 0: clean, 1: violations; 2: ruff itself failed.
    const r = await runRecorded(STYLE_CHECK, [this.bin, 'check', '--output-format=json', '--no-fix', '--no-cache', ...(files ?? ['.'])], this.root, io, { env: checkEnv(), passed: x => x.exitCode === 0 })
    if (r.outcome === 'timeout' || r.outcome === 'error' || r.exitCode === 2) return { status: r.outcome === 'timeout' ? 'timeout' : 'error', error: whyNotJudged('ruff', r, io.timeoutMs) }
    const problems = parseRuffJson(this.root, r.stdout)
    return problems ? { status: 'ok', problems } : { status: 'error', error: whyNotJudged('ruff (no JSON report)', r, io.timeoutMs) }
  }
}
