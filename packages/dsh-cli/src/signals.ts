import { killProcessGroups } from 'dsh-common'

/** Exit status after a stop signal: 128 + its number, as shells report it. */
export const SIGNAL_EXIT_CODES = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 } as const
export type StopSignal = keyof typeof SIGNAL_EXIT_CODES
const SIGNALS = Object.keys(SIGNAL_EXIT_CODES) as StopSignal[]

export interface StopOptions {
  /** Longest wait for `stop` before exiting anyway (default 10 s). */
  graceMs?: number
}

/**
 * Until the returned disposer is called, the first SIGINT, SIGTERM or SIGHUP
 * runs `stop` (abort the turn, flush the session log, say what was left),
 * then exits with 130, 143 or 129. A second signal, or `stop` taking longer
 * than `graceMs`, exits at once. Every process group dsh started and that is
 * still alive is SIGKILLed before exiting, so a check
 * still running gives no verdict: its write stays unjudged in the snapshot
 * journal, for `dsh recover` to put back.
 */
export function exitOnStopSignals(stop: (signal: StopSignal) => Promise<void>, options: StopOptions = {}): () => void {
  let stopping: StopSignal | undefined
  const exit = (signal: StopSignal): never => {
    killProcessGroups('SIGKILL')
    process.exit(SIGNAL_EXIT_CODES[signal])
  }
  const handler = (signal: StopSignal) => {
    if (stopping) exit(stopping)
    stopping = signal
    const timer = setTimeout(() => exit(signal), options.graceMs ?? 10_000)
    stop(signal).catch(() => {
      // Exiting regardless: the log flush is best effort once a signal arrived.
    }).finally(() => {
      clearTimeout(timer)
      exit(signal)
    })
  }
  for (const s of SIGNALS) process.on(s, handler)
  return () => {
    for (const s of SIGNALS) process.off(s, handler)
  }
}
