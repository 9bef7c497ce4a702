import { runCommand, describeExit, type RunResult } from 'dsh-common'
import type { CheckIO, RunRecord } from './types.ts'

/** Environment for child checks: no inherited test-runner markers (a check may run inside a vitest run). */
export function checkEnv(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { NO_COLOR: '1', FORCE_COLOR: undefined, ...extra }
  for (const key of Object.keys(process.env)) {
    if (key.startsWith('VITEST') || key === 'TEST' || key === 'JEST_WORKER_ID') env[key] = undefined
  }
  return env
}

export interface RecordedRun extends RunResult {
  /** The `verify/run` outcome recorded for it. */
  outcome: RunRecord['outcome']
}

/**
 * Run one command for a check through `runCommand` (own process group,
 * timeout kills the tree, capped output) and record it for `verify/run`.
 * `passed` decides pass/fail from a finished run (default: exit 0).
 */
export async function runRecorded(
  check: string,
  argv: string[],
  cwd: string,
  io: CheckIO,
  options: { env?: Record<string, string | undefined>; passed?: (r: RunResult) => boolean; shell?: boolean } = {},
): Promise<RecordedRun> {
  const r = await runCommand(argv, {
    cwd,
    timeoutMs: io.timeoutMs,
    maxOutputBytes: io.maxOutputBytes,
    env: options.env ?? checkEnv(),
    signal: io.signal,
    shell: options.shell,
  })
  const outcome: RunRecord['outcome'] = r.timedOut
    ? 'timeout'
    : r.spawnError || r.aborted || r.exitCode === null
      ? 'error'
      : (options.passed ?? (x => x.exitCode === 0))(r) ? 'pass' : 'fail'
  io.record({ check, argv: [...r.argv], cwd, exitCode: r.exitCode, durationMs: r.durationMs, outcome })
  return { ...r, outcome }
}

/** One line saying why a run could not be judged: "vitest timed out after 120 s (process group killed)". */
export function whyNotJudged(label: string, r: RunResult, timeoutMs: number): string {
  const tail = r.output.trim().split('\n').filter(Boolean).slice(-1)[0]
  return `${label} ${describeExit(r, timeoutMs)}${!r.timedOut && tail ? `: ${tail.slice(0, 200)}` : ''}`
}

/** Seconds for messages: one decimal under a second ("0.1 s"), whole seconds above ("120 s"). */
export function seconds(ms: number): string {
  return `${ms < 1000 ? (ms / 1000).toFixed(1) : Math.round(ms / 1000)} s`
}
