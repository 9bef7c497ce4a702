import { realpathSync } from 'node:fs'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { REPO_ROOT } from './workspace.ts'

/**
 * True when the module at `url` is the script node was started with.
 * Compared through realpath: a symlinked checkout must not make a check
 * silently skip its own main.
 */
export function isMain(url: string): boolean {
  const entry = process.argv[1]
  if (!entry) return false
  try {
    return realpathSync(resolve(entry)) === realpathSync(fileURLToPath(url))
  } catch {
    // argv[1] is not a file (node -e, a REPL): this module is not the entry.
    return false
  }
}

export interface ScriptArgs {
  root: string
  values: Record<string, string | boolean | undefined>
  positionals: string[]
}

/** `--root <dir>` (default: this repository) plus the script's own options; a bad flag exits 2. */
export function parseScriptArgs(argv: string[], usage: string, options: ParseArgsConfig['options'] = {}): ScriptArgs {
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      options: { root: { type: 'string' }, help: { type: 'boolean', short: 'h' }, ...options },
      allowPositionals: true,
    })
    if (values.help) {
      process.stdout.write(usage + '\n')
      process.exit(0)
    }
    const root = resolve(typeof values.root === 'string' ? values.root : REPO_ROOT)
    return { root, values: values as ScriptArgs['values'], positionals }
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${usage}\n`)
    process.exit(2)
  }
}
