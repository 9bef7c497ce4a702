/**
 * All four docs checks in one process (one tsx start-up): doc-typecheck,
 * verify-event-taxonomy, check-readmes and the prose width of the Markdown
 * (`--write` first regenerates the README tables the check compares exactly
 * and re-wraps over-long paragraphs). Every report is printed, even
 * after a failure; exit 1 when any check failed, 2 on a usage error.
 */
import { isMain, parseScriptArgs } from './lib/cli.ts'
import { typecheckDocs } from './lib/doc-blocks.ts'
import { checkProseWidth } from './lib/prose-wrap.ts'
import { checkReadmes } from './lib/readme-shape.ts'
import { verifyEventTaxonomy } from './lib/taxonomy.ts'

const USAGE = `usage: tsx scripts/docs-check.ts [--root <dir>] [--write]
  --write   regenerate each package README's Events and Config tables from the sources,
            and re-wrap paragraphs with lines over 100 characters at 80, first`

export async function main(argv: string[]): Promise<number> {
  const { root, values } = parseScriptArgs(argv, USAGE, { write: { type: 'boolean' } })
  const write = values.write === true
  const reports = [typecheckDocs({ root }), verifyEventTaxonomy({ root }), await checkReadmes({ root, write }), checkProseWidth({ root, write })]
  process.stdout.write(reports.map(r => r.lines.join('\n')).join('\n\n') + '\n')
  return reports.every(r => r.ok) ? 0 : 1
}

if (isMain(import.meta.url)) process.exitCode = await main(process.argv.slice(2))
