import { isAbsolute } from 'node:path'
import { toPosixRelative } from 'dsh-common'
import { diagnostic } from '../../problems.ts'
import { checkEnv, runRecorded, whyNotJudged } from '../../run.ts'
import type { CheckIO, Problem } from '../../types.ts'
import { STYLE_CHECK, type StyleRun, type StyleTool } from '../../modes/style-tool.ts'

const ANNOTATION = /^::(error|warning|notice) ([^:]*)::(.*)$/

/** What `biome format --write` fixes; the model sees it after the file name. */
const BIOME_NOT_FORMATTED = 'not formatted (biome format --write fixes it)'

/**
 * Parse Biome's GitHub reporter (`::error title=lint/suspicious/noDebugger,file=/w/a.ts,line=2,…::message`):
 * errors only; the title is the rule, or `format` for a file the formatter would change.
 */
export function parseBiomeGithub(root: string, stdout: string): Problem[] {
  const problems: Problem[] = []
  for (const line of stdout.split('\n')) {
    const m = ANNOTATION.exec(line.trim())
    if (!m || m[1] !== 'error') continue
    const params = new Map(m[2]!.split(',').map(kv => {
      const i = kv.indexOf('=')
      return [kv.slice(0, i).trim(), kv.slice(i + 1)] as const
    }))
    const file = params.get('file')
    if (!file) continue
    const rel = isAbsolute(file) ? toPosixRelative(root, file) : file.replace(/^\.\//, '')
    const title = params.get('title') ?? 'check'
    if (title === 'format') {
      problems.push(diagnostic(STYLE_CHECK, rel, undefined, 'biome/format', BIOME_NOT_FORMATTED))
      continue
    }
    const at = Number(params.get('line'))
    problems.push(diagnostic(STYLE_CHECK, rel, Number.isFinite(at) && at > 0 ? at : undefined, `biome/${title}`, m[3]!))
  }
  return problems
}

/** The workspace's own Biome (`biome check`: lint + format, nothing written). */
export class BiomeTool implements StyleTool {
  readonly name = 'biome'

  constructor(private readonly root: string, private readonly bin: string[]) {}

  handles(file: string): boolean {
    return /\.(?:[cm]?[jt]sx?|json|jsonc|css|graphql)$/.test(file)
  }

  async run(files: string[] | undefined, io: CheckIO): Promise<StyleRun> {
    const argv = [...this.bin, 'check', '--reporter=github', '--colors=off', '--no-errors-on-unmatched', ...(files ?? ['.'])]
    const r = await runRecorded(STYLE_CHECK, argv, this.root, io, { env: checkEnv(), passed: x => x.exitCode === 0 })
    if (r.outcome === 'timeout' || r.outcome === 'error') return { status: r.outcome, error: whyNotJudged('biome', r, io.timeoutMs) }
    const problems = parseBiomeGithub(this.root, r.stdout)
    if (r.exitCode !== 0 && !problems.length) return { status: 'error', error: whyNotJudged('biome', r, io.timeoutMs) }
    return { status: 'ok', problems }
  }
}
