import { mkdtempSync, realpathSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runCommand, type RunResult } from 'dsh-common'

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
const bin = join(repoRoot, 'packages/dsh-cli/src/bin.ts')

export function tempDir(prefix = 'dsh-cli-'): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)))
}

/** Run the real `dsh` in a child process (as `pnpm dsh` does). */
export function dsh(args: string[], options: { cwd?: string; env?: Record<string, string | undefined>; input?: string; timeoutMs?: number } = {}): Promise<RunResult> {
  return runCommand([process.execPath, '--import', 'tsx', bin, ...args], {
    cwd: options.cwd ?? repoRoot,
    env: { NODE_ENV: 'test', DSH_API_KEY: undefined, DEEPSEEK_API_KEY: undefined, ...options.env },
    input: options.input,
    timeoutMs: options.timeoutMs ?? 120_000,
  })
}

export function writeScript(dir: string, steps: object[]): string {
  const file = join(dir, 'script.jsonl')
  writeFileSync(file, steps.map(s => JSON.stringify(s)).join('\n') + '\n')
  return file
}

/** The core entries every harness needs (by name: the repo's packages). */
export const CORE_ENTRIES = `- id: sessions
  name: dsh-session
- id: tools
  name: dsh-tools
- id: workspace-tools
  name: dsh-tools-workspace
- id: llm
  name: dsh-llm
- id: agents
  name: dsh-agent
`
