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

const hooksCommand = hooksCommandWith({ onPath: guardOnPath })

/** One `hooks` subcommand as a top-level command of its own. */
function hooksSub(name: string, sub: string, summary: string, usage: string): Command {
  return { name, summary, usage, run: (argv, io) => hooksCommand.run([sub, ...argv], io) }
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

export const GUARD: Program = {
  name: 'dsh-guard',
  version: VERSION,
  title: 'dsh-guard — guards Claude Code, Codex and Gemini CLI: a write that makes the project worse is rolled back, and the agent is told why.',
  commands: [
    hooksSub('setup', 'install', 'guard an agent in this project (or, --user, in every project)', setupUsage),
    hooksSub('uninstall', 'uninstall', 'take out exactly what setup wrote', hooksCommand.usage),
    hooksSub('status', 'status', 'what is installed for this project, and whether its guard is up', hooksCommand.usage),
    recoverCommand,
    proofCommand,
    claimsCommand,
    tryCommand,
  ],
  // What the hook client and the agents start; `hooks …` as in `dsh hooks …`.
  hidden: [
    hooksSub('serve', 'serve', 'the warm guard of one workspace', hooksCommand.usage),
    hooksSub('mcp', 'mcp', 'the MCP server offering the checkpoint tool', hooksCommand.usage),
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
