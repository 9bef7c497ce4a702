import { readdirSync, statSync } from 'node:fs'
import { basename, join, resolve } from 'node:path'
import { sessionLogPath } from 'dsh-session'
import { cannotRead, JsonlError } from 'dsh-common'
import { checkpointPath, checkSessionLog, formatHandoff, latestCheckpoint, listCheckpoints, markLine, questionLine, type ClaimsReport, type StoredCheckpoint } from 'dsh-claims'
import { bool, parseArgs, str, strs, UsageError, withSubcommands, type CliIO } from '../command.ts'
import { pendingLines, settleBeforeReading } from '../verdicts.ts'

const usage = `Usage: dsh claims check [--vault DIR] [--session ID | --max-age MIN | --any-age] --verified "CLAIM — COMMAND" [--verified …] [--failed "…"] [--json]
       dsh claims show [--vault DIR] [--session ID] [--json]

check  Hold verified claims against what a stored session log saw run
       (<vault>/sessions/<id>.jsonl: bash calls with their exit codes and
       dsh-dstvalid's verify/run events), as the checkpoint tool would at the
       log's end: every run of the session counts, the last one of each
       command. A claim names its command after " — ", after " -- ", in
       backticks, or is a command. Without --session the newest log is taken;
       its age is printed, and a log older than --max-age is refused. With
       the workspace's hooks host live, verdicts still running in the
       background are waited for first; otherwise they are listed as pending.
show   Print the latest checkpoint in the vault (or that session's) with its
       unsupported claims marked, as the next session is told.

Options:
  --vault DIR      on-disk state (default: ./.dsh)
  --session ID     the session (default for check: the most recently written log)
  --max-age MIN    check: refuse the newest log when it was last written more
                   than MIN minutes ago (default 60)
  --any-age        check: take the newest log however old it is
  --verified TEXT  a verified claim (repeatable)
  --failed TEXT    a failed item (repeatable); with none, failing runs raise a question
  --json           print the report (check) or the checkpoint file (show) as JSON
  -h, --help       show this help

Exit status: 0 nothing marked (check) / a checkpoint was shown (show),
1 claims were marked / no checkpoint, 2 bad usage, unreadable input or a
stale newest log.
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

/** "42 s", "12 min", "3 h", "2 days". */
function formatAge(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000))
  if (s < 120) return `${s} s`
  if (s < 7200) return `${Math.round(s / 60)} min`
  if (s < 172_800) return `${Math.round(s / 3600)} h`
  return `${Math.round(s / 86_400)} days`
}

const DEFAULT_MAX_AGE_MIN = 60

async function check(argv: string[], io: CliIO): Promise<number> {
  const args = parseArgs(argv, { flags: { vault: 'string', session: 'string', verified: 'strings', failed: 'strings', json: 'boolean', 'max-age': 'string', 'any-age': 'boolean' } }, 'claims check')
  const vault = resolve(str(args, 'vault') ?? '.dsh')
  const verified = strs(args, 'verified')
  if (!verified.length) throw new UsageError('dsh claims check: give at least one --verified "CLAIM — COMMAND" (see dsh claims --help)')
  const maxAgeText = str(args, 'max-age')
  const maxAgeMin = maxAgeText === undefined ? DEFAULT_MAX_AGE_MIN : Number(maxAgeText)
  if (!(maxAgeMin > 0)) throw new UsageError(`dsh claims check: --max-age needs a number of minutes above 0 (got "${maxAgeText}")`)
  const session = str(args, 'session')
  const file = session ? sessionLogPath(vault, session) : latestSessionLog(vault)
  if (!file) {
    io.stderr(`dsh claims check: no session log in ${join(vault, 'sessions')}\n`)
    return 2
  }
  if (!session) {
    // The newest log may be an old session's: say which and how old, and refuse a stale one unless asked.
    let age: number
    try {
      age = Date.now() - statSync(file).mtimeMs
    } catch (error) {
      io.stderr(`dsh claims check: ${cannotRead(file, error)}\n`)
      return 2
    }
    if (!bool(args, 'any-age') && age > maxAgeMin * 60_000) {
      io.stderr(`dsh claims check: the newest session log, ${file}, was last written ${formatAge(age)} ago (over --max-age ${maxAgeMin} min); name it with --session ID, or pass --any-age\n`)
      return 2
    }
    io.stderr(`dsh claims check: newest session log ${file}, last written ${formatAge(age)} ago\n`)
  }
  const pending = await settleBeforeReading(vault, 'claims check', io, basename(file, '.jsonl'))
  let report: ClaimsReport
  try {
    report = await checkSessionLog(file, { verified, failed: strs(args, 'failed') })
  } catch (error) {
    const why = error instanceof JsonlError ? error.message : cannotRead(file, error)
    io.stderr(`dsh claims check: ${why}\n`)
    return 2
  }
  io.stdout(bool(args, 'json') ? JSON.stringify({ ...report, pending }, null, 2) + '\n' : formatCheck(report, verified.length) + pendingLines(pending).map(l => `${l}: not in this check yet\n`).join(''))
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

export const claimsCommand = withSubcommands({
  name: 'claims',
  summary: 'check verified claims against a stored session log, or show the latest checkpoint with its marks',
  usage,
}, { check, show })
