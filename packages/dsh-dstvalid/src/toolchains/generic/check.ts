import { causeLine, runRecorded, whyNotJudged } from '../../run.ts'
import type { Check, CheckIO, Measurement, Problem } from '../../types.ts'

/**
 * A command with no parser, judged by exit status: a workspace where it
 * passed and now fails has regressed; one where it already failed cannot
 * get worse by this measure.
 */
export class CommandCheck implements Check {
  readonly verb: string

  constructor(readonly name: string, private readonly command: string, private readonly root: string) {
    this.verb = `running ${name}`
  }

  async measure(_change: unknown, io: CheckIO): Promise<Measurement> {
    const r = await runRecorded(this.name, [this.command], this.root, io, { shell: true })
    if (r.outcome === 'timeout' || r.outcome === 'error') {
      return { status: r.outcome === 'timeout' ? 'timeout' : 'error', problems: [], scope: 'all', error: whyNotJudged(`\`${this.command}\``, r, io.timeoutMs) }
    }
    const problems: Problem[] = []
    if (r.exitCode !== 0) {
      // The line that says why (an error, a missing command), as the other checks show it; else the last line.
      const cause = causeLine(r.output)
      problems.push({
        check: this.name,
        kind: 'diagnostic',
        key: `${this.name}\u0000exit`,
        file: '',
        code: `\`${this.command}\``,
        message: `exited ${r.exitCode}${cause ? `: ${cause.slice(0, 200)}` : ''}`,
      })
    }
    return { status: 'ok', problems, scope: 'all' }
  }
}
