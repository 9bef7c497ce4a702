import { existsSync } from 'node:fs'
import { homedir } from 'node:os'
import { getHeapStatistics } from 'node:v8'
import { join, relative, resolve } from 'node:path'
import { hiddenEnv } from 'dsh-common'
import {
  ADAPTERS, adapterFor, applyHostSettings, claimHost, GUARD_COMMANDS, HookHost, HostRunningError, hookPaths, hostStatus, installedAgents, installHooks, listenHooks,
  liveHooks, readHostSettings, runMcpServer, SettingsError, startHost, stopHost, uninstallHooks, writeNoteTemplates, type HostSettings, type HostStatus, type InstalledBy, type InstallReport, type LiveHooks,
} from 'dsh-host-hooks'
import type {} from 'dsh-dstvalid'
import { bootHarness, ConfigError } from '../harness.ts'
import { bool, parseArgs, str, UsageError, withSubcommands, workspaceArg, type CliIO, type Command } from '../command.ts'

const agents = ADAPTERS.map(a => a.agent)

const usage = `Usage: dsh hooks install --agent AGENT [--workspace DIR | --user] [--no-start]
       dsh hooks uninstall [--agent AGENT] [--workspace DIR | --user]
       dsh hooks status [--workspace DIR] [--json]
       dsh hooks serve [--workspace DIR] [--idle MIN]
       dsh hooks mcp [--workspace DIR]

Guard an agent that has hooks (${agents.join(', ')}) with this suite: every
write the agent makes is snapshotted, checked, and rolled back when it makes
the project worse; the agent is told why, in its own protocol.

install    Write the agent's configuration for this project (Claude Code:
           .claude/settings.local.json, which Claude Code keeps out of git,
           and the project's entry in ~/.claude.json; Codex: .codex/hooks.json
           and .codex/config.toml; Gemini CLI: .gemini/settings.json) or, with
           --user, for every project (~/.claude/settings.json and
           ~/.claude.json; ~/.codex/…; ~/.gemini/settings.json), merged with
           what is there: the user's own hooks stay. Running it again changes
           nothing. What it changed is recorded in <workspace>/.dsh (--user:
           ~/.dsh). A project install then starts the project's host (not
           with --no-start), so the first session finds it up.
uninstall  Take out exactly what install added (a file untouched since is
           restored byte for byte). Without --agent: every installed agent.
           The project's host stops once no hook of ours is left.
status     What is installed, whether the workspace's host is up, and the
           workspace's host settings.
serve      The warm host itself (the hook client starts it on the first hook
           call): boots the suite from the repo's cordis.yml, with the
           workspace's settings from <workspace>/.dsh/hooks/settings.json
           (background: false, verdicts: "strict"), listens on
           <workspace>/.dsh/hooks/host.sock (owner-only), exits after --idle
           minutes without a hook call.
mcp        The stdio MCP server offering the suite's checkpoint tool (the
           agent starts it; install registers it).

Options:
  --agent AGENT    ${agents.join(' | ')}
  --workspace DIR  the project (default: the current directory)
  --user           install/uninstall: for every project of this user, not one
  --no-start       install: do not start the project's host now
  --idle MIN       serve: minutes without a hook call before the host exits (default 30)
  --json           status: print it as JSON
  -h, --help       show this help

Exit status: 0 done, 1 status found no agent guarded, 2 bad usage or a
configuration file that is not JSON (nothing is written then).
`

function agentArg(value: string | undefined, required: boolean, command: string) {
  if (value === undefined) {
    if (required) throw new UsageError(`dsh ${command}: --agent is required (${agents.join(', ')})`)
    return undefined
  }
  const adapter = adapterFor(value)
  if (!adapter) throw new UsageError(`dsh ${command}: unknown agent "${value}" (known: ${agents.join(', ')})`)
  return adapter
}

function printReport(io: CliIO, verb: string, agent: string, report: InstallReport): void {
  io.stdout(`${verb} dsh hooks for ${agent} (${report.scope === 'user' ? 'user-level: every project' : 'project-level: this project only'}):\n`)
  for (const f of report.files) io.stdout(`  ${f.file}: ${f.change}\n`)
}

