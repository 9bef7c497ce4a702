/**
 * All three docs checks in one process (`--write` first regenerates the
 * README tables the check compares exactly) (one tsx start-up): doc-typecheck,
 * verify-event-taxonomy and check-readmes. Every report is printed, even
 * after a failure; exit 1 when any check failed, 2 on a usage error.
 */
import { isMain, parseScriptArgs } from './lib/cli.ts'
import { typecheckDocs } from './lib/doc-blocks.ts'
import { checkReadmes } from './lib/readme-shape.ts'
import { verifyEventTaxonomy } from './lib/taxonomy.ts'

const USAGE = `usage: tsx scripts/docs-check.ts [--root <dir>] [--write]
  --write   regenerate each package README's Events and Config tables from the sources first`

export async function main(argv: string[]): Promise<number> {
  const { root, values } = parseScriptArgs(argv, USAGE, { write: { type: 'boolean' } })
  const reports = [typecheckDocs({ root }), verifyEventTaxonomy({ root }), await checkReadmes({ root, write: values.write === true })]
  process.stdout.write(reports.map(r => r.lines.join('\n')).join('\n\n') + '\n')
  return reports.every(r => r.ok) ? 0 : 1
}

if (isMain(import.meta.url)) process.exitCode = await main(process.argv.slice(2))
