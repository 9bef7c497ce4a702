import { readdirSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { sessionLogPath } from 'dsh-session'
import { JsonlError } from 'dsh-common'
import { checkpointPath, checkSessionLog, formatHandoff, latestCheckpoint, listCheckpoints, markLine, questionLine, type ClaimsReport, type StoredCheckpoint } from 'dsh-claims'
import { bool, parseArgs, str, strs, UsageError, type Command, type CliIO } from '../command.ts'

const usage = `Usage: dsh claims check [--vault DIR] [--session ID] --verified "CLAIM — COMMAND" [--verified …] [--failed "…"] [--json]
       dsh claims show [--vault DIR] [--session ID] [--json]

check  Hold verified claims against what a stored session log saw run
       (<vault>/sessions/<id>.jsonl: bash calls with their exit codes and
       dsh-dstvalid's verify/run events), as the checkpoint tool would at the
       log's end: runs count after the log's last checkpoint. A claim names
       its command after " — ", after " -- ", in backticks, or is a command.
show   Print the latest checkpoint in the vault (or that session's) with its
       unsupported claims marked, as the next session is told.

Options:
  --vault DIR      on-disk state (default: ./.dsh)
  --session ID     the session (default for check: the most recently written log)
  --verified TEXT  a verified claim (repeatable)
  --failed TEXT    a failed item (repeatable); with none, failing runs raise a question
  --json           print the report (check) or the checkpoint file (show) as JSON
  -h, --help       show this help

Exit status: 0 nothing marked (check) / a checkpoint was shown (show),
1 claims were marked / no checkpoint, 2 bad usage or unreadable input.
`

/** The newest `<vault>/sessions/*.jsonl` by modification time. */
function latestSessionLog(vault: string): string | undefined {
  const dir = join(vault, 'sessions')
  let names: string[]
  try {
    names = readdirSync(dir).filter(n => n.endsWith('.jsonl'))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  return names.map(n => join(dir, n)).sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0]
}

function formatCheck(report: ClaimsReport, total: number): string {
  const lines = [report.marks.length
    ? `session ${report.sessionId}: ${report.marks.length} of ${total} claims marked`
    : `session ${report.sessionId}: ${total} ${total === 1 ? 'claim' : 'claims'}, none marked`]
  for (const mark of report.marks) lines.push(markLine(mark, report))
  if (report.asked) lines.push(questionLine(report))
  return lines.join('\n') + '\n'
}

async function check(argv: string[], io: CliIO): Promise<number> {
  const args = parseArgs(argv, { flags: { vault: 'string', session: 'string', verified: 'strings', failed: 'strings', json: 'boolean' } }, 'claims check')
  const vault = resolve(str(args, 'vault') ?? '.dsh')
  const verified = strs(args, 'verified')
  if (!verified.length) throw new UsageError('dsh claims check: give at least one --verified "CLAIM — COMMAND" (see dsh claims --help)')
  const session = str(args, 'session')
  const file = session ? sessionLogPath(vault, session) : latestSessionLog(vault)
  if (!file) {
    io.stderr(`dsh claims check: no session log in ${join(vault, 'sessions')}\n`)
    return 2
  }
  let report: ClaimsReport
  try {
    report = await checkSessionLog(file, { verified, failed: strs(args, 'failed') })
  } catch (error) {
    const why = error instanceof JsonlError ? error.message : `${file}: cannot read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`
    io.stderr(`dsh claims check: ${why}\n`)
    return 2
  }
  io.stdout(bool(args, 'json') ? JSON.stringify(report, null, 2) + '\n' : formatCheck(report, verified.length))
  return report.marks.length ? 1 : 0
}

function show(argv: string[], io: CliIO): number {
  const args = parseArgs(argv, { flags: { vault: 'string', session: 'string', json: 'boolean' } }, 'claims show')
  const vault = resolve(str(args, 'vault') ?? '.dsh')
  const session = str(args, 'session')
  const skipped: string[] = []
  const onSkip = (file: string, why: string) => skipped.push(`dsh claims show: skipped ${file}: ${why}\n`)
  const stored: StoredCheckpoint | undefined = session
    ? listCheckpoints(vault, onSkip).find(e => e.checkpoint.sessionId === session)?.checkpoint
    : latestCheckpoint(vault, { onSkip })
  for (const line of skipped) io.stderr(line)
  if (!stored) {
    io.stderr(`dsh claims show: no checkpoint${session ? ` of session ${session}` : ''} in ${session ? checkpointPath(vault, session) : join(vault, 'checkpoints')}\n`)
    return 1
  }
  io.stdout(bool(args, 'json') ? JSON.stringify(stored, null, 2) + '\n' : formatHandoff(stored) + '\n')
  return 0
}

export const claimsCommand: Command = {
  name: 'claims',
  summary: 'check verified claims against a stored session log, or show the latest checkpoint with its marks',
  usage,
  async run(argv, io) {
    const [sub, ...rest] = argv
    if (sub === 'check') return check(rest, io)
    if (sub === 'show') return show(rest, io)
    throw new UsageError(`dsh claims: ${sub ? `unknown subcommand "${sub}"` : 'missing subcommand'}; use check or show (see dsh claims --help)`)
  },
}
