import { cpSync, mkdtempSync, symlinkSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { bool, parseArgs, str, type Command } from '../command.ts'
import { runSession } from '../session-run.ts'

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..')
export const DEMO_DIR = join(repoRoot, 'examples/demo')

const usage = `Usage: dsh demo [--keep] [--dir DIR] [--json]

Copy the embedded sample workspace (a small TypeScript project with vitest
tests, examples/demo/workspace) to a fresh temporary directory and run the
embedded script (examples/demo/script.jsonl) on it through the full harness
from cordis.yml, printing the transcript.

Options:
  --dir DIR     use DIR (must not exist) instead of a temporary directory
  --keep        say where the workspace is, to inspect it afterwards
  --json        print the session's events as JSON Lines instead of a transcript
  -h, --help    show this help
`

export const demoCommand: Command = {
  name: 'demo',
  summary: 'run the embedded scripted session on a copy of the sample TypeScript workspace',
  usage,
  async run(argv, io) {
    const args = parseArgs(argv, { flags: { keep: 'boolean', dir: 'string', json: 'boolean' } }, 'demo')
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
      prompt: 'Follow the script.',
      json,
    }, io)
    await outcome.harness.dispose()
    if (!json) io.stdout(`\nsession ${outcome.sessionId}: ${outcome.reason}; workspace ${workspace}${bool(args, 'keep') ? ' (kept)' : ''}\n`)
    return outcome.exitCode
  },
}
