import { diagnostic } from '../../problems.ts'
import { checkEnv, runRecorded, whyNotJudged } from '../../run.ts'
import type { CheckIO, Problem } from '../../types.ts'
import { STYLE_CHECK, type StyleRun, type StyleTool } from '../../modes/style-tool.ts'

const GOFMT_NOT_FORMATTED = 'not formatted (gofmt -w fixes it)'

/** Parse `gofmt -l`: one unformatted file per stdout line (syntax errors on stderr are the compile check's). */
export function parseGofmt(stdout: string): Problem[] {
  return stdout.split('\n').map(l => l.trim()).filter(Boolean)
    .map(file => diagnostic(STYLE_CHECK, file.replace(/^\.\//, ''), undefined, 'gofmt', GOFMT_NOT_FORMATTED))
}

/** `gofmt -l`: Go's own formatter (every Go module uses it; nothing is written). */
export class GofmtTool implements StyleTool {
  readonly name = 'gofmt'

  constructor(private readonly root: string, private readonly bin = 'gofmt') {}

  handles(file: string): boolean {
    return file.endsWith('.go')
  }

  async run(files: string[] | undefined, io: CheckIO): Promise<StyleRun> {
    // Exit 2 with a listing on stdout: some file does not parse; the files it could read are still listed.
    const r = await runRecorded(STYLE_CHECK, [this.bin, '-l', ...(files ?? ['.'])], this.root, io,
      { env: checkEnv(), passed: x => x.exitCode === 0 && !x.stdout.trim() })
    if (r.outcome === 'timeout' || r.outcome === 'error') return { status: r.outcome, error: whyNotJudged('gofmt', r, io.timeoutMs) }
    return { status: 'ok', problems: parseGofmt(r.stdout) }
  }
}
