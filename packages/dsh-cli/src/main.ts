import { readFileSync } from 'node:fs'
import type { CliIO, Command } from './command.ts'
import { UsageError } from './command.ts'
import { commands } from './commands/index.ts'

/** dsh-cli's version (its package.json), for `dsh --version`. */
const VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version

export function defaultIO(): CliIO {
  return {
    stdout: text => { process.stdout.write(text) },
    stderr: text => { process.stderr.write(text) },
    stdin: process.stdin,
    stderrIsTTY: !!process.stderr.isTTY,
    columns: () => process.stderr.columns || undefined,
    env: process.env,
  }
}

function topHelp(): string {
  const width = Math.max(...commands.map(c => c.name.length))
  return [
    'dsh — a verified agent harness: every write is snapshotted, checked, and rolled back when it makes things worse.',
    '',
    'Usage: dsh <command> [options]      (from the repo: pnpm dsh <command> …)',
    '',
    'Commands:',
    ...commands.map(c => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Run "dsh help <command>" (or "dsh <command> --help") for a command\'s options; "dsh --version" for the version.',
    '',
  ].join('\n')
}

/** Entry point: returns the process exit code. */
export async function main(argv: string[], io: CliIO = defaultIO()): Promise<number> {
  const [name, ...rest] = argv
  if (name === '--version' || name === '-v') {
    io.stdout(`dsh ${VERSION}\n`)
    return 0
  }
  if (!name || name === '--help' || name === '-h' || (name === 'help' && !rest.length)) {
    io.stdout(topHelp())
    return 0
  }
  const wanted = name === 'help' ? rest[0]! : name
  const command: Command | undefined = commands.find(c => c.name === wanted)
  if (!command) {
    io.stderr(`dsh: unknown command "${wanted}" (commands: ${commands.map(c => c.name).join(', ')})\n`)
    return 2
  }
  if (name === 'help' || rest.includes('--help') || rest.includes('-h')) {
    io.stdout(command.usage.endsWith('\n') ? command.usage : command.usage + '\n')
    return 0
  }
  try {
    return await command.run(rest, io)
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string })?.code === 'USAGE') {
      io.stderr(`${(error as Error).message}\n`)
      return 2
    }
    throw error
  }
}

/**
 * What both launchers (`bin/dsh.mjs`, `src/bin.ts`) run: `main`, with any
 * crash reported as one `dsh: …` line (the stack only with DSH_DEBUG=1)
 * and exit status 1.
 */
export async function runMain(argv: string[], io: CliIO = defaultIO()): Promise<number> {
  try {
    return await main(argv, io)
  } catch (error) {
    io.stderr(`${crashLine(error, io.env.DSH_DEBUG === '1')}\n`)
    return 1
  }
}

function crashLine(error: unknown, debug = false): string {
  if (debug && error instanceof Error && error.stack) return `dsh: ${error.stack}`
  const message = error instanceof Error ? error.message : String(error)
  return `dsh: ${message.split('\n')[0]} (DSH_DEBUG=1 shows where)`
}
