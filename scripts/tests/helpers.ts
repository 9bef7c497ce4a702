import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runCommand, type RunResult } from 'dsh-common'
import { REPO_ROOT } from '../lib/workspace.ts'

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures')

/** Absolute path of a fixture tree (or a file in it). */
export function fixture(...parts: string[]): string {
  return join(FIXTURES, ...parts)
}

/** Line `n` (1-based) of a fixture file. */
export function fixtureLine(file: string, n: number): string {
  return readFileSync(file, 'utf8').split('\n')[n - 1]
}

/** Run one of the scripts the way `pnpm docs:check` does: tsx, from the repo root. */
export function runScript(script: 'doc-typecheck' | 'verify-event-taxonomy' | 'check-readmes' | 'docs-check', args: string[]): Promise<RunResult> {
  return runCommand([join(REPO_ROOT, 'node_modules', '.bin', 'tsx'), join(REPO_ROOT, 'scripts', `${script}.ts`), ...args], {
    cwd: REPO_ROOT,
    timeoutMs: 60_000,
  })
}

/** Run a script's `main` in this process, collecting what it writes to stdout. */
export async function captureMain(main: (argv: string[]) => number | Promise<number>, argv: string[]): Promise<{ exitCode: number; stdout: string }> {
  const chunks: string[] = []
  const write = process.stdout.write
  process.stdout.write = ((chunk: string | Uint8Array) => {
    chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'))
    return true
  }) as typeof process.stdout.write
  try {
    const exitCode = await main(argv)
    return { exitCode, stdout: chunks.join('') }
  } finally {
    process.stdout.write = write
  }
}
