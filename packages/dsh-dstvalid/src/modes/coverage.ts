import type { Change, Check, CheckIO, Measurement, Problem } from '../types.ts'

/** Per-file coverage read from one test run: percent by workspace-relative file. */
export type CoverageReading =
  | { status: 'ok'; files: Record<string, number>; scope: 'all' | string[] }
  | { status: 'error'; error: string }

/** A test check that can measure coverage while it runs (vitest's v8 coverage, `go test -coverprofile`). */
export interface CoverageSource {
  /** What the percentages count: `lines`, `statements`. */
  readonly coverageUnit: string
  /**
   * Coverage of the test check's last `measure` (never of a flaky re-run);
   * undefined when that run had no changed source file to cover.
   */
  lastCoverage(): CoverageReading | undefined
  /** The test check measures its accepted state per write; coverage follows it. */
  readonly lazyBaseline?: boolean
}

export interface CoverageOptions {
  /** Percent of lines below which a changed file is warned about (0 disables the mode: no check is built). */
  threshold: number
  /** Points a changed file may lose from its accepted coverage before a warning. */
  maxDrop: number
}

/** `62.5`, `100`, `33.3` */
function pct(n: number): string {
  return `${Math.round(n * 10) / 10}%`
}

/**
 * The coverage mode: after a passing targeted test run, the changed files'
 * coverage from that same run (no second run), compared with the accepted
 * coverage of each file. Advisory: it warns, never rolls back. A file
 * already below the threshold that did not drop is not warned about again.
 */
export class CoverageCheck implements Check {
  readonly name = 'coverage'
  readonly verb = 'reading coverage'
  readonly advisory = true
  private readonly _accepted = new Map<string, number>()

  constructor(private readonly source: CoverageSource, private readonly options: CoverageOptions) {}

  /** Measured with its test check's run: per write when that one is. */
  get lazyBaseline(): boolean {
    return this.source.lazyBaseline === true
  }

  /** Accepted coverage of a file, in percent (for tests and status). */
  accepted(file: string): number | undefined {
    return this._accepted.get(file)
  }

  async measure(_change: Change | undefined, _io: CheckIO): Promise<Measurement> {
    const reading = this.source.lastCoverage()
    if (!reading) return { status: 'ok', problems: [], scope: [] }
    if (reading.status === 'error') return { status: 'error', problems: [], scope: [], error: reading.error }
    const problems: Problem[] = []
    for (const [file, now] of Object.entries(reading.files)) {
      const before = this._accepted.get(file)
      const below = now < this.options.threshold
      const dropped = before !== undefined && before - now > this.options.maxDrop
      if (!below && !dropped) continue
      const why = [dropped ? `down from ${pct(before!)}` : '', below ? `below the threshold of ${pct(this.options.threshold)}` : ''].filter(Boolean)
      const message = `${pct(now)} of ${this.source.coverageUnit} covered, ${why.join(' and ')}${dropped && !below ? ` (more than ${this.options.maxDrop} points)` : ''}`
      // Keyed by what is wrong, not by the numbers: staying below the threshold is not new; a further drop is.
      const key = `${file}\u0000coverage\u0000${below ? 'below' : ''}\u0000${dropped ? before : ''}`
      problems.push({ check: this.name, kind: 'diagnostic', key, file, code: 'coverage', message })
    }
    return { status: 'ok', problems, scope: reading.scope === 'all' ? 'all' : [...reading.scope], readings: reading.files }
  }

  advance(m: Measurement): void {
    if (m.scope === 'all') this._accepted.clear()
    for (const [file, value] of Object.entries(m.readings ?? {})) this._accepted.set(file, value)
  }
}
