/**
 * All three docs checks in one process (one tsx start-up): doc-typecheck,
 * verify-event-taxonomy and check-readmes. Every report is printed, even
 * after a failure; exit 1 when any check failed, 2 on a usage error.
 */
import { isMain, parseScriptArgs } from './lib/cli.ts'
import { typecheckDocs } from './lib/doc-blocks.ts'
import { checkReadmes } from './lib/readme-shape.ts'
import { verifyEventTaxonomy } from './lib/taxonomy.ts'

const USAGE = 'usage: tsx scripts/docs-check.ts [--root <dir>]'

export async function main(argv: string[]): Promise<number> {
  const { root } = parseScriptArgs(argv, USAGE)
  const reports = [typecheckDocs({ root }), verifyEventTaxonomy({ root }), await checkReadmes({ root })]
  process.stdout.write(reports.map(r => r.lines.join('\n')).join('\n\n') + '\n')
  return reports.every(r => r.ok) ? 0 : 1
}

if (isMain(import.meta.url)) process.exitCode = await main(process.argv.slice(2))
