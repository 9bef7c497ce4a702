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

/** A command-line program made of commands: `dsh`, or the distributable guard (`dsh-guard`). */
export interface Program {
  name: string
  version: string
  /** The first line of `--help`. */
  title: string
  /** The usage line's note, after the usage. */
  usageNote?: string
  commands: Command[]
  /** Commands that run but are not listed in `--help` (internal: what the hook client and the agent start). */
  hidden?: Command[]
}

/** The `dsh` command of this repo. */
const DSH: Program = {
  name: 'dsh',
  version: VERSION,
  title: 'dsh — a verified agent harness: every write is snapshotted, checked, and rolled back when it makes things worse.',
  usageNote: '(from the repo: pnpm dsh <command> …)',
  commands,
}

function topHelp(program: Program): string {
  const width = Math.max(...program.commands.map(c => c.name.length))
  const p = program.name
  return [
    program.title,
    '',
    `Usage: ${p} <command> [options]${program.usageNote ? `      ${program.usageNote}` : ''}`,
    '',
    'Commands:',
    ...program.commands.map(c => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    `Run "${p} help <command>" (or "${p} <command> --help") for a command's options; "${p} --version" for the version.`,
    '',
  ].join('\n')
}

/** Entry point: returns the process exit code. */
export async function main(argv: string[], io: CliIO = defaultIO(), program: Program = DSH): Promise<number> {
  const [name, ...rest] = argv
  if (name === '--version' || name === '-v') {
    io.stdout(`${program.name} ${program.version}\n`)
    return 0
  }
  if (!name || name === '--help' || name === '-h' || (name === 'help' && !rest.length)) {
    io.stdout(topHelp(program))
    return 0
  }
  const wanted = name === 'help' ? rest[0]! : name
  const command: Command | undefined = [...program.commands, ...(program.hidden ?? [])].find(c => c.name === wanted)
  if (!command) {
    io.stderr(`${program.name}: unknown command "${wanted}" (commands: ${program.commands.map(c => c.name).join(', ')})\n`)
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
export async function runMain(argv: string[], io: CliIO = defaultIO(), program: Program = DSH): Promise<number> {
  try {
    return await main(argv, io, program)
  } catch (error) {
    io.stderr(`${crashLine(error, io.env.DSH_DEBUG === '1', program.name)}\n`)
    return 1
  }
}

function crashLine(error: unknown, debug = false, name = 'dsh'): string {
  if (debug && error instanceof Error && error.stack) return `${name}: ${error.stack}`
  const message = error instanceof Error ? error.message : String(error)
  return `${name}: ${message.split('\n')[0]} (DSH_DEBUG=1 shows where)`
}
