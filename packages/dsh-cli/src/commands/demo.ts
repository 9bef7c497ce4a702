import { cpSync, mkdtempSync, symlinkSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { proofSummarySeen } from 'dsh-proofchain'
import { sessionLogPath } from 'dsh-session'
import { bool, parseArgs, str, type Command } from '../command.ts'
import { runSession } from '../session-run.ts'

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..')
const DEMO_DIR = join(repoRoot, 'examples/demo')

/** The demo's two user turns: the guarded work, then the handoff checkpoint. */
const DEMO_PROMPTS = ['Follow the script.', 'Write a checkpoint for the next agent.']

const usage = `Usage: dsh demo [--dir DIR] [--json]

Copy the embedded sample workspace (a small TypeScript project with vitest
tests and one legacy file that was already broken, examples/demo/workspace)
to a fresh temporary directory and run the embedded script
(examples/demo/script.jsonl) on it through the full harness from cordis.yml.
It shows a good edit kept, a type-breaking edit rolled back, a test-breaking
edit returned while its tests run and kept for now when their verdict comes
(then undone at the turn's end), a fix inside the already-broken file kept,
the proof summary the model saw, a checkpoint whose unsupported claim is
marked, and the handoff the next session on that workspace receives.

Options:
  --dir DIR     use DIR (must not exist) instead of a temporary directory
  --json        print the session's events as JSON Lines instead of a transcript
  -h, --help    show this help

Ctrl-C (SIGINT), SIGTERM or SIGHUP stop it like dsh run: the session log is
flushed, every command still running is killed, exit 130, 143 or 129.
`

/**
 * How to run `dsh` from the repo on this machine, for the lines the demo ends
 * with: `pnpm dsh` when pnpm is on `path`, else through npx as the README's
 * first lines run it (only Node and npm needed).
 */
export function dshFromRepo(path: string | undefined): string {
  const pnpm = (path ?? '').split(delimiter).filter(Boolean).some(dir => existsSync(join(dir, 'pnpm')))
  return pnpm ? 'pnpm dsh' : 'npx --yes pnpm@10 dsh'
}

function section(title: string, body: string): string {
  return `\n── ${title} ${'─'.repeat(Math.max(0, 66 - title.length))}\n${body.trimEnd()}\n`
}

export const demoCommand: Command = {
  name: 'demo',
  summary: 'run the embedded scripted session on a copy of the sample TypeScript workspace',
  usage,
  async run(argv, io) {
    const args = parseArgs(argv, { flags: { dir: 'string', json: 'boolean' } }, 'demo')
    const dir = str(args, 'dir')
    if (dir && existsSync(dir)) {
      io.stderr(`dsh demo: ${resolve(dir)} already exists; give a new directory\n`)
      return 2
    }
    const workspace = dir ? resolve(dir) : join(mkdtempSync(join(tmpdir(), 'dsh-demo-')), 'workspace')
    cpSync(join(DEMO_DIR, 'workspace'), workspace, { recursive: true })
    // The sample project uses the suite's own typescript and vitest.
    symlinkSync(join(repoRoot, 'node_modules'), join(workspace, 'node_modules'), 'dir')
    const json = bool(args, 'json')
    if (!json) io.stdout(`dsh demo: workspace ${workspace}\n\n`)
    const outcome = await runSession({
      workspace,
      script: join(DEMO_DIR, 'script.jsonl'),
      prompts: DEMO_PROMPTS,
      json,
      command: 'dsh demo',
    }, io)
    try {
      if (json) return outcome.exitCode
      const summary = proofSummarySeen(outcome.session.events)
      io.stdout(section('proof summary the model saw', summary ?? '(none was shown: is dsh-proofchain enabled in cordis.yml?)'))
      // A new session on the same workspace and vault: what the next agent is handed.
      const next = outcome.harness.createSession()
      const handoff = next.session.ofType('context/message').find(e => e.data.source === 'claims')
      io.stdout(section('the next session on this workspace starts with', handoff?.data.text ?? '(no handoff: is dsh-claims enabled in cordis.yml?)'))
      io.stdout(`\nsession ${outcome.sessionId}: ${outcome.reason}\n`)
      io.stdout(`workspace ${workspace}\n`)
      const dsh = dshFromRepo(io.env.PATH)
      io.stdout(`check the proof chain:   ${dsh} proof verify --vault ${outcome.harness.vault}\n`)
      io.stdout(`see the checkpoint:      ${dsh} claims show --vault ${outcome.harness.vault}\n`)
      io.stdout(`lint the session log:    ${dsh} lint-log ${sessionLogPath(outcome.harness.vault, outcome.sessionId)}\n`)
      return outcome.exitCode
    } finally {
      await outcome.harness.dispose()
    }
  },
}
