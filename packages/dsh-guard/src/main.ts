/**
 * `dsh-guard`: the agent-facing part of the suite as one command, the entry
 * of the distributable bundle (see ../README.md). The commands are dsh-cli's
 * own; `setup`, `uninstall`, `status`, `serve` and `mcp` are its `hooks`
 * subcommands at the top level.
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs'
import { delimiter, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runMain, type CliIO, type Command, type Program } from 'dsh-cli'
import { claimsCommand } from 'dsh-cli/commands/claims.ts'
import { hooksCommandWith } from 'dsh-cli/commands/hooks.ts'
import { GUARD_COMMANDS } from 'dsh-host-hooks'
import { proofCommand } from 'dsh-cli/commands/proof.ts'
import { recoverCommand } from 'dsh-cli/commands/recover.ts'
import { tryCommand } from 'dsh-cli/commands/try.ts'
import { nodeTooOld } from 'dsh-cli/node-check.ts'

const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version

/** This package's directory: cli.mjs's in the built package (src/main.ts's parent when run from source, where no launcher is installed). */
const PACKAGE = dirname(fileURLToPath(import.meta.url))

/** An executable called `name` in `path`'s directories (the first), or undefined. */
function onPathAt(name: string, path: string | undefined): string | undefined {
  return (path ?? '').split(delimiter).filter(Boolean).map(d => join(d, name)).find(f => existsSync(f))
}

const real = (file: string) => (existsSync(file) ? realpathSync(file) : file)

/**
 * Whether the hooks this package installs can name its commands on PATH
 * (no path of this machine in them): `dsh-guard-hook` and `dsh-guard` on
 * PATH are this package's own launcher and CLI, not npx's passing copy.
 */
function guardOnPath(io: CliIO): { notOnPath?: string } {
  if (/[/\\]_npx[/\\]/.test(real(PACKAGE))) return { notOnPath: 'run through npx, dsh-guard is on PATH only until npx ends' }
  for (const [name, file] of [[GUARD_COMMANDS.hook, join(PACKAGE, 'hook')], [GUARD_COMMANDS.cli, join(PACKAGE, 'cli.mjs')]] as const) {
    const found = onPathAt(name, io.env.PATH)
    if (!found) return { notOnPath: `${name} is not on PATH` }
    if (real(found) !== real(file)) return { notOnPath: `the ${name} on PATH (${found}) is not this one (${file})` }
  }
  return {}
}

const hooksCommand = hooksCommandWith({ onPath: guardOnPath, installedBy: { install: 'dsh-guard setup', uninstall: 'dsh-guard uninstall' } })

/**
 * dsh-cli's texts name its commands as `dsh …`; here each names this CLI's
 * own (`dsh hooks install` is `dsh-guard setup`). Only our own texts pass
 * through it: usage, errors, and the hooks subcommands' reports.
 */
function respell(text: string): string {
  return text
    .replace(/(?<![\w-]|pnpm )dsh hooks install\b/g, 'dsh-guard setup')
    .replace(/(?<![\w-]|pnpm )dsh hooks (uninstall|status|serve|mcp)\b/g, 'dsh-guard $1')
    .replace(/(?<![\w-]|pnpm )dsh (recover|proof|claims|try)\b/g, 'dsh-guard $1')
}

/** `command` with its usage, its errors and (`reports`: texts that are all ours) its output naming this CLI's commands. */
function respelled(command: Command, reports = false): Command {
  return {
    ...command,
    usage: respell(command.usage),
    async run(argv, io) {
      const spelled: CliIO = { ...io, stderr: t => io.stderr(respell(t)), stdout: reports ? t => io.stdout(respell(t)) : io.stdout }
      try {
        return await command.run(argv, spelled)
      } catch (error) {
        // A usage error is printed as one line by runMain (its code, as dsh-cli's UsageError has it).
        if ((error as { code?: string })?.code === 'USAGE') throw Object.assign(new Error(respell((error as Error).message)), { code: 'USAGE' })
        throw error
      }
    },
  }
}

