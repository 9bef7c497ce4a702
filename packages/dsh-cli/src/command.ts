import { existsSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs as utilParseArgs } from 'node:util'

/** Streams a command writes to; tests pass their own. */
export interface CliIO {
  stdout(text: string): void
  stderr(text: string): void
  stdin: NodeJS.ReadableStream
  /** True when stderr, where the spinner draws, is an interactive terminal (stdout's own state does not matter). */
  stderrIsTTY: boolean
  /** stderr's width in columns, when it is a terminal (the spinner line is cut to fit, never wrapped). */
  columns?: () => number | undefined
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

/** A subcommand's run: its own arguments (after the subcommand's name), the exit code. */
export type SubcommandRun = (argv: string[], io: CliIO) => number | Promise<number>

/**
 * A command made of subcommands (`dsh claims check|show`): runs the one the
 * first argument names.
 * @throws UsageError naming the subcommands when it is missing or unknown.
 */
export function withSubcommands(command: Omit<Command, 'run'>, subcommands: Record<string, SubcommandRun>): Command {
  const names = Object.keys(subcommands)
  return {
    ...command,
    async run([sub, ...rest], io) {
      const run = sub === undefined ? undefined : subcommands[sub]
      if (run) return run(rest, io)
      const problem = sub === undefined ? 'missing subcommand' : `unknown subcommand "${sub}"`
      throw new UsageError(`dsh ${command.name}: ${problem}; use ${names.slice(0, -1).join(', ')} or ${names.at(-1)} (see dsh ${command.name} --help)`)
    },
  }
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
 * and positionals, with `node:util` `parseArgs` (strict). `--help`/`-h` is
 * always accepted as a boolean; `--` ends the flags.
 * @throws UsageError for an unknown flag, a missing value, or a wrong positional count.
 */
export function parseArgs(argv: readonly string[], spec: ArgSpec, command: string): ParsedArgs {
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }> = { help: { type: 'boolean', short: 'h' } }
  for (const [name, kind] of Object.entries(spec.flags)) options[name] = kind === 'boolean' ? { type: 'boolean' } : { type: 'string', multiple: kind === 'strings' }
  let parsed: { values: Record<string, string | boolean | (string | boolean)[] | undefined>; positionals: string[] }
  try {
    parsed = utilParseArgs({ args: [...argv], options, strict: true, allowPositionals: true })
  } catch (error) {
    throw new UsageError(usageProblem(error as Error & { code?: string }, spec, command))
  }
  const flags: ParsedArgs['flags'] = {}
  for (const [name, value] of Object.entries(parsed.values)) flags[name] = Array.isArray(value) ? value.map(String) : value
  const positionals = parsed.positionals
  if (flags.help) return { flags, positionals }
  const { min = 0, max = 0, name = 'argument' } = spec.positionals ?? {}
  if (positionals.length < min) throw new UsageError(`dsh ${command}: missing ${name} (see dsh ${command} --help)`)
  if (positionals.length > max) throw new UsageError(`dsh ${command}: unexpected argument "${positionals[max]}" (see dsh ${command} --help)`)
  return { flags, positionals }
}

/** One line for what `util.parseArgs` rejected, in dsh's words. */
function usageProblem(error: Error & { code?: string }, spec: ArgSpec, command: string): string {
  const flag = /'(-{1,2}[^' <]+)/.exec(error.message)?.[1] ?? ''
  const name = flag.replace(/^-+/, '')
  if (error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `dsh ${command}: unknown flag ${flag} (see dsh ${command} --help)`
  if (error.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    return spec.flags[name] === 'boolean' || name === 'help' ? `dsh ${command}: ${flag} takes no value` : `dsh ${command}: ${flag} needs a value`
  }
  return `dsh ${command}: ${error.message}`
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

/**
 * The command's `--workspace DIR`, resolved (or `fallback` when not given):
 * an existing directory.
 * @throws UsageError when it is not given and there is no fallback, does not exist, or is not a directory.
 */
export function workspaceArg(parsed: ParsedArgs, command: string, fallback?: string): string {
  const given = str(parsed, 'workspace') ?? fallback
  if (given === undefined) throw new UsageError(`dsh ${command}: --workspace DIR is required (see dsh ${command} --help)`)
  const dir = resolve(given)
  if (!existsSync(dir)) throw new UsageError(`dsh ${command}: workspace ${dir} does not exist`)
  if (!statSync(dir).isDirectory()) throw new UsageError(`dsh ${command}: workspace ${dir} is not a directory`)
  return dir
}
