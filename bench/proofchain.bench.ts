// dsh-proofchain: append cost by chain length (ours vs re-reading the chain per append),
// summary time at chain lengths 10 … 1,000,000 (our index vs a full scan, and
// the 200-entry window a known implementation uses, which forgets subjects),
// and load/verify throughput. Standalone: `node --import tsx bench/proofchain.bench.ts`
// (`DSH_BENCH_QUICK=1` stops the summary table at 100,000).
import { appendFileSync, copyFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  GENESIS, ProofChain, SummaryIndex, renderSummary, sealEntry, serializeRecord, verifyChainFile,
  type ProofEntry, type ProofInput,
} from 'dsh-proofchain'

const dir = mkdtempSync(join(tmpdir(), 'dsh-bench-proof-'))
process.on('exit', () => rmSync(dir, { recursive: true, force: true }))

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
const ms = (n: number) => (n < 0.1 ? `${fmt(n * 1000, 1)} µs` : n < 1000 ? `${fmt(n, 2)} ms` : `${fmt(n / 1000, 2)} s`)
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/** A realistic stream: 50 hot subjects checked again and again, 20 cold ones that failed once early and were never re-checked. */
function input(i: number): ProofInput {
  if (i < 20) return { sessionId: 's1', kind: 'typecheck', subject: `typecheck src/legacy/${i}.ts`, outcome: 'fail', detail: `rolled back after edit_file: 1 new problem: src/legacy/${i}.ts:1 TS2322 x` }
  const n = i % 50
  const fail = i % 7 === 0
  return {
    sessionId: i % 5 === 0 ? 's2' : 's1', kind: n % 2 ? 'test' : 'typecheck', subject: `${n % 2 ? 'test' : 'typecheck'} src/m${n}.ts`,
    outcome: fail ? 'fail' : 'ok', detail: fail ? `failed after edit_file: 1 new problem: src/m${n}.ts:${i} TS2345 y` : 'passed after edit_file (40 ms)',
  }
}

// ---------------------------------------------------------------- append
/** Write a chain of `n` entries straight to `file` (setup only). */
function writeBase(file: string, n: number) {
  let prev = { seq: -1, hash: GENESIS }
  const parts: string[] = []
  for (let i = 0; i < n; i++) {
    const e = input(i)
    const entry = sealEntry({ seq: prev.seq + 1, time: i, sessionId: e.sessionId, kind: e.kind, subject: e.subject, outcome: e.outcome, detail: e.detail ?? '', prevHash: prev.hash })
    parts.push(serializeRecord(entry))
    prev = entry
  }
  writeFileSync(file, parts.join(''))
}

/** Appends onto a copy of `base`; returns milliseconds per entry. */
async function appendOurs(base: string, n: number, burst: number): Promise<number> {
  const file = join(dir, `ours-${burst}-${Math.random().toString(36).slice(2)}.jsonl`)
  copyFileSync(base, file)
  const chain = ProofChain.open({ file })
  const t = performance.now()
  for (let i = 0; i < n; i += burst) {
    if (burst === 1) await chain.append(input(i))
    else await chain.appendMany(Array.from({ length: Math.min(burst, n - i) }, (_, k) => input(i + k)))
  }
  return (performance.now() - t) / n
}

/** The naive appender: no index of its own tail, so it re-reads the chain for the last hash before every append. */
function appendNaive(base: string, n: number): number {
  const file = join(dir, `naive-${Math.random().toString(36).slice(2)}.jsonl`)
  copyFileSync(base, file)
  const t = performance.now()
  for (let i = 0; i < n; i++) {
    let prev = { seq: -1, hash: GENESIS }
    const text = readFileSync(file, 'utf8').trimEnd()
    if (text) {
      const last = JSON.parse(text.slice(text.lastIndexOf('\n') + 1)) as ProofEntry
      prev = { seq: last.seq, hash: last.hash }
    }
    const e = input(i)
    appendFileSync(file, serializeRecord(sealEntry({ seq: prev.seq + 1, time: Date.now(), sessionId: e.sessionId, kind: e.kind, subject: e.subject, outcome: e.outcome, detail: e.detail ?? '', prevHash: prev.hash })))
  }
  return (performance.now() - t) / n
}

