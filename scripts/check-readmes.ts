/**
 * Every packages/*\/README.md has the one shape (purpose, Provides, API,
 * Events, Config, cordis.yml, Not here, a ```ts example), its Events rows
 * match the declarations in source, and its Config table matches the
 * plugin's schemastery Config exactly (`--write` regenerates both first).
 * `--print-config <package>` prints the Config table(s) to paste instead.
 * Exit 0 when clean, 1 otherwise, 2 on a usage error.
 */
import { isMain, parseScriptArgs } from './lib/cli.ts'
import { formatConfigTable } from './lib/config-table.ts'
import { loadPackagePlugins } from './lib/plugins.ts'
import { checkReadmes } from './lib/readme-shape.ts'
import { listPackages } from './lib/workspace.ts'

const USAGE = 'usage: tsx scripts/check-readmes.ts [--root <dir>] [--write] [--print-config <package>] [package …]'

export async function main(argv: string[]): Promise<number> {
  const args = parseScriptArgs(argv, USAGE, { 'print-config': { type: 'string' }, write: { type: 'boolean' } })
  const print = args.values['print-config']
  if (typeof print === 'string') return printConfig(args.root, print)
  const report = await checkReadmes({ root: args.root, only: args.positionals, write: args.values.write === true })
  process.stdout.write(report.lines.join('\n') + '\n')
  return report.ok ? 0 : 1
}

async function printConfig(root: string, name: string): Promise<number> {
  const pkg = listPackages(root).find(p => p.name === name || p.rel.endsWith(`/${name}`))
  if (!pkg) {
    process.stderr.write(`no package "${name}" under ${root}/packages\n`)
    return 2
  }
  const { plugins, errors } = await loadPackagePlugins(pkg)
  for (const error of errors) process.stderr.write(`${error}\n`)
  for (const plugin of plugins) {
    process.stdout.write(`\`${plugin.specifier}\`:\n\n${plugin.config ? formatConfigTable(plugin.config) : '(no Config)'}\n\n`)
  }
  return errors.length ? 1 : 0
}

if (isMain(import.meta.url)) process.exitCode = await main(process.argv.slice(2))
