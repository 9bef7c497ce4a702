/**
 * dsh-dstvalid: per-edit guard latency on a generated TypeScript project
 * (≥ 500 modules, ≥ 200 vitest tests), compared in the same run with the
 * naive per-edit check (cold `tsc --noEmit` + full `vitest run`) and with the
 * warm in-process re-check (the floor). Prints a markdown table.
 *
 *   tsx bench/dstvalid.bench.ts
 *   DSH_BENCH_MODULES=520 DSH_BENCH_TEST_FILES=120 DSH_BENCH_EDITS=10 DSH_BENCH_NAIVE_EDITS=3 tsx bench/dstvalid.bench.ts
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runCommand } from 'dsh-common'
import { Guard, TsProgramChecker, TypecheckCheck, VitestCheck, vitestCommand, type GuardIO } from 'dsh-dstvalid'
import type * as TS from 'typescript'
import { generateProject } from './gen-ts-project.ts'
import { runTs7Bench } from './dstvalid-ts7.ts'

// TypeScript 7 rows only (they also print after the TS 5 table below).
if (process.env.DSH_BENCH_TS === '7') {
  await runTs7Bench()
  process.exit(0)
}

const env = (name: string, def: number) => Number(process.env[name] ?? def)
const MODULES = env('DSH_BENCH_MODULES', 520)
const TEST_FILES = env('DSH_BENCH_TEST_FILES', 120)
const EDITS = env('DSH_BENCH_EDITS', 10)
const NAIVE_EDITS = env('DSH_BENCH_NAIVE_EDITS', 3)

const here = dirname(fileURLToPath(import.meta.url))
const root = mkdtempSync(join(tmpdir(), 'dsh-bench-dstvalid-'))
const project = generateProject(root, { modules: MODULES, testFiles: TEST_FILES, seed: 1 }, join(here, '..', 'node_modules'))

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2) : NaN
}
const ms = (x: number) => (x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(x < 10 ? 1 : 0)} ms`)
const mb = (kb: number) => `${Math.round(kb / 1024)} MB`

// Edits alternate: a body-only change, then one that adds an export (its importers are re-checked).
const targets = project.modules.filter(m => m.layer === 1 || m.layer === 2)
let editNo = 0
function applyEdit(kind: 'body' | 'export'): string {
  const m = targets[(editNo * 37) % targets.length]!
  const file = join(root, m.path)
  const n = editNo++
  const text = readFileSync(file, 'utf8')
  writeFileSync(file, kind === 'body'
    ? text.replace('  const unique = [...new Set(tags)].sort()', `  const unique = [...new Set(tags)].sort() // edit ${n}`)
    : `${text}\nexport const EXTRA_${n} = ${n}\n`)
  return file
}
const kindOf = (i: number): 'body' | 'export' => (i % 2 ? 'export' : 'body')

/** Run with GNU time when available, for the child's peak RSS. */
async function timed(argv: string[]): Promise<{ ms: number; rssKb?: number; exitCode: number | null }> {
  const gnuTime = existsSync('/usr/bin/time')
  const marker = join(root, '.rss')
  const r = await runCommand(gnuTime ? ['/usr/bin/time', '-o', marker, '-f', '%M', ...argv] : argv, { cwd: root, timeoutMs: 30 * 60_000, env: { NO_COLOR: '1' } })
  const rssKb = gnuTime && existsSync(marker) ? Number(readFileSync(marker, 'utf8').trim().split('\n').pop()) : undefined
  return { ms: r.durationMs, rssKb, exitCode: r.exitCode }
}

const require = createRequire(join(root, 'package.json'))
const tscBin = join(dirname(require.resolve('typescript/package.json')), 'bin', 'tsc')
const vitest = vitestCommand(root)!

// --- naive: cold tsc --noEmit + full vitest run, per edit --------------------
const naive: number[] = []
const naiveTsc: number[] = []
const naiveVitest: number[] = []
let naiveTscRss = 0
let naiveVitestRss = 0
for (let i = 0; i < NAIVE_EDITS; i++) {
  applyEdit(kindOf(i))
  for (const f of ['tsconfig.tsbuildinfo']) rmSync(join(root, f), { force: true })
  const tsc = await timed([process.execPath, tscBin, '--noEmit', '-p', 'tsconfig.json'])
  const all = await timed([...vitest, 'run', '--no-cache'])
  if (tsc.exitCode !== 0 || all.exitCode !== 0) throw new Error(`naive check failed on a good edit (tsc ${tsc.exitCode}, vitest ${all.exitCode})`)
  naiveTsc.push(tsc.ms)
  naiveVitest.push(all.ms)
  naive.push(tsc.ms + all.ms)
  naiveTscRss = Math.max(naiveTscRss, tsc.rssKb ?? 0)
  naiveVitestRss = Math.max(naiveVitestRss, all.rssKb ?? 0)
}