console.log('### Append cost by chain length (per entry)\n')
console.log('| chain length before | ours, one awaited append at a time | ours, bursts of 100 | naive: re-read the chain per append | naive / ours (one at a time) |')
console.log('|---:|---:|---:|---:|---:|')
for (const length of [0, 10_000, 100_000]) {
  const base = join(dir, `base-${length}.jsonl`)
  writeBase(base, length)
  const single = await appendOurs(base, 500, 1)
  const burst = await appendOurs(base, 2_000, 100)
  const naive = appendNaive(base, length >= 100_000 ? 20 : 200)
  console.log(`| ${fmt(length)} | ${ms(single)} (${fmt(1000 / single)}/s) | ${ms(burst)} (${fmt(1000 / burst)}/s) | ${ms(naive)} (${fmt(1000 / naive)}/s) | ${fmt(naive / single, 1)}× |`)
}
console.log('\n"ours" takes the cross-process lock, catches up with the file, and updates the head record for every batch; the naive appender does neither.')

// ---------------------------------------------------------------- summary
function entry(i: number): ProofEntry {
  const e = input(i)
  return { seq: i, time: i, sessionId: e.sessionId, kind: e.kind, subject: e.subject, outcome: e.outcome, detail: e.detail ?? '', prevHash: GENESIS, hash: GENESIS }
}

/** Full scan: dedupe every entry of the session by subject, newest wins. Correct, O(chain). */
function summaryScan(all: ProofEntry[], sessionId: string, window = Infinity) {
  const latest = new Map<string, ProofEntry>()
  for (let i = Math.max(0, all.length - window); i < all.length; i++) {
    const e = all[i]!
    if (e.sessionId !== sessionId) continue
    latest.delete(e.subject)
    latest.set(e.subject, e)
  }
  const ordered = [...latest.values()].reverse()
  return renderSummary(ordered.filter(e => e.outcome === 'fail'), ordered.filter(e => e.outcome === 'ok'), { budgetTokens: 400 })
}

function time(fn: () => unknown, minMs = 50): number {
  const samples: number[] = []
  const until = performance.now() + minMs
  do {
    const t = performance.now()
    fn()
    samples.push(performance.now() - t)
  } while (performance.now() < until || samples.length < 5)
  return median(samples)
}

const lengths = [10, 100, 1_000, 10_000, 100_000, 1_000_000].filter(n => !process.env.DSH_BENCH_QUICK || n <= 100_000)
console.log('\n### Summary time by chain length (session s1, budget 400 tokens; 70 subjects)\n')
console.log('| chain length | ours (index) | full scan | scan / ours | last-200 window | subjects the window forgets |')
console.log('|---:|---:|---:|---:|---:|---:|')
for (const length of lengths) {
  const index = new SummaryIndex()
  const all: ProofEntry[] = []
  for (let i = 0; i < length; i++) {
    const e = entry(i)
    index.add(e)
    all.push(e)
  }
  const ours = time(() => index.summary('s1', { budgetTokens: 400 }))
  const scan = time(() => summaryScan(all, 's1'))
  const windowed = time(() => summaryScan(all, 's1', 200))
  const truth = index.summary('s1', { budgetTokens: 0 })
  const scanned = summaryScan(all, 's1')
  if (scanned.text !== index.summary('s1', { budgetTokens: 400 }).text) throw new Error(`full scan and index disagree at length ${length}`)
  const inWindow = new Set(all.slice(-200).filter(e => e.sessionId === 's1').map(e => e.subject))
  const forgotten = truth.shown.filter(e => !inWindow.has(e.subject)).length
  console.log(`| ${fmt(length)} | ${ms(ours)} | ${ms(scan)} | ${fmt(scan / ours, 1)}× | ${ms(windowed)} | ${forgotten} of ${truth.shown.length} |`)
}

// ---------------------------------------------------------------- load / verify
const BIG = 100_000
const bigFile = join(dir, 'big.jsonl')
writeBase(bigFile, BIG)
const size = statSync(bigFile).size
let t = performance.now()
const reopened = ProofChain.open({ file: bigFile })
const openMs = performance.now() - t
t = performance.now()
const report = verifyChainFile(bigFile)
const verifyMs = performance.now() - t
if (!report.ok || reopened.head.seq !== BIG - 1) throw new Error('the big chain does not verify')
console.log(`\n### Load and verify (${fmt(BIG)} entries, ${fmt(size / 1048576, 1)} MiB)\n`)
console.log('| operation | time | entries/s |')
console.log('|---|---:|---:|')
console.log(`| open (read, re-hash, index) | ${ms(openMs)} | ${fmt(BIG / (openMs / 1000))} |`)
console.log(`| verify (stream, re-hash, links) | ${ms(verifyMs)} | ${fmt(BIG / (verifyMs / 1000))} |`)