function scopeArg(parsed: ReturnType<typeof parseArgs>, command: string): 'user' | 'project' {
  if (!bool(parsed, 'user')) return 'project'
  if (str(parsed, 'workspace') !== undefined) throw new UsageError(`dsh ${command}: --user and --workspace are exclusive (--user is every project)`)
  return 'user'
}

/** How a distribution of this command installs: dsh-guard names its own commands on PATH. */
export interface HooksCommandOptions {
  /**
   * Whether the hooks can name the distribution's commands on PATH
   * (GUARD_COMMANDS) instead of paths, asked for a project install into
   * files a team commits (`sharesProjectFiles`); `notOnPath` is why not (the
   * install refuses then).
   */
  onPath?: (io: CliIO) => { notOnPath?: string }
  /** The distribution's own install and uninstall command lines (a marker in the agent's files names them); default `dsh hooks install`, `dsh hooks uninstall`. */
  installedBy?: InstalledBy
}

async function install(argv: string[], io: CliIO, options: HooksCommandOptions = {}): Promise<number> {
  const parsed = parseArgs(argv, { flags: { agent: 'string', workspace: 'string', user: 'boolean', 'no-start': 'boolean' } }, 'hooks install')
  const adapter = agentArg(str(parsed, 'agent'), true, 'hooks install')!
  const scope = scopeArg(parsed, 'hooks install')
  const workspace = workspaceArg(parsed, 'hooks install', '.')
  // Only where the files are a team's: elsewhere (the agent's local files, the home directory) a path is this user's own.
  const shared = scope === 'project' && adapter.sharesProjectFiles
  const path = shared ? options.onPath?.(io) : undefined
  if (path?.notOnPath) {
    io.stderr(`${adapter.agent} keeps a project's hooks only in files a team commits; ${path.notOnPath}, so they would hold this machine's paths. Install the package with npm i -g (dsh-guard, or its packed tarball) and run this again (or --user: every project).\n`)
    return 2
  }
  const onPath = !!path
  try {
    printReport(io, 'installed', adapter.agent, installHooks(adapter, workspace, { scope, home: homeOf(io), onPath, ...(options.installedBy ? { installedBy: options.installedBy } : {}) }))
    if (onPath) io.stdout(`They run ${GUARD_COMMANDS.hook} and ${GUARD_COMMANDS.cli} from PATH: no path of this machine is in them.\n`)
  } catch (error) {
    if (error instanceof SettingsError) {
      io.stderr(`dsh hooks install: ${error.message}\n`)
      return 2
    }
    throw error
  }
  const where = scope === 'user' ? 'any project' : workspace
  io.stdout(`From the next ${adapter.agent} session in ${where}, a write that makes the project worse is rolled back and the agent told why (one that only breaks other files is kept for now; the turn cannot end with it).\n`)
  if (scope === 'project' && !bool(parsed, 'no-start')) {
    // Booted before the first session, so its first hook finds it up (the session then measures the project's accepted state in the background).
    startHost(resolve(workspace), join(workspace, '.dsh'))
    io.stdout('The guard of this project is starting (status says when it is up).\n')
  }
  return 0
}

/** The user's home as the command sees it (`HOME`), else the OS's. */
const homeOf = (io: CliIO) => io.env.HOME || homedir()

async function uninstall(argv: string[], io: CliIO): Promise<number> {
  const parsed = parseArgs(argv, { flags: { agent: 'string', workspace: 'string', user: 'boolean' } }, 'hooks uninstall')
  const scope = scopeArg(parsed, 'hooks uninstall')
  const workspace = workspaceArg(parsed, 'hooks uninstall', '.')
  const chosen = agentArg(str(parsed, 'agent'), false, 'hooks uninstall')
  const home = homeOf(io)
  const vault = join(scope === 'user' ? home : workspace, '.dsh')
  const recorded = installedAgents(vault)
  // Entries of ours in the agent's files count even when the vault's record of them is gone.
  const live = (a: (typeof ADAPTERS)[number]) => liveHooks(a, workspace, home).entries.some(e => (scope === 'user' ? e.level === 'user' : e.level !== 'user'))
  const targets = chosen ? [chosen] : ADAPTERS.filter(a => recorded.includes(a.agent) || live(a))
  if (!targets.length) {
    io.stdout(`no dsh hooks installed ${scope === 'user' ? 'for this user' : `in ${workspace}`}\n`)
    return 0
  }
  for (const adapter of targets) printReport(io, 'removed', adapter.agent, uninstallHooks(adapter, workspace, { scope, home: homeOf(io) }))
  // No hook of ours left that would call this project's guard (at either level): it goes now, not at its idle timeout.
  if (scope === 'project' && !installedAgents(vault).length && !ADAPTERS.some(a => liveHooks(a, workspace, home).entries.length)) {
    const pid = await stopHost(resolve(vault))
    if (pid !== undefined) io.stdout(`stopped the guard of this project (pid ${pid})\n`)
  }
  return 0
}

