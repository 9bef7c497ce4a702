/**
 * Running a third-party program (an agent CLI) where it can reach nothing
 * but loopback: a fresh network namespace (`unshare -n`, root or user
 * namespaces needed) with only `lo` up. A scripted model server of this
 * kit listens on a unix socket; `forward` maps a port inside the namespace
 * to it, so the program is pointed at `http://127.0.0.1:<port>`. Each
 * namespace has its own loopback, so a fixed port never collides.
 */
import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { runCommand, type RunOptions, type RunResult } from 'dsh-common'

export interface LoopbackOptions extends RunOptions {
  /** Port inside the namespace → unix socket outside it. */
  forward?: Record<number, string>
}

const launcher = fileURLToPath(new URL('./loopback-launcher.ts', import.meta.url))
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href

/** `argv` run in a loopback-only network namespace; the outcome as `runCommand` gives it (never throws). */
export function runInLoopback(argv: readonly string[], options: LoopbackOptions): Promise<RunResult> {
  const forwards = Object.entries(options.forward ?? {}).flatMap(([port, socket]) => ['--forward', `${port}=${socket}`])
  const script = 'ip link set lo up || exit 97; exec "$@"'
  return runCommand(['unshare', '-n', 'sh', '-c', script, 'sh', process.execPath, '--import', tsx, launcher, ...forwards, '--', ...argv], options)
}

/** Whether this machine can make a loopback-only network namespace (a reason when not). */
export async function loopbackUnavailable(): Promise<string | undefined> {
  const probe = await runCommand(['unshare', '-n', 'sh', '-c', 'ip link set lo up'], { cwd: '/', timeoutMs: 10_000 })
  if (probe.exitCode === 0) return undefined
  return `unshare -n / ip link set lo up failed (${probe.spawnError ?? (probe.stderr.trim() || `exit ${probe.exitCode}`)})`
}
