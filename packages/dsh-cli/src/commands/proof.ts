import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { stateDir } from 'dsh-common'
import { describeProblem, ProofChain, proofChainPath, readChainSeal, short, verifyChainFile, type VerifyReport } from 'dsh-proofchain'
import { bool, parseArgs, str, UsageError, withSubcommands, type CliIO } from '../command.ts'

const usage = `Usage: dsh proof show   [--vault DIR] [--session ID] [--budget TOKENS] [--json]
       dsh proof verify [--vault DIR] [--json]

The proof chain (<vault>/proofchain.jsonl) is the harness's hash-linked
record of what it verified: each check after a write, each restore, each
claims checkpoint, with its outcome.

  show     print the summary the model is shown: the newest outcome per
           subject, failures first, within the token budget
  verify   recompute every hash and link from the first line (or from the
           anchor a prune left) and name the first bad entry and why:
           hash mismatch, broken link, bad anchor, torn line, corrupt line,
           malformed entry, missing entries (cut off the end, or the file
           removed), not sealed / bad seal (the chain no longer matches
           the seal dsh keeps of it outside the vault, in its key store)

Options:
  --vault DIR       the vault (default: ./.dsh)
  --session ID      show: one session's summary (default: every session)
  --budget TOKENS   show: token budget of the summary (default 400; 0 = all)
  --json            machine-readable output on stdout
  -h, --help        show this help

Exit status: 0 ok, 1 no chain / the chain does not verify, 2 bad usage.
`

function vaultOf(value: string | undefined): string {
  return resolve(value ?? join(process.cwd(), '.dsh'))
}

async function show(argv: string[], io: CliIO): Promise<number> {
  const args = parseArgs(argv, { flags: { vault: 'string', session: 'string', budget: 'string', json: 'boolean' } }, 'proof show')
  const budgetText = str(args, 'budget') ?? '400'
  const budgetTokens = Number(budgetText)
  if (!Number.isInteger(budgetTokens) || budgetTokens < 0) throw new UsageError(`dsh proof show: --budget must be a whole number of tokens, not "${budgetText}"`)
  const file = proofChainPath(vaultOf(str(args, 'vault')))
  if (!existsSync(file)) {
    const seal = readChainSeal(file)
    io.stderr(seal
      ? `dsh proof: the proof chain at ${file} is gone, though dsh recorded ${seal === 'forged' ? 'and sealed it' : `seq ${seal.seq} in it (sealed ${new Date(seal.time).toISOString()})`}: it was removed; run dsh proof verify\n`
      : `dsh proof: no proof chain at ${file} (nothing recorded yet, or another --vault)\n`)
    return 1
  }
  const chain = ProofChain.open({ file })
  const sessionId = str(args, 'session')
  const summary = chain.summary(sessionId, { budgetTokens })
  if (chain.problem) io.stderr(`dsh proof: warning: ${file} does not verify (${describeProblem(chain.problem)}); run dsh proof verify\n`)
  if (bool(args, 'json')) {
    const { failing, passing } = chain.index.latest(sessionId)
    io.stdout(JSON.stringify({
      file, sessionId: sessionId ?? null, text: summary.text, tokens: summary.tokens,
      failing: summary.failing, verified: summary.verified, hiddenFailing: summary.hiddenFailing, hiddenVerified: summary.hiddenVerified,
      latest: [...failing, ...passing],
    }) + '\n')
    return 0
  }
  io.stdout(summary.text ? `${summary.text}\n` : `No proofs recorded${sessionId ? ` for session ${sessionId}` : ''} in ${file}.\n`)
  return 0
}

async function verify(argv: string[], io: CliIO): Promise<number> {
  const args = parseArgs(argv, { flags: { vault: 'string', json: 'boolean' } }, 'proof verify')
  const file = proofChainPath(vaultOf(str(args, 'vault')))
  let report: VerifyReport
  try {
    report = verifyChainFile(file)
  } catch (error) {
    if ((error as { code?: string }).code !== 'PROOFCHAIN') throw error
    io.stderr(`dsh proof: ${(error as Error).message}\n`)
    return 1
  }
  if (bool(args, 'json')) {
    io.stdout(JSON.stringify(report) + '\n')
    return report.ok ? 0 : 1
  }
  io.stdout(formatVerify(report))
  return report.ok ? 0 : 1
}

/** The human report of `dsh proof verify`. */
function formatVerify(report: VerifyReport): string {
  const lines: string[] = []
  const count = `${report.entries.toLocaleString('en-US')} ${report.entries === 1 ? 'entry' : 'entries'}`
  const from = report.anchor
    ? `, from an anchor at seq ${report.anchor.seq} (${report.anchor.pruned.toLocaleString('en-US')} pruned, ${report.anchor.carried} subjects carried)`
    : ''
  if (report.problem) {
    lines.push(`FAILED ${report.file}`)
    lines.push(`  first bad entry: ${describeProblem(report.problem)}`)
    lines.push(`  ${count} verified before it${from}`)
  } else {
    const head = report.head ? `, head seq ${report.head.seq} ${short(report.head.hash)}` : ''
    lines.push(`ok ${report.file}: ${count}${head}${from}`)
    if (!report.headRecord) lines.push('  note: no head record beside the chain, so entries cut off its end would go unnoticed')
    if (report.seal) lines.push(`  sealed by dsh at seq ${report.seal.seq} (key store ${stateDir()})`)
    else lines.push(`  note: no seal for this chain in ${stateDir()} (written before seals, on another machine or account, or moved): a rewrite with recomputed hashes would go unnoticed`)
  }
  return lines.join('\n') + '\n'
}

export const proofCommand = withSubcommands({
  name: 'proof',
  summary: 'show the proof chain summary, or verify the chain and name the first bad entry',
  usage,
}, { show, verify })