async function status(argv: string[], io: CliIO): Promise<number> {
  const parsed = parseArgs(argv, { flags: { workspace: 'string', json: 'boolean' } }, 'hooks status')
  const workspace = workspaceArg(parsed, 'hooks status', '.')
  const vault = join(workspace, '.dsh')
  const home = homeOf(io)
  const project = installedAgents(vault)
  const user = installedAgents(join(home, '.dsh'))
  // What the agents will run is in their own configuration: our record may be gone (rm -rf .dsh) or stale (hooks taken out by hand).
  const agentsLive = ADAPTERS.map(a => ({ agent: a.agent, recorded: project.includes(a.agent) || user.includes(a.agent), live: liveHooks(a, workspace, home) }))
    .filter(a => a.recorded || a.live.entries.length || a.live.unreadable.length)
  const installed = agentsLive.filter(a => a.live.entries.length).map(a => a.agent)
  const host = await hostStatus(vault)
  const own = existsSync(hookPaths(vault).settings) ? readHostSettings(vault) : undefined
  if (bool(parsed, 'json')) {
    const agentsJson = agentsLive.map(a => ({
      agent: a.agent, recorded: a.recorded, entries: a.live.entries.length, missing: a.live.missing,
      levels: [...new Set(a.live.entries.map(e => e.level))],
      files: [...new Set(a.live.entries.map(e => relative(workspace, e.file)))], unreadable: a.live.unreadable,
    }))
    io.stdout(JSON.stringify({ workspace, installed, project, user, agents: agentsJson, host, ...(own ? { settings: own.settings, ...(own.problems.length ? { settingsProblems: own.problems } : {}) } : {}) }, null, 2) + '\n')
    return installed.length ? 0 : 1
  }
  io.stdout(`workspace ${workspace}\n`)
  if (!agentsLive.length) io.stdout('installed: nothing (dsh hooks install --agent AGENT, or an agent plugin)\n')
  for (const a of agentsLive) io.stdout(`${a.agent}: ${agentLine(workspace, a.recorded, a.live)}\n`)
  io.stdout(`host: ${hostLine(host, vault)}\n`)
  if (own) io.stdout(`settings: ${settingsLine(own.settings)} (${relative(workspace, hookPaths(vault).settings)}, read when the host starts)${own.problems.map(p => `; ${p}`).join('')}\n`)
  return installed.length ? 0 : 1
}

/** The workspace's host settings as status says them: what each one makes the guard do. */
function settingsLine(settings: HostSettings): string {
  const parts = [
    ...(settings.background === undefined ? [] : [settings.background ? 'background verdicts on' : 'background verdicts off: each write waits for its whole verdict']),
    ...(settings.verdicts === undefined ? [] : [`verdicts ${settings.verdicts}`]),
  ]
  return parts.length ? parts.join(', ') : 'none'
}

/** One agent's line of `hooks status`: what its live configuration runs of ours, and how that differs from our record. */
function agentLine(workspace: string, recorded: boolean, live: LiveHooks): string {
  const n = live.entries.length
  const files = [...new Set(live.entries.map(e => relative(workspace, e.file) || e.file))].join(', ')
  const parts: string[] = []
  if (n) parts.push(`installed (${n} hook ${n === 1 ? 'entry' : 'entries'} live in ${files})`)
  else parts.push(`NOT guarded: no hook entry of ours in its configuration${recorded ? ' (removed since install)' : ''}; run dsh hooks install --agent ${live.agent}`)
  if (n && live.missing.length) parts.push(`missing ${live.missing.join(', ')}: run dsh hooks install --agent ${live.agent}`)
  if (n && !recorded) parts.push(`not recorded in ${join(workspace, '.dsh')} (the vault was removed?): dsh hooks uninstall --agent ${live.agent} still takes them out`)
  for (const u of live.unreadable) parts.push(`cannot read ${u.file} (${u.problem})`)
  return parts.join('; ')
}

