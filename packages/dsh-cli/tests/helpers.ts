import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runCommand, type RunResult } from 'dsh-common'

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
const bin = join(repoRoot, 'packages/dsh-cli/src/bin.ts')

/** Run the real `dsh` in a child process (as `pnpm dsh` does). */
export function dsh(args: string[], options: { cwd?: string; env?: Record<string, string | undefined>; input?: string; timeoutMs?: number; pidFile?: string } = {}): Promise<RunResult> {
  const argv = [process.execPath, '--import', 'tsx', bin, ...args]
  // With `pidFile`: dsh's own process id written there first (the shell execs dsh, keeping its pid).
  return runCommand(options.pidFile ? ['/bin/sh', '-c', 'echo $$ > "$0"; exec "$@"', options.pidFile, ...argv] : argv, {
    cwd: options.cwd ?? repoRoot,
    env: { NODE_ENV: 'test', DSH_API_KEY: undefined, DEEPSEEK_API_KEY: undefined, ...options.env },
    input: options.input,
    timeoutMs: options.timeoutMs ?? 120_000,
  })
}
