import type { CliIO, Command } from './command.ts'
import { UsageError } from './command.ts'
import { commands } from './commands/index.ts'

export function defaultIO(): CliIO {
  return {
    stdout: text => { process.stdout.write(text) },
    stderr: text => { process.stderr.write(text) },
    stdin: process.stdin,
    isTTY: !!process.stdout.isTTY,
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
    'Run "dsh <command> --help" for a command\'s options.',
    '',
  ].join('\n')
}

/** Entry point: returns the process exit code. */
export async function main(argv: string[], io: CliIO = defaultIO()): Promise<number> {
  const [name, ...rest] = argv
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.stdout(topHelp())
    return name ? 0 : 2
  }
  const command: Command | undefined = commands.find(c => c.name === name)
  if (!command) {
    io.stderr(`dsh: unknown command "${name}" (commands: ${commands.map(c => c.name).join(', ')})\n`)
    return 2
  }
  if (rest.includes('--help') || rest.includes('-h')) {
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
