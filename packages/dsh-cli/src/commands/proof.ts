import { existsSync, realpathSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { stateDir } from 'dsh-common'
import { describeProblem, ProofChain, proofChainPath, readChainSeal, short, verifyChainFile, type VerifyReport } from 'dsh-proofchain'
import { askWitness, hookPaths, readChainTail, type WitnessHead } from 'dsh-host-hooks'
import { bool, parseArgs, str, UsageError, withSubcommands, type CliIO } from '../command.ts'
import { pendingLines, settleBeforeReading } from '../verdicts.ts'

const usage = `Usage: dsh proof show   [--vault DIR] [--session ID] [--budget TOKENS] [--json]
       dsh proof verify [--vault DIR] [--json]

The proof chain (<vault>/proofchain.jsonl) is the harness's hash-linked
record of what it verified: each check after a write, each restore, each
claims checkpoint, with its outcome.

  show     print the summary the model is shown: the newest outcome per
           subject, failures first, within the token budget; with the
           workspace's hooks host live, after the verdicts still running in
           the background are final; otherwise those are listed as pending
  verify   recompute every hash and link from the first line (or from the
           anchor a prune left) and name the first bad entry and why:
           hash mismatch, broken link, bad anchor, torn line, corrupt line,
           malformed entry, missing entries (cut off the end, or the file
           removed), not sealed / bad seal (the chain no longer matches
           the seal dsh keeps of it outside the vault, in its key store),
           not what dsh wrote (the workspace's live hooks host holds the
           head its suite wrote, in memory: a chain rewritten and re-sealed
           from a hook-driven agent's shell fails)

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
  const vault = vaultOf(str(args, 'vault'))
  const file = proofChainPath(vault)
  const sessionId = str(args, 'session')
  const pending = await settleBeforeReading(vault, 'proof', io, sessionId)
  if (!existsSync(file)) {
    const seal = readChainSeal(file)
    io.stderr(seal
      ? `dsh proof: the proof chain at ${file} is gone, though dsh recorded ${seal === 'forged' ? 'and sealed it' : `seq ${seal.seq} in it (sealed ${new Date(seal.time).toISOString()})`}: it was removed; run dsh proof verify\n`
      : `dsh proof: no proof chain at ${file} (nothing recorded yet, or another --vault)\n`)
    return 1
  }
  const chain = ProofChain.open({ file })
  const summary = chain.summary(sessionId, { budgetTokens })
  if (chain.problem) io.stderr(`dsh proof: warning: ${file} does not verify (${describeProblem(chain.problem)}); run dsh proof verify\n`)
  if (bool(args, 'json')) {
    const { failing, passing } = chain.index.latest(sessionId)
    io.stdout(JSON.stringify({
      file, sessionId: sessionId ?? null, text: summary.text, tokens: summary.tokens,
      failing: summary.failing, verified: summary.verified, hiddenFailing: summary.hiddenFailing, hiddenVerified: summary.hiddenVerified,
      latest: [...failing, ...passing], pending,
    }) + '\n')
    return 0
  }
  io.stdout(summary.text ? `${summary.text}\n` : `No proofs recorded${sessionId ? ` for session ${sessionId}` : ''} in ${file}.\n`)
  for (const line of pendingLines(pending)) io.stdout(`${line}\n`)
  return 0
}

/** What the live hooks host of the vault says of the chain: it holds the head its suite wrote (the agent's shell cannot rewrite that). */
interface WitnessCheck {
  /** No host answered; `hooks`: the vault serves a hook-driven agent, whose shell can forge the seal. */
  host: 'none' | 'live'
  hooks: boolean
  pid?: number
  head?: WitnessHead
  /** Why the chain is not what the host's suite wrote; absent when it is. */
  rewritten?: string
}

function realOrSame(file: string): string {
  try {
    return realpathSync(file)
  } catch {
    // Gone: compared as given.
    return resolve(file)
  }
}

async function witnessOf(vault: string, file: string): Promise<WitnessCheck> {
  const hooks = existsSync(hookPaths(vault).dir)
  const report = await askWitness(vault)
  if (!report) return { host: 'none', hooks }
  const mine = realOrSame(file)
  const entry = Object.entries(report.chains).find(([f]) => realOrSame(f) === mine)?.[1]
  if (!entry) return { host: 'live', hooks, pid: report.pid }
  const base = { host: 'live' as const, hooks, pid: report.pid, head: entry.head }
  if (entry.rewritten) return { ...base, rewritten: entry.rewritten }
  let tail = readChainTail(file)
  // An append of the host's on its way: asked again once.
  if (!sameHead(tail, entry.head)) {
    await new Promise(r => setTimeout(r, 300))
    const again = await askWitness(vault)
    const head = again && Object.entries(again.chains).find(([f]) => realOrSame(f) === mine)?.[1]?.head
    tail = readChainTail(file)
    if (head && sameHead(tail, head)) return { ...base, head }
    const at = (h: WitnessHead | undefined) => (h ? `seq ${h.seq} ${h.hash.slice(0, 12)}` : 'no entry')
    return { ...base, rewritten: `it ends at ${at(tail)}, but the live hooks host (pid ${report.pid}) that writes it last wrote ${at(head ?? entry.head)}: rewritten outside dsh (a re-seal with the key in ${stateDir()} does not hide that)` }
  }
  return base
}

function sameHead(a: WitnessHead | undefined, b: WitnessHead | undefined): boolean {
  return !!a && !!b && a.seq === b.seq && a.hash === b.hash
}

async function verify(argv: string[], io: CliIO): Promise<number> {
  const args = parseArgs(argv, { flags: { vault: 'string', json: 'boolean' } }, 'proof verify')
  const vault = vaultOf(str(args, 'vault'))
  const file = proofChainPath(vault)
  let report: VerifyReport
  try {
    report = verifyChainFile(file)
  } catch (error) {
    if ((error as { code?: string }).code !== 'PROOFCHAIN') throw error
    io.stderr(`dsh proof: ${(error as Error).message}\n`)
    return 1
  }
  const witness = await witnessOf(vault, file)
  const ok = report.ok && !witness.rewritten
  if (bool(args, 'json')) {
    io.stdout(JSON.stringify({ ...report, ok, witness }) + '\n')
    return ok ? 0 : 1
  }
  io.stdout(formatVerify(report, witness))
  return ok ? 0 : 1
}

/** The human report of `dsh proof verify`. */
function formatVerify(report: VerifyReport, witness: WitnessCheck): string {
  const lines: string[] = []
  const hostLine = () => {
    if (witness.host === 'live' && witness.head) lines.push(`  checked against the live hooks host (pid ${witness.pid}), which holds the head its suite wrote: seq ${witness.head.seq}`)
    else if (witness.hooks) lines.push(`  note: no live hooks host holds this chain's head: a hook-driven agent's shell can read the key store (${stateDir()}) and re-seal a rewritten chain, so this result does not rule that out`)
  }
  if (!report.problem && witness.rewritten) {
    lines.push(`FAILED ${report.file}`)
    lines.push(`  not what dsh wrote: ${witness.rewritten}`)
    return lines.join('\n') + '\n'
  }
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
    hostLine()
  }
  return lines.join('\n') + '\n'
}

export const proofCommand = withSubcommands({
  name: 'proof',
  summary: 'show the proof chain summary, or verify the chain and name the first bad entry',
  usage,
}, { show, verify })
