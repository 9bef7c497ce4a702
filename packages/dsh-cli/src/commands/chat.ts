import { resolve } from 'node:path'
import { createInterface } from 'node:readline'
import type { TurnEndReason } from 'dsh-session'
import { ScriptError } from 'dsh-llm'
import { resolveModelEnv, type OpenAIAdapter } from 'dsh-llm-openai'
import { bool, parseArgs, str, workspaceArg, type CliIO, type Command } from '../command.ts'
import { bootHarness, ConfigError, describeSavedLog, saveSessionLog, type Harness } from '../harness.ts'
import { attachProgress, progressMode } from '../progress.ts'

const usage = `Usage: dsh chat --workspace DIR [--config FILE] [--vault DIR] [--json]

Talk to the configured model in one session on DIR, under the guards. Every
line read from stdin is a prompt (typed at the "›" prompt, or piped in); the
answer streams as it arrives, with each tool call, its result and plugin
notices inline. The chat ends at the end of input (Ctrl-D).

Ctrl-C aborts the running turn (it ends with reason "aborted"); a second
Ctrl-C exits once the session is flushed to the vault.

Options:
  --workspace DIR   workspace the session's tools act on (required)
  --config FILE     cordis.yml to boot from (default: the suite's own); plugin
                    names in it resolve to the installed suite
  --vault DIR       on-disk state (default: DIR/.dsh)
  --json            print the session's events as JSON Lines on stdout, nothing else
  -h, --help        show this help

The model (default cordis.yml): DEEPSEEK_API_KEY for DeepSeek, or DSH_BASE_URL,
DSH_MODEL and DSH_API_KEY for any OpenAI-compatible server (OpenAI, vLLM,
llama.cpp, Ollama; a server on this machine needs no key). OPENAI_BASE_URL with
OPENAI_API_KEY work too (only as a pair; DSH_* win).

Exit status: 0 the input ended (and the last turn did not fail), 1 the last
turn ended with an error or the session log could not be saved (a full disk:
the reason is printed), 2 bad usage or no model configured, 130 ended by a
second Ctrl-C (143 by SIGTERM, 129 by SIGHUP, also after flushing). Commands
and checks still running when the chat ends are killed.
`

/** What the SIGINT handler and the prompt loop share. */
interface ChatState {
  interrupts: number
  /** Set when a signal ended the chat: its exit code (130 SIGINT, 143 SIGTERM, 129 SIGHUP). */
  exitCode?: number
  exit: (code: number) => void
}

export const chatCommand: Command = {
  name: 'chat',
  summary: 'chat with the configured model in a session on a workspace, under the guards',
  usage,
  async run(argv, io) {
    const args = parseArgs(argv, { flags: { workspace: 'string', config: 'string', vault: 'string', json: 'boolean' } }, 'chat')
    const workspace = workspaceArg(args, 'chat')
    const config = str(args, 'config')
    if (!config) {
      // The default cordis.yml reads the model from the environment: refuse early when it cannot work.
      const model = resolveModelEnv(io.env)
      if (model.problem) {
        io.stderr(`dsh chat: ${model.problem}\n`)
        return 2
      }
    }
    const json = bool(args, 'json')
    // Plugin warnings go to stderr; once the chat shows progress, through it (clear of the spinner).
    const log: LogSink = { write: line => io.stderr(`${line}\n`) }
    let harness: Harness
    try {
      harness = await bootHarness({ workspace, config, vault: str(args, 'vault'), log: line => log.write(line) })
    } catch (error) {
      if (error instanceof ConfigError || error instanceof ScriptError) {
        io.stderr(`dsh chat: ${error.message}\n`)
        return 2
      }
      throw error
    }
    try {
      return await chat(harness, io, json, log)
    } finally {
      await harness.dispose()
    }
  },
}

interface LogSink {
  write(line: string): void
}

async function chat(harness: Harness, io: CliIO, json: boolean, log: LogSink): Promise<number> {
  const adapter = harness.ctx.llm.current as Partial<OpenAIAdapter> | undefined
  if (!adapter) {
    io.stderr(`dsh chat: no model adapter is loaded from ${harness.configFile} (enable dsh-llm-openai there, or set its key: see dsh chat --help)\n`)
    return 2
  }
  const { session, agent } = harness.createSession()
  // A log that cannot be written is said once, at the end, with the session's outcome.
  harness.ctx.on('agent/flush-failed', failed => failed === agent || undefined)
  // A turn whose end is logged is over for the user, though the agent is still flushing it: a Ctrl-C then means "exit".
  let turnOpen = false
  harness.ctx.on('session/event', (s, event) => {
    if (s === session && (event.type === 'turn/start' || event.type === 'turn/end')) turnOpen = event.type === 'turn/start'
  })
  const interactive = !json && !!(io.stdin as { isTTY?: boolean }).isTTY
  const view = await attachProgress(harness.ctx, session, io, { mode: progressMode(io, json), echoUser: !interactive })
  if (!json) log.write = line => view.say(line)
  const where = adapter.baseUrl ? `${adapter.model} at ${adapter.baseUrl}` : adapter.name
  view.say(`dsh chat: session ${session.id} · model ${where} · Ctrl-C aborts a turn, Ctrl-D ends`)

  let exited!: () => void
  const exitRequested = new Promise<void>(r => { exited = r })
  const state: ChatState = {
    interrupts: 0,
    exit(code) {
      state.exitCode ??= code
      agent.abort()
      exited()
    },
  }
  const onSigint = () => {
    state.interrupts++
    if (state.interrupts >= 2) {
      state.exit(130)
      return
    }
    if (turnOpen && agent.status === 'running') {
      agent.abort()
      view.say('^C aborting the turn · Ctrl-C again to exit')
    } else {
      view.say('^C · Ctrl-C again to exit, or Ctrl-D')
    }
  }
  // A runner that stops us (e.g. pnpm on a second Ctrl-C) gets the same orderly end.
  const onSigterm = () => state.exit(143)
  // The terminal went away: end the same way.
  const onSighup = () => state.exit(129)
  process.on('SIGINT', onSigint)
  process.on('SIGTERM', onSigterm)
  process.on('SIGHUP', onSighup)
  const rl = createInterface({ input: io.stdin, crlfDelay: Infinity, terminal: false })
  const lines = rl[Symbol.asyncIterator]()
  let last: TurnEndReason | undefined
  try {
    while (state.exitCode === undefined) {
      if (interactive) io.stderr('› ')
      const next = await Promise.race([lines.next(), exitRequested.then(() => undefined)])
      if (!next || next.done) break
      const prompt = next.value.trim()
      if (!prompt) continue
      state.interrupts = 0
      last = await agent.send(prompt)
    }
  } finally {
    process.off('SIGINT', onSigint)
    process.off('SIGTERM', onSigterm)
    process.off('SIGHUP', onSighup)
    rl.close()
    await view.dispose()
  }
  await agent.idle()
  const saveError = await saveSessionLog(session)
  await agent.dispose()
  const saved = describeSavedLog(harness.vault, session.id, saveError)
  if (state.exitCode !== undefined) {
    view.say(`dsh chat: session ${session.id} ${saved}`)
    return state.exitCode
  }
  view.say(`dsh chat: session ${session.id}: ${last ?? 'no turn'} · ${saved}`)
  return last === 'error' || saveError ? 1 : 0
}
