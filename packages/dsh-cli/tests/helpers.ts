import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runCommand, type RunResult } from 'dsh-common'

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
const bin = join(repoRoot, 'packages/dsh-cli/src/bin.ts')

/** Run the real `dsh` in a child process (as `pnpm dsh` does). */
export function dsh(args: string[], options: { cwd?: string; env?: Record<string, string | undefined>; input?: string; timeoutMs?: number } = {}): Promise<RunResult> {
  return runCommand([process.execPath, '--import', 'tsx', bin, ...args], {
    cwd: options.cwd ?? repoRoot,
    env: { NODE_ENV: 'test', DSH_API_KEY: undefined, DEEPSEEK_API_KEY: undefined, ...options.env },
    input: options.input,
    timeoutMs: options.timeoutMs ?? 120_000,
  })
}
