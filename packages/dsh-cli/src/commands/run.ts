import { resolve } from 'node:path'
import { ScriptError } from 'dsh-llm'
import { resolveModelEnv } from 'dsh-llm-openai'
import { bool, parseArgs, str, UsageError, workspaceArg, type Command } from '../command.ts'
import { ConfigError, describeSavedLog } from '../harness.ts'
import { runSession } from '../session-run.ts'

const usage = `Usage: dsh run [PROMPT] --workspace DIR [--script FILE] [--config FILE] [--vault DIR] [--json]

Boot the harness from cordis.yml (every plugin by name), create a session whose
workspace is DIR, send PROMPT, and run until the agent is idle, printing a
transcript: assistant text, each tool call and its result, plugin notices.

Options:
  --workspace DIR   workspace the session's tools act on (required)
  --script FILE     scripted model: a JSON Lines file, one assistant step per line
                    (PROMPT defaults to "Follow the script.")
  --config FILE     cordis.yml to boot from (default: the suite's own); plugin
                    names in it resolve to the installed suite
  --vault DIR       on-disk state (default: DIR/.dsh)
  --json            print the session's events as JSON Lines on stdout, nothing else
  -h, --help        show this help

Without --script the configured model is used (DSH_BASE_URL / DSH_MODEL /
DSH_API_KEY, the OPENAI_BASE_URL + OPENAI_API_KEY pair, or DEEPSEEK_API_KEY).

Ctrl-C (SIGINT), SIGTERM or SIGHUP abort the turn, flush the session log, kill
every command still running and exit 130, 143 or 129. A write whose checks were
still running stays unjudged in the snapshot journal: dsh recover --workspace
DIR (or the next session on DIR) rolls it back.

Exit status: 0 the turn completed, 1 the turn ended with an error or the
session log could not be saved (a full disk: the reason is printed), 2 bad usage
or bad input (nothing is written), 130/143/129 stopped by SIGINT/SIGTERM/SIGHUP.
`

export const runCommand: Command = {
  name: 'run',
  summary: 'run one prompt (or a scripted model) against a workspace under the guards',
  usage,
  async run(argv, io) {
    const args = parseArgs(argv, { flags: { workspace: 'string', script: 'string', config: 'string', vault: 'string', json: 'boolean' }, positionals: { max: 1, name: 'PROMPT' } }, 'run')
    const workspace = workspaceArg(args, 'run')
    const script = str(args, 'script')
    const prompt = args.positionals[0] ?? (script ? 'Follow the script.' : undefined)
    if (!prompt) throw new UsageError('dsh run: give a PROMPT, or --script FILE (see dsh run --help)')
    if (!script && !str(args, 'config')) {
      // The default cordis.yml reads the model from the environment: say what is missing before booting.
      const model = resolveModelEnv(io.env)
      if (model.problem) {
        io.stderr(`dsh run: ${model.problem}; or pass --script FILE\n`)
        return 2
      }
    }
    try {
      const outcome = await runSession({
        workspace, script, prompts: [prompt],
        config: str(args, 'config'), vault: str(args, 'vault'), json: bool(args, 'json'),
      }, io)
      await outcome.harness.dispose()
      // Why the log was not saved was said just before (runSession): not again.
      const saved = outcome.saveError ? 'log NOT saved (see above)' : describeSavedLog(outcome.harness.vault, outcome.sessionId)
      if (!bool(args, 'json')) io.stderr(`session ${outcome.sessionId}: ${outcome.reason ?? 'no turn'} · ${saved}\n`)
      return outcome.exitCode
    } catch (error) {
      if (error instanceof ConfigError || error instanceof ScriptError) {
        io.stderr(`dsh run: ${error.message}\n`)
        return 2
      }
      throw error
    }
  },
}