/** One `hooks` subcommand as a top-level command of its own. */
function hooksSub(name: string, sub: string, summary: string, usage: string): Command {
  return respelled({ name, summary, usage, run: (argv, io) => hooksCommand.run([sub, ...argv], io) }, true)
}

const setupUsage = `Usage: dsh-guard setup --agent AGENT [--workspace DIR | --user] [--no-start]

Guard an agent with dsh: every write it makes is snapshotted before it runs,
checked after it (type-check, the tests it can affect) and rolled back when it
made the project worse; the agent is told why.

Without --user: this project only. Claude Code: .claude/settings.local.json
and the project's entry in ~/.claude.json, which no one commits. Codex
(.codex/hooks.json, .codex/config.toml) and Gemini CLI (.gemini/settings.json)
have no such files: there the hooks run dsh-guard-hook and dsh-guard from
PATH, so the files a team commits hold no path of this machine (this needs
npm i -g dsh-guard; through npx it refuses).
With --user: every project (the agent's files in your home directory).
It prints which files it wrote, at which level, and starts the project's
guard (not with --no-start), so the next session's first hook finds it up.

  --agent AGENT    claude-code | codex | gemini
  --workspace DIR  the project (default: the current directory)
  --user           every project of this user instead of one
  --no-start       do not start the project's guard now

Undo it with: dsh-guard uninstall [--agent AGENT] [--workspace DIR | --user]
`

const uninstallUsage = `Usage: dsh-guard uninstall [--agent AGENT] [--workspace DIR | --user]

Take out exactly what dsh-guard setup wrote (a file untouched since is
restored byte for byte, one it created is removed); the user's own entries
stay. Without --agent: every agent set up in the project (--user: for this
user). The project's guard stops once no agent is set up there.

  --agent AGENT    claude-code | codex | gemini
  --workspace DIR  the project (default: the current directory)
  --user           what setup --user wrote, in your home directory
`

const statusUsage = `Usage: dsh-guard status [--workspace DIR] [--json]

What the agents' configuration runs of the guard in this project (and at
user level), and whether the project's guard is up.

  --workspace DIR  the project (default: the current directory)
  --json           print it as JSON

Exit status: 0 an agent is guarded, 1 none is, 2 bad usage.
`

const serveUsage = `Usage: dsh-guard serve [--workspace DIR] [--idle MIN]

The warm guard of one project (the hook client starts it on the first hook
call): listens on <workspace>/.dsh/hooks/host.sock, exits after --idle
minutes without a hook call (default 30).
`

const mcpUsage = `Usage: dsh-guard mcp [--workspace DIR]

The stdio MCP server offering the checkpoint tool (the agent starts it;
setup registers it).
`

export const GUARD: Program = {
  name: 'dsh-guard',
  version: VERSION,
  title: 'dsh-guard — guards Claude Code, Codex and Gemini CLI: a write that makes the project worse is rolled back, and the agent is told why.',
  commands: [
    hooksSub('setup', 'install', 'guard an agent in this project (or, --user, in every project)', setupUsage),
    hooksSub('uninstall', 'uninstall', 'take out exactly what setup wrote', uninstallUsage),
    hooksSub('status', 'status', 'what is installed for this project, and whether its guard is up', statusUsage),
    ...[recoverCommand, proofCommand, claimsCommand, tryCommand].map(c => respelled(c)),
  ],
  // What the hook client and the agents start; `hooks …` as in `dsh hooks …`.
  hidden: [
    hooksSub('serve', 'serve', 'the warm guard of one workspace', serveUsage),
    hooksSub('mcp', 'mcp', 'the MCP server offering the checkpoint tool', mcpUsage),
    hooksCommand,
  ],
}

const tooOld = nodeTooOld()
if (tooOld) {
  process.stderr.write(`${tooOld.replace(/^dsh:/, 'dsh-guard:')}\n`)
  process.exitCode = 1
} else {
  process.exitCode = await runMain(process.argv.slice(2), undefined, GUARD)
}
