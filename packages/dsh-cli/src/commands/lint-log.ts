import { cannotRead, JsonlError } from 'dsh-common'
import { formatLintReport, lintLog, RULES, type LintReport } from 'dsh-invariants'
import { bool, parseArgs, type Command } from '../command.ts'

const usage = `Usage: dsh lint-log FILE.jsonl [--json]

Check a stored session log (<vault>/sessions/<id>.jsonl) against the harness
event contract — the rules dsh-invariants asserts while the harness runs —
and list every violation, not just the first. A log that ends mid-turn is
fine (a running or crashed session); a torn last line is skipped.

Rules:
${Object.entries(RULES).filter(([id]) => id !== 'agent-status').map(([id, text]) => `  ${id.padEnd(20)} ${text}`).join('\n')}

Options:
  --json      print {"file","events","violations":[{line,seq,type,rule,message,recent}]} on stdout
  -h, --help  show this help

Exit status: 0 no violation, 1 violations found or no event in the file (a
log whose writes failed, e.g. on a full disk), 2 bad usage or the file cannot
be read (a corrupt line is named by number).
`

export const lintLogCommand: Command = {
  name: 'lint-log',
  summary: 'check a stored session log against the event contract; list every violation',
  usage,
  async run(argv, io) {
    const args = parseArgs(argv, { flags: { json: 'boolean' }, positionals: { min: 1, max: 1, name: 'FILE.jsonl' } }, 'lint-log')
    const file = args.positionals[0]!
    let report: LintReport
    try {
      report = await lintLog(file)
    } catch (error) {
      const why = error instanceof JsonlError ? error.message : cannotRead(file, error)
      io.stderr(`dsh lint-log: ${why}\n`)
      return 2
    }
    if (bool(args, 'json')) {
      const violations = report.violations.map(({ line, seq, type, rule, message, recent }) => ({ line, seq, type, rule, message, recent }))
      io.stdout(JSON.stringify({ file: report.file, events: report.events, violations }) + '\n')
    } else {
      io.stdout(formatLintReport(report))
    }
    return report.violations.length || report.events === 0 ? 1 : 0
  },
}