// --- ours: the guard engine (warm worker + vitest related) --------------------
const typecheck = new TypecheckCheck({ root, configPath: join(root, 'tsconfig.json'), typescriptPath: require.resolve('typescript'), maxHeapMb: 0 })
const tests = new VitestCheck({ root, command: vitest, mode: 'related' })
const guard = new Guard({
  root, checks: [typecheck, tests], rules: { strictTests: false, isTestFile: f => f.startsWith('tests/') },
  timeoutMs: 600_000, maxOutputBytes: 1 << 20, confirmFlaky: true,
})
const io: GuardIO = { record: () => {}, notice: () => {} }
let t = performance.now()
await guard.prepare(io)
const baselineMs = performance.now() - t
const ours: number[] = []
const oursType: number[] = []
const oursTest: number[] = []
const oursByKind: Record<'body' | 'export', number[]> = { body: [], export: [] }
for (let i = 0; i < EDITS; i++) {
  const kind = kindOf(i)
  const file = applyEdit(kind)
  t = performance.now()
  const j = await guard.judge({ paths: [file], files: [file.slice(root.length + 1)] }, io, 'bench edit')
  const took = performance.now() - t
  if (j.regression) throw new Error(`a good edit was judged a regression: ${JSON.stringify(j.checks)}`)
  guard.accept(j)
  ours.push(took)
  oursByKind[kind].push(took)
  oursType.push(j.checks[0]!.durationMs)
  oursTest.push(j.checks[1]?.durationMs ?? 0)
}
const guardRssKb = process.resourceUsage().maxRSS
await guard.dispose()

// --- floor: the warm in-process re-check (type-check only, no worker hop) -----
const ts = require('typescript') as typeof TS
const checker = new TsProgramChecker(ts, root, join(root, 'tsconfig.json'))
checker.check()
checker.check()
const floorByKind: Record<'body' | 'export', number[]> = { body: [], export: [] }
const rechecked: Record<'body' | 'export', number[]> = { body: [], export: [] }
for (let i = 0; i < EDITS; i++) {
  const kind = kindOf(i)
  const file = applyEdit(kind)
  const r = checker.check([file])
  floorByKind[kind].push(r.durationMs)
  rechecked[kind].push(r.rechecked)
}
const floor = [...floorByKind.body, ...floorByKind.export]

rmSync(root, { recursive: true, force: true })

const naiveMed = median(naive)
const ratio = (x: number) => `${(x / naiveMed).toFixed(3)} (1/${Math.round(naiveMed / x)})`
console.log(`## dsh-dstvalid: per-edit guard latency (${project.modules.length} modules, ${project.tests} vitest tests; ${EDITS} edits, ${NAIVE_EDITS} naive)\n`)
console.log('| approach | median per edit | vs naive | peak RSS |')
console.log('|---|---|---|---|')
console.log(`| naive: cold \`tsc --noEmit\` + full \`vitest run\` | ${ms(naiveMed)} (tsc ${ms(median(naiveTsc))}, vitest ${ms(median(naiveVitest))}) | 1.000 | tsc ${mb(naiveTscRss)}, vitest ${mb(naiveVitestRss)} |`)
console.log(`| dsh-dstvalid guard: warm type-check worker + \`vitest related\` | ${ms(median(ours))} (typecheck ${ms(median(oursType))}, tests ${ms(median(oursTest))}) | ${ratio(median(ours))} | ${mb(guardRssKb)} (guard process incl. worker) |`)
console.log(`| … body-only edits | ${ms(median(oursByKind.body))} | ${ratio(median(oursByKind.body))} | |`)
console.log(`| … export-adding edits | ${ms(median(oursByKind.export))} | ${ratio(median(oursByKind.export))} | |`)
console.log(`| floor: warm in-process re-check (type-check only) | ${ms(median(floor))} (body ${ms(median(floorByKind.body))}, export ${ms(median(floorByKind.export))}; re-checked files ${median(rechecked.body)} / ${median(rechecked.export)}) | ${ratio(median(floor))} | |`)
console.log(`\nOne-time baseline of the guard (cold worker + full vitest run): ${ms(baselineMs)}.`)

await runTs7Bench()
