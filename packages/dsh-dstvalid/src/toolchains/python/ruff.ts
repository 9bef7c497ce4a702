import { toPosixRelative } from 'dsh-common'
import { diagnostic } from '../../problems.ts'
import type { CheckIO, Problem } from '../../types.ts'
import { STYLE_CHECK, jsonArray, runJsonLinter, type StyleRun, type StyleTool } from '../../modes/style-tool.ts'

/** The parts of `ruff check --output-format=json` this tool reads. */
interface RuffMessage {
  code: string | null
  message: string
  filename: string
  location?: { row: number; column: number }
}

/** Parse ruff's JSON output (a `null` code is a syntax error). */
export function parseRuffJson(root: string, stdout: string): Problem[] | undefined {
  return jsonArray<RuffMessage>(stdout)?.map(m => diagnostic(STYLE_CHECK, toPosixRelative(root, m.filename), m.location?.row,
    m.code ? `ruff/${m.code}` : 'ruff', m.message))
}

/** The workspace's ruff (`ruff check`, no fixes written). */
export class RuffTool implements StyleTool {
  readonly name = 'ruff'

  constructor(private readonly root: string, private readonly bin: string) {}

  handles(file: string): boolean {
    return /\.pyi?$/.test(file)
  }

  async run(files: string[] | undefined, io: CheckIO): Promise<StyleRun> {
    const argv = [this.bin, 'check', '--output-format=json', '--no-fix', '--no-cache', ...(files ?? ['.'])]
    return runJsonLinter('ruff', argv, this.root, io, stdout => parseRuffJson(this.root, stdout))
  }
}
