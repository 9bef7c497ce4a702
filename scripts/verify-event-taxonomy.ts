/**
 * The event table in docs/architecture.md must name exactly the events
 * declared in packages/*\/src (Cordis `Events` and `SessionEventMap`), each
 * with its declared mode. Prints what is missing, stale or mismatched.
 * Exit 0 when they agree, 1 otherwise, 2 on a usage error.
 */
import { isMain, parseScriptArgs } from './lib/cli.ts'
import { verifyEventTaxonomy } from './lib/taxonomy.ts'

const USAGE = 'usage: tsx scripts/verify-event-taxonomy.ts [--root <dir>] [--doc <path, default docs/architecture.md>]'

export function main(argv: string[]): number {
  const args = parseScriptArgs(argv, USAGE, { doc: { type: 'string' } })
  const doc = typeof args.values.doc === 'string' ? args.values.doc : undefined
  const report = verifyEventTaxonomy({ root: args.root, doc })
  process.stdout.write(report.lines.join('\n') + '\n')
  return report.ok ? 0 : 1
}

if (isMain(import.meta.url)) process.exitCode = main(process.argv.slice(2))