/** What the host is measuring, and whether what a first write needs is measured (its warm-up); `detail` goes in the parenthesis. */
function warmWords(host: HostStatus): { state: string; detail?: string } {
  const measuring = host.measuring?.length ? host.measuring.join('; ') : undefined
  const w = host.warm
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`
  if (w?.state === 'warming') return { state: `measuring: warming up for ${s(w.ms)}${w.yielded ? `, yielded to ${w.yielded} write(s)` : ''}${measuring ? ` (${measuring})` : ''}` }
  if (measuring) return { state: `measuring: ${measuring}` }
  if (w?.state === 'cold') return { state: `not warm (${w.why ?? 'the warm-up ended early'})` }
  if (w?.state === 'warm') return { state: 'warm', detail: `warm in ${s(w.ms)}` }
  return { state: host.sessions?.length ? 'warm' : 'waiting for a session' }
}

function hostLine(host: HostStatus, vault: string): string {
  switch (host.state) {
    case 'up': {
      const { state, detail } = warmWords(host)
      return `up, ${state} (pid ${host.pid}, ${detail ? `${detail}, ` : ''}${Math.round((host.rssBytes ?? 0) / 1048576)} MB, ${host.sessions?.length ?? 0} session(s), socket ${hookPaths(vault).socket})`
    }
    case 'starting': return `starting (pid ${host.pid})`
    case 'stopped': return `STOPPED (pid ${host.pid} is stopped, e.g. kill -STOP): it answers nothing; the next hook call replaces it`
    case 'unresponsive': return `NOT ANSWERING (pid ${host.pid} is running but did not answer within 2 s): the next hook call replaces it when it stays so`
    case 'down': return 'down (it starts on the next hook call)'
  }
}

/** Take every credential-looking variable out of this process's environment: the checks it runs never see them. */
function dropCredentials(env: NodeJS.ProcessEnv): void {
  for (const name of hiddenEnv(env)) delete env[name]
}

async function serve(argv: string[], io: CliIO): Promise<number> {
  const parsed = parseArgs(argv, { flags: { workspace: 'string', idle: 'string' } }, 'hooks serve')
  const workspace = workspaceArg(parsed, 'hooks serve', '.')
  const idle = Number(str(parsed, 'idle') ?? 30)
  if (!Number.isFinite(idle) || idle <= 0) throw new UsageError('dsh hooks serve: --idle takes a positive number of minutes')
  const vault = join(workspace, '.dsh')
  let lock
  try {
    lock = await claimHost(vault)
  } catch (error) {
    if (error instanceof HostRunningError) {
      io.stderr(`dsh hooks serve: ${error.message}\n`)
      return 0
    }
    throw error
  }
  const stamp = () => new Date().toISOString()
  try {
    dropCredentials(process.env)
    // Between a session's start and its first write the agent is reading: the host measures what that write needs then (cordis.yml's dstvalid warmMap).
    process.env.DSH_WARM_MAP ??= '1'
    // The workspace's own settings (<vault>/hooks/settings.json) over the environment the agent gave its hook: not every agent passes the user's through.
    const own = readHostSettings(vault)
    for (const problem of own.problems) io.stderr(`${stamp()} dsh hooks serve: ${problem}\n`)
    applyHostSettings(own.settings, process.env)
    let harness
    try {
      harness = await bootHarness({
        workspace, vault,
        // The agent is the model and runs its own tools: no model, no workspace tools of ours.
        // The agent's tools write in its own process: each call's post record tells recovery what the call left
        // (cordis.yml gives dsh-snapshot no config of its own).
        patches: [{ id: 'model', disabled: true }, { id: 'workspace-tools', disabled: true }, { id: 'snapshot', config: { elsewhere: true } }],
        log: line => io.stderr(`${stamp()} ${line}\n`),
      })
    } catch (error) {
      if (error instanceof ConfigError) {
        io.stderr(`${stamp()} dsh hooks serve: ${error.message}\n`)
        return 2
      }
      throw error
    }
    const { ctx } = harness
    const host = new HookHost({ ctx, sessions: ctx.sessions, tools: ctx.tools, workspace, vault, log: line => io.stderr(`${stamp()} ${line}\n`) })
    // What dsh-dstvalid is measuring now (its notices open and close a phase): status says warm when nothing is.
    const measuring = new Map<string, number>()
    ctx.on('dstvalid/notice', notice => {
      // The log says what was measured when (a warm-up's phases, each judgement's steps).
      io.stderr(`${stamp()} ${notice.level}${notice.phase ? ` ${notice.phase}` : ''}: ${notice.text.split('\n')[0]!.slice(0, 300)}\n`)
      if (notice.phase === 'start') measuring.set(notice.text, (measuring.get(notice.text) ?? 0) + 1)
      else if (notice.phase === 'end') {
        const open = [...measuring.keys()].find(k => measuring.get(k)! > 0)
        if (open !== undefined) measuring.set(open, measuring.get(open)! - 1)
        for (const [k, n] of measuring) if (n <= 0) measuring.delete(k)
      }
    })
    for (const agent of installedAgents(vault)) {
      const adapter = adapterFor(agent)
      if (adapter) writeNoteTemplates(adapter, vault)
    }
    let closed!: () => void
    const done = new Promise<void>(r => { closed = r })
    const server = await listenHooks({
      host, vault, workspace, idleMs: idle * 60_000,
      status: () => {
        const warm = ctx.dstvalid?.warmState(workspace)
        const main = getHeapStatistics()
        // Each thread's heap: this one's (the per-test map, accepted states, the suite's plugins), the type-check worker's.
        const heaps = [{ thread: 'main', usedBytes: main.used_heap_size, totalBytes: main.total_heap_size }, ...ctx.dstvalid?.heaps(workspace) ?? []]
        return { measuring: [...measuring.keys()], ...(warm ? { warm } : {}), heaps }
      },
      log: line => io.stderr(`${stamp()} ${line}\n`),
      onIdle: async () => {
        await host.shutdown()
        await harness.dispose()
        closed()
      },
    })
    io.stderr(`${stamp()} dsh hooks host ${process.pid} serving ${workspace} on ${server.socket}\n`)
    // A graceful close waits for calls in flight; a second signal, or 5 s, ends the process anyway (its journals are recovered by the next host).
    let stopping = false
    const stop = (signal: string) => {
      if (stopping) process.exit(1)
      stopping = true
      io.stderr(`${stamp()} dsh hooks host ${process.pid}: ${signal}, closing\n`)
      void server.close()
      setTimeout(() => {
        io.stderr(`${stamp()} dsh hooks host ${process.pid}: still busy 5 s after ${signal}; exiting\n`)
        lock.release()
        process.exit(1)
      }, 5000).unref()
    }
    process.on('SIGTERM', () => stop('SIGTERM'))
    process.on('SIGINT', () => stop('SIGINT'))
    await done
    io.stderr(`${stamp()} dsh hooks host ${process.pid} exits\n`)
    return 0
  } finally {
    lock.release()
  }
}

async function mcp(argv: string[], _io: CliIO): Promise<number> {
  const parsed = parseArgs(argv, { flags: { workspace: 'string' } }, 'hooks mcp')
  const workspace = workspaceArg(parsed, 'hooks mcp', '.')
  const vault = join(workspace, '.dsh')
  await runMcpServer({
    vault,
    input: process.stdin,
    output: line => { process.stdout.write(line + '\n') },
    startHost: () => startHost(resolve(workspace), vault),
  })
  return 0
}

/** The `hooks` command; a distribution's (`options`) may install naming its commands on PATH. */
export function hooksCommandWith(options: HooksCommandOptions): Command {
  return withSubcommands(
    { name: 'hooks', summary: 'guard Claude Code, Codex or Gemini CLI through their hooks: install, uninstall, status', usage },
    { install: (argv, io) => install(argv, io, options), uninstall, status, serve, mcp },
  )
}

export const hooksCommand = hooksCommandWith({})
