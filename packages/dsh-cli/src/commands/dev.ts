import { resolve } from 'node:path'
import { createInterface } from 'node:readline'
import type { Context, Fiber } from '@deepseek-ai/cordis'
import { ScriptError } from 'dsh-llm'
import type { Agent } from 'dsh-agent'
import type { Session, SessionEvent } from 'dsh-session'
import { parseArgs, str, strs, UsageError, workspaceArg, type CliIO, type Command } from '../command.ts'
import { ConfigError } from '../harness.ts'
import { formatReport, startDev, type DevHarness } from '../dev/index.ts'
import { renderEvent } from '../transcript.ts'

const usage = `Usage: dsh dev [--workspace DIR] [--config FILE] [--script FILE] [--vault DIR] [--watch DIR]... [--debounce MS]

Run the harness from cordis.yml with hot reload (works on Node 20). Every
plugin entry whose source is on disk outside node_modules (the suite's
packages, ./local plugin files) is watched with the files it imports, and
so is cordis.yml:

  - saving a plugin source reloads that plugin in place: its module graph is
    imported again under fresh URLs, its fiber disposed, its entry applied
    again; sessions, the agent and the other plugins keep running
  - saving cordis.yml applies what changed: entries added, removed, enabled,
    disabled, or restarted with their new config (the file is never rewritten)
  - a reload that fails (syntax error, throwing apply) is shown with file and
    line; the other plugins keep running and the next good save recovers

Lines typed on stdin are prompts to one session's agent: the transcript goes
to stdout, reloads and plugin messages to stderr. End the input (Ctrl-D) or
press Ctrl-C to stop.

Options:
  --workspace DIR   workspace the session's tools act on (default: the current directory)
  --config FILE     cordis.yml to run and watch (default: the suite's own)
  --script FILE     scripted model: a JSON Lines file, one assistant step per line
  --vault DIR       on-disk state (default: DIR/.dsh)
  --watch DIR       also reload plugins whose source is under DIR, even inside
                    node_modules (repeatable)
  --debounce MS     quiet time after the last save before reloading (default 60)
  -h, --help        show this help

Exit status: 0 stopped, 2 bad usage or bad input (nothing started).
`

/** One session at a time; a new one if a reload of the agents service disposed the agent. */
class PromptLoop {
  private session!: Session
  private agent!: Agent
  /** The transcript listener, in a child fiber of the harness: `dispose` removes it. */
  private readonly listeners: Fiber

  constructor(private readonly dev: DevHarness, private readonly io: CliIO) {
    this.open()
    this.listeners = dev.harness.ctx.plugin((ctx: Context) => {
      ctx.on('session/event', (s: Session, event: SessionEvent) => {
        if (s !== this.session) return
        const text = renderEvent(event)
        if (text) io.stdout(text + '\n')
      })
    })
  }

  /** Resolves once the transcript listener is in place. */
  async ready(): Promise<void> {
    await this.listeners
  }

  async dispose(): Promise<void> {
    await this.listeners.dispose()
  }

  get sessionId(): string {
    return this.session.id
  }

  private open() {
    ;({ session: this.session, agent: this.agent } = this.dev.harness.createSession())
  }

  async prompt(text: string): Promise<void> {
    if (this.agent.status === 'disposed') {
      this.open()
      this.io.stderr(`[dev] the agent stopped with a reloaded service; new session ${this.session.id}\n`)
    }
    await this.agent.send(text)
  }

  abort() {
    this.agent.abort()
  }
}

export const devCommand: Command = {
  name: 'dev',
  summary: 'run the harness with hot reload of plugin sources and cordis.yml (prompts on stdin)',
  usage,
  async run(argv, io) {
    const args = parseArgs(argv, { flags: { workspace: 'string', config: 'string', script: 'string', vault: 'string', watch: 'strings', debounce: 'string' } }, 'dev')
    const workspace = workspaceArg(args, 'dev', process.cwd())
    const debounceText = str(args, 'debounce')
    const debounceMs = debounceText === undefined ? undefined : Number(debounceText)
    if (debounceMs !== undefined && !(Number.isInteger(debounceMs) && debounceMs >= 0)) throw new UsageError(`dsh dev: --debounce needs a whole number of milliseconds (got "${debounceText}")`)
    const script = str(args, 'script')

    let dev: DevHarness
    try {
      dev = await startDev({
        workspace,
        config: str(args, 'config'),
        script: script && resolve(script),
        vault: str(args, 'vault'),
        watch: strs(args, 'watch').map(p => resolve(p)),
        debounceMs,
        log: line => io.stderr(`${line}\n`),
        onReport: report => {
          for (const line of formatReport(report)) io.stderr(`[dev] ${line}\n`)
        },
      })
    } catch (error) {
      if (error instanceof ConfigError || error instanceof ScriptError) {
        io.stderr(`dsh dev: ${error.message}\n`)
        return 2
      }
      throw error
    }

    const loop = new PromptLoop(dev, io)
    await loop.ready()
    const plugins = dev.reloader.track().length
    io.stderr(`[dev] watching ${dev.watcher.files.length} files of ${plugins} plugins and ${dev.harness.configFile}\n`)
    if (!script && !io.env.DSH_API_KEY && !io.env.DEEPSEEK_API_KEY && !io.env.OPENAI_API_KEY) {
      io.stderr('[dev] no model configured, prompts will end with an error: pass --script FILE or set DSH_API_KEY\n')
    }
    io.stderr(`[dev] session ${loop.sessionId} on ${workspace}: type a prompt and press Enter; Ctrl-D or Ctrl-C to stop\n`)

    const lines = createInterface({ input: io.stdin, terminal: false })
    let queue = Promise.resolve()
    lines.on('line', (line) => {
      const text = line.trim()
      if (text) queue = queue.then(() => loop.prompt(text))
    })
    const stop = () => {
      loop.abort()
      lines.close()
    }
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
    process.once('SIGHUP', stop)
    try {
      await new Promise<void>(resolve => lines.once('close', () => resolve()))
      await queue
    } finally {
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
      process.off('SIGHUP', stop)
      await loop.dispose()
      await dev.close()
    }
    return 0
  },
}
