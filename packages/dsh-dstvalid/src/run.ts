import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { runCommand, describeExit, isolationSupport, stateDir, withoutCredentials, type Isolation, type RunResult } from 'dsh-common'
import type { CheckIO, RunRecord } from './types.ts'

/**
 * Environment overrides for every process a check starts: colours off
 * (`NO_COLOR` for the tools that read it, `FORCE_COLOR=0` for chalk /
 * supports-color, which ignore `NO_COLOR`), no inherited test-runner markers
 * (a check may run inside a vitest run), and no credential-looking variable
 * (`withoutCredentials`): a test the agent wrote that prints
 * `process.env.OPENAI_API_KEY` must not carry the key into a verdict. Tools
 * that colour regardless (ts-jest's diagnostics) are cleaned by the problem
 * parsers ({@link stripAnsi}).
 */
export function checkEnv(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { NO_COLOR: '1', FORCE_COLOR: '0', ...extra }
  for (const key of Object.keys(process.env)) {
    if (key.startsWith('VITEST') || key === 'TEST' || key === 'JEST_WORKER_ID') env[key] = undefined
  }
  return withoutCredentials(env)
}

/**
 * How every process a check starts is isolated where namespaces are
 * available (ADR 0015): in fresh user, PID and mount namespaces, as the bash
 * tool's commands are — a test the agent wrote sees only its own run's
 * processes in `/proc` (not dsh's `/proc/<pid>/environ`, nor its parents'),
 * finds dsh's key store under an empty tmpfs and dsh's `vault` (its records,
 * the snapshot journal) read-only, and ends with the check (also when dsh is
 * SIGKILLed). `extra`: the accepted content's overlays (ADR 0019). Undefined
 * without namespaces and without overlays: the command runs as it is.
 */
export function checkIsolation(extra: Isolation = {}, vault?: string): Isolation | undefined {
  if (isolationSupport().mode !== 'namespaces') return extra.overlays?.length ? extra : undefined
  const keys = stateDir()
  return {
    ...extra,
    hidden: [...(extra.hidden ?? []), ...(existsSync(keys) ? [keys] : [])],
    readOnly: [...(extra.readOnly ?? []), ...(vault && existsSync(vault) ? [resolve(vault)] : [])],
  }
}

/** The whole environment {@link checkEnv} leaves (for a worker thread, which takes one rather than overrides). */
export function checkEnvFull(): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries({ ...process.env, ...checkEnv() })) if (value !== undefined) env[key] = value
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
  options: {
    env?: Record<string, string | undefined>
    passed?: (r: RunResult) => boolean
    shell?: boolean
    /** Whether the run left something to judge (a report); when not, the record says why (`cause`). Default: it ran to an exit. */
    judgeable?: (r: RunResult) => boolean
    /** Run in namespaces with these overlays (the accepted content served, see `served.ts`); the record says so. */
    isolate?: Isolation
  } = {},
): Promise<RecordedRun> {
  const r = await runCommand(argv, {
    cwd,
    timeoutMs: io.timeoutMs,
    maxOutputBytes: io.maxOutputBytes,
    env: withoutCredentials(options.env ?? checkEnv()),
    signal: io.signal,
    shell: options.shell,
    isolate: checkIsolation(options.isolate, io.vault),
  })
  const outcome: RunRecord['outcome'] = r.timedOut
    ? 'timeout'
    : r.spawnError || r.aborted || r.exitCode === null
      ? 'error'
      : (options.passed ?? (x => x.exitCode === 0))(r) ? 'pass' : 'fail'
  const judgeable = outcome !== 'timeout' && outcome !== 'error' && (options.judgeable?.(r) ?? true)
  const cause = judgeable ? undefined : failureCause(r, io.timeoutMs)
  io.record({ check, argv: options.isolate?.overlays?.length ? [...argv, '(the content before the write, in a mount namespace)'] : [...r.argv], cwd, exitCode: r.exitCode, durationMs: r.durationMs, outcome, ...(cause ? { cause } : {}) })
  return { ...r, outcome }
}

/** Escape sequences (colours, cursor moves) a tool printed. */
const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g

/** Text without terminal escape sequences. */
export function stripAnsi(text: string): string {
  return text.replace(ANSI, '')
}

/**
 * A line that names why a process failed: an error (`TypeError: …`,
 * `CACError: Unknown option …`, `Error [ERR_MODULE_NOT_FOUND]: …`), an
 * out-of-memory abort, a command the shell could not find, a config that
 * could not load.
 */
const CAUSE = /^(?:(?:\w+\.)*[A-Z]\w*(?:Error|Exception)\b(?: \[[A-Z_]+\])?:|Error(?: \[[A-Z_]+\])?:|FATAL ERROR:|fatal:|error(?:\[\w+\])?:|ERROR:?\s|panic:|failed to load config|.*: (?:command )?not found$|.*No such file or directory|.*(?:heap|JavaScript heap) out of memory|.*\bENOENT\b|.*\bEACCES\b)/

/**
 * The first line of a failed run's output that explains it (see
 * {@link CAUSE}); undefined when none does. Stack frames, carets and the
 * `Node.js v20…` footer never explain anything.
 */
export function explainFailure(output: string): string | undefined {
  let heading: string | undefined
  for (const raw of stripAnsi(output).split('\n')) {
    const line = raw.trim()
    if (!line || /^at\s/.test(line) || /^Node\.js v\d/.test(line) || !CAUSE.test(line)) continue
    // "failed to load config from <file>" says where; the error after it says why.
    if (!heading && /^failed to load config/.test(line)) {
      heading = line
      continue
    }
    const cause = heading ? `${heading}: ${line}` : line
    return cause.length > 300 ? `${cause.slice(0, 299)}…` : cause
  }
  return heading
}

/** Why a run left nothing to judge: the line that explains it, else how it ended with its last line. */
function failureCause(r: RunResult, timeoutMs: number): string {
  if (r.spawnError || r.timedOut || r.aborted || r.exitCode === null) return describeExit(r, timeoutMs)
  return causeLine(r.output) ?? describeExit(r, timeoutMs)
}

/** The line of a failed run's output that says why: the one {@link explainFailure} finds, else its last line. */
export function causeLine(output: string): string | undefined {
  return explainFailure(output) ?? lastLine(output)
}

function lastLine(output: string): string | undefined {
  return stripAnsi(output).trim().split('\n').map(l => l.trim()).filter(l => l && !/^Node\.js v\d/.test(l)).at(-1)?.slice(0, 200)
}

/**
 * One line saying why a run could not be judged, its cause first found in
 * the output ({@link explainFailure}): "vitest exit 1: CACError: Unknown
 * option `--includeTaskLocation`", "vitest timed out after 120 s (process group killed)".
 */
export function whyNotJudged(label: string, r: RunResult, timeoutMs: number): string {
  const why = r.timedOut ? undefined : causeLine(r.output)
  return `${label} ${describeExit(r, timeoutMs)}${why ? `: ${why}` : ''}`
}

/** Seconds for messages: one decimal under a second ("0.1 s"), whole seconds above ("120 s"). */
export function seconds(ms: number): string {
  return `${ms < 1000 ? (ms / 1000).toFixed(1) : Math.round(ms / 1000)} s`
}
