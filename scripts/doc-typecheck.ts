/**
 * Type-checks every ```ts block in README.md, docs/**\/*.md and
 * packages/*\/README.md against the packages' sources; a block fenced
 * ```ts ignore-check opts out, and more than 20% opted out fails.
 * Exit 0 when clean, 1 otherwise, 2 on a usage error.
 */
import { isMain, parseScriptArgs } from './lib/cli.ts'
import { MAX_OPT_OUT_RATIO, typecheckDocs } from './lib/doc-blocks.ts'

const USAGE = 'usage: tsx scripts/doc-typecheck.ts [--root <dir>] [--max-opt-out <ratio, default 0.2>]'

export function main(argv: string[]): number {
  const args = parseScriptArgs(argv, USAGE, { 'max-opt-out': { type: 'string' } })
  const raw = args.values['max-opt-out']
  const maxOptOutRatio = typeof raw === 'string' ? Number(raw) : MAX_OPT_OUT_RATIO
  if (!Number.isFinite(maxOptOutRatio) || maxOptOutRatio < 0 || maxOptOutRatio > 1) {
    process.stderr.write(`--max-opt-out must be a ratio between 0 and 1\n${USAGE}\n`)
    return 2
  }
  const report = typecheckDocs({ root: args.root, maxOptOutRatio })
  process.stdout.write(report.lines.join('\n') + '\n')
  return report.ok ? 0 : 1
}

if (isMain(import.meta.url)) process.exitCode = main(process.argv.slice(2))
