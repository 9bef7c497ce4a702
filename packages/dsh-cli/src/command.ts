/** Streams a command writes to; tests pass their own. */
export interface CliIO {
  stdout(text: string): void
  stderr(text: string): void
  stdin: NodeJS.ReadableStream
  /** True when stdout is an interactive terminal (spinners, colours). */
  isTTY: boolean
  /** Environment seen by the command (defaults to process.env). */
  env: NodeJS.ProcessEnv
}

/** One `dsh` subcommand. */
export interface Command {
  name: string
  /** One line for `dsh --help`. */
  summary: string
  /** The full `dsh <name> --help` text; must be true to what `run` accepts. */
  usage: string
  /** Returns the exit code: 0 ok, 1 the checked thing failed, 2 bad usage/input. */
  run(argv: string[], io: CliIO): Promise<number>
}

/** Bad command-line usage: printed as one line, exit 2. */
export class UsageError extends Error {
  readonly code = 'USAGE'
}

export type FlagKind = 'string' | 'boolean' | 'strings'

export interface ArgSpec {
  flags: Record<string, FlagKind>
  /** Allowed number of positional arguments. */
  positionals?: { min?: number; max?: number; name?: string }
}

export interface ParsedArgs {
  flags: Record<string, string | boolean | string[] | undefined>
  positionals: string[]
}

/**
 * Parse `--flag value`, `--flag=value`, `--bool`, repeated `strings` flags
 * and positionals. `--help`/`-h` is always accepted as a boolean.
 * @throws UsageError for an unknown flag, a missing value, or a wrong positional count.
 */
export function parseArgs(argv: readonly string[], spec: ArgSpec, command: string): ParsedArgs {
  const flags: ParsedArgs['flags'] = {}
  const positionals: string[] = []
  const kinds: Record<string, FlagKind> = { help: 'boolean', ...spec.flags }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1))
      break
    }
    if (arg === '-h') {
      flags.help = true
      continue
    }
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=')
      const name = arg.slice(2, eq === -1 ? undefined : eq)
      const kind = kinds[name]
      if (!kind) throw new UsageError(`dsh ${command}: unknown flag --${name} (see dsh ${command} --help)`)
      if (kind === 'boolean') {
        if (eq !== -1) throw new UsageError(`dsh ${command}: --${name} takes no value`)
        flags[name] = true
        continue
      }
      let value: string | undefined
      if (eq !== -1) value = arg.slice(eq + 1)
      else {
        value = argv[i + 1]
        if (value === undefined || (value.startsWith('--') && value.length > 2)) throw new UsageError(`dsh ${command}: --${name} needs a value`)
        i++
      }
      if (kind === 'strings') flags[name] = [...((flags[name] as string[] | undefined) ?? []), value]
      else flags[name] = value
      continue
    }
    if (arg.startsWith('-') && arg.length > 1) throw new UsageError(`dsh ${command}: unknown flag ${arg} (see dsh ${command} --help)`)
    positionals.push(arg)
  }
  if (flags.help) return { flags, positionals }
  const { min = 0, max = 0, name = 'argument' } = spec.positionals ?? {}
  if (positionals.length < min) throw new UsageError(`dsh ${command}: missing ${name} (see dsh ${command} --help)`)
  if (positionals.length > max) throw new UsageError(`dsh ${command}: unexpected argument "${positionals[max]}" (see dsh ${command} --help)`)
  return { flags, positionals }
}

export function str(parsed: ParsedArgs, name: string): string | undefined {
  const v = parsed.flags[name]
  return typeof v === 'string' ? v : undefined
}

export function bool(parsed: ParsedArgs, name: string): boolean {
  return parsed.flags[name] === true
}

export function strs(parsed: ParsedArgs, name: string): string[] {
  const v = parsed.flags[name]
  return Array.isArray(v) ? v : []
}
