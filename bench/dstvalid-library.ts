/**
 * dsh-dstvalid on a library-sized project (bench/gen-library.ts: 320
 * modules, 160 test files, 4,160 tests, a solution tsconfig with 4
 * referenced projects, 3 vitest projects), side by side in one run:
 *
 * - naive: cold `tsc -b` of every referenced project + full `vitest run`, per edit;
 * - today's guard (CLI): the warm type-check worker + `vitest related` through the CLI;
 * - the warm guard: the warm type-check worker + the warm test runner;
 * - the floor: the warm in-process type-check alone;
 * - the first type-check after a restart (worker start included): cold, and
 *   from a fresh build-info cache (the vault's), also after an edit made
 *   while the harness was down.
 *
 * Export-changing and body-only edits separately, the first judged edit
 * after session start separately, peak RSS of the guard including its
 * workers (sampled: this process with its type-check worker thread, plus
 * the warm runner's process group). Every edit is good: a check that finds a
 * problem aborts the bench (a wrong verdict is not a speed).
 *
 *   DSH_BENCH_EDITS=6 DSH_BENCH_CLI_EDITS=4 DSH_BENCH_NAIVE_EDITS=1 tsx bench/dstvalid.bench.ts
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { processGroupRssKb, runCommand } from 'dsh-common'
import { resolveFromWorkspace, TsProgramChecker, TsWorkerClient, TypecheckCheck, VitestCheck, vitestCommand, WarmVitestCheck, type Change, type Check, type CheckIO, type Measurement, type WarmRunPhases } from 'dsh-dstvalid'
import type * as TS from 'typescript'
import { generateLibrary } from './gen-library.ts'

type Kind = 'body' | 'export'

const env = (name: string, def: number) => Number(process.env[name] ?? def)

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2) : NaN
}
const ms = (x: number) => (Number.isNaN(x) ? '—' : x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(x < 10 ? 1 : 0)} ms`)
const mb = (kb: number) => `${Math.round(kb / 1024)} MB`

export async function runLibraryBench(): Promise<void> {
  const EDITS = env('DSH_BENCH_EDITS', 6)
  const CLI_EDITS = env('DSH_BENCH_CLI_EDITS', 4)
  const NAIVE_EDITS = env('DSH_BENCH_NAIVE_EDITS', 1)
  const here = dirname(fileURLToPath(import.meta.url))
  const root = mkdtempSync(join(tmpdir(), 'dsh-bench-library-'))
  const lib = generateLibrary(root, { modules: env('DSH_BENCH_MODULES', 320), testFiles: env('DSH_BENCH_TEST_FILES', 160), seed: 1 }, join(here, '..', 'node_modules'))
  try {
    await bench(root, lib, EDITS, CLI_EDITS, NAIVE_EDITS)
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

async function bench(root: string, lib: ReturnType<typeof generateLibrary>, EDITS: number, CLI_EDITS: number, NAIVE_EDITS: number) {
  // Edits alternate body-only / export-changing, each on a module of the middle layers not edited before.
  const targets = lib.modules.filter(m => m.layer === 1 || m.layer === 2)
  let editNo = 0
  const applyEdit = (kind: Kind): Change => {
    const m = targets[(editNo * 37) % targets.length]!
    const file = join(root, m.path)
    editNo++
    const text = readFileSync(file, 'utf8')
    const next = kind === 'body'
      // Same behaviour, new body.
      ? text.replace('  const unique = [...new Set(tags)].sort()', '  const unique = [...new Set(tags)].sort().slice(0)')
      // A changed exported signature every caller still satisfies.
      : text.replace(`export function compute${m.index}(x: number): number {`, `export function compute${m.index}(x: number, scale = 1): number {`)
        .replace(`  let total = (x * ${(m.index % 7) + 1} + ${m.index}) % 1000003`, `  let total = ((x * ${(m.index % 7) + 1} + ${m.index}) * scale) % 1000003`)
    if (next === text) throw new Error(`edit ${editNo} (${kind}) changed nothing in ${m.path}`)
    writeFileSync(file, next)
    return { paths: [file], files: [m.path] }
  }
  const kindOf = (i: number): Kind => (i % 2 ? 'export' : 'body')
  const require = createRequire(join(root, 'package.json'))
  const tscBin = join(dirname(require.resolve('typescript/package.json')), 'bin', 'tsc')
  const typescriptPath = require.resolve('typescript')
  const vitest = vitestCommand(root)!
  const configPath = join(root, 'tsconfig.json')
  const io: CheckIO = { record: () => {}, notice: () => {}, timeoutMs: 30 * 60_000, maxOutputBytes: 1 << 20 }
  const ok = (what: string, m: Measurement) => {
    if (m.status !== 'ok' || m.problems.length) throw new Error(`${what}: a good edit was not judged clean: ${m.status} ${m.error ?? ''} ${m.problems.slice(0, 3).map(p => `${p.file} ${p.message}`).join('; ')}`)
    return m
  }

  /** Run with GNU time when available, for the child's peak RSS. */
  const timed = async (argv: string[]) => {
    const gnuTime = existsSync('/usr/bin/time')
    const marker = join(root, '.rss')
    const r = await runCommand(gnuTime ? ['/usr/bin/time', '-o', marker, '-f', '%M', ...argv] : argv, { cwd: root, timeoutMs: 60 * 60_000, env: { NO_COLOR: '1' } })
    const rssKb = gnuTime && existsSync(marker) ? Number(readFileSync(marker, 'utf8').trim().split('\n').pop()) : undefined
    return { ms: r.durationMs, rssKb, exitCode: r.exitCode }
  }

  // --- naive: cold tsc -b of every referenced project + full vitest run ------
  const naive: number[] = []
  const naiveTsc: number[] = []
  const naiveVitest: number[] = []
  let naiveTscRss = 0
  let naiveVitestRss = 0
  for (let i = 0; i < NAIVE_EDITS; i++) {
    applyEdit(kindOf(i))
    rmSync(join(root, '.out'), { recursive: true, force: true })
    const tsc = await timed([process.execPath, tscBin, '-b', 'tsconfig.json'])
    const all = await timed([...vitest, 'run', '--no-cache'])
    if (tsc.exitCode !== 0 || all.exitCode !== 0) throw new Error(`naive check failed on a good edit (tsc ${tsc.exitCode}, vitest ${all.exitCode})`)
    naiveTsc.push(tsc.ms)
    naiveVitest.push(all.ms)
    naive.push(tsc.ms + all.ms)
    naiveTscRss = Math.max(naiveTscRss, tsc.rssKb ?? 0)
    naiveVitestRss = Math.max(naiveVitestRss, all.rssKb ?? 0)
  }
  rmSync(join(root, '.out'), { recursive: true, force: true })

  interface Row { total: Record<Kind, number[]>; type: Record<Kind, number[]>; tests: Record<Kind, number[]>; related: number[]; first?: { total: number; type: number; tests: number; kind: Kind }; startMs: number; peakKb: number; testOnly?: number; phases: WarmRunPhases[] }
  const newRow = (): Row => ({ total: { body: [], export: [] }, type: { body: [], export: [] }, tests: { body: [], export: [] }, related: [], startMs: 0, peakKb: 0, phases: [] })

  /** A guard: the warm type-check worker, then a test check; session start = worker starts + type-check baseline. */
  const guardRow = async (tests: Check, edits: number, sampleGroup: () => number | undefined): Promise<Row> => {
    const row = newRow()
    const typecheck = new TypecheckCheck({ root, configPath, typescriptPath, maxHeapMb: 0 })
    let peak = 0
    const sample = () => { peak = Math.max(peak, process.memoryUsage().rss / 1024 + (sampleGroup() ?? 0)) }
    const sampler = setInterval(sample, 250)
    try {
      const started = performance.now()
      tests.startWorkers?.()
      ok('type-check baseline', await typecheck.measure(undefined, io))
      row.startMs = performance.now() - started
      for (let i = 0; i < edits; i++) {
        const kind = kindOf(i)
        const change = applyEdit(kind)
        const t0 = performance.now()
        ok(`typecheck after a ${kind} edit`, await typecheck.measure(change, io))
        const t1 = performance.now()
        const m = ok(`tests after a ${kind} edit`, await tests.measure(change, io))
        const t2 = performance.now()
        if (i === 0) row.first = { total: t2 - t0, type: t1 - t0, tests: t2 - t1, kind }
        else {
          row.total[kind].push(t2 - t0)
          row.type[kind].push(t1 - t0)
          row.tests[kind].push(t2 - t1)
          row.related.push(m.scope === 'all' ? lib.testFiles : m.scope.length)
          if (tests instanceof WarmVitestCheck && tests.lastPhases) row.phases.push(tests.lastPhases)
        }
      }
      // A write that touched only a test file: only that file's tests run.
      const testFile = join(root, 'test', 'unit', readTestName(root))
      writeFileSync(testFile, readFileSync(testFile, 'utf8') + '// touched\n')
      const t0 = performance.now()
      const rel = `test/unit/${readTestName(root)}`
      ok('typecheck after a test edit', await typecheck.measure({ paths: [testFile], files: [rel] }, io))
      const m = ok('tests after a test edit', await tests.measure({ paths: [testFile], files: [rel] }, io))
      const ran = m.scope === 'all' ? lib.testFiles : new Set(m.scope).size
      if (ran !== 1) throw new Error(`a test-only edit ran ${ran} test files`)
      row.testOnly = performance.now() - t0
      sample()
    } finally {
      clearInterval(sampler)
      await typecheck.dispose()
      await tests.dispose?.()
    }
    row.peakKb = peak
    return row
  }

  // --- today's guard: warm type-check + CLI `vitest related` -----------------
  const cliRow = await guardRow(new VitestCheck({ root, command: vitest, mode: 'related' }), CLI_EDITS, () => undefined)

  // --- the warm guard: warm type-check + warm test runner ---------------------
  const warm = new WarmVitestCheck({
    root, vitestNode: resolveFromWorkspace(root, 'vitest/node')!, mode: 'related',
    cli: new VitestCheck({ root, command: vitest, mode: 'related' }), maxRssMb: 0,
  })
  let runnerPeakKb = 0
  const warmRow = await guardRow(warm, EDITS, () => {
    const kb = warm.pid ? processGroupRssKb(warm.pid) : undefined
    runnerPeakKb = Math.max(runnerPeakKb, kb ?? 0)
    return kb
  })
  if (warm.unsupported) throw new Error(`the warm runner was not used: ${warm.unsupported}`)

  // --- floor: the warm in-process type-check alone ----------------------------
  const ts = require('typescript') as typeof TS
  const checker = new TsProgramChecker(ts, root, configPath)
  checker.check()
  const floor: Record<Kind, number[]> = { body: [], export: [] }
  const rechecked: Record<Kind, number[]> = { body: [], export: [] }
  for (let i = 0; i < EDITS; i++) {
    const kind = kindOf(i)
    const change = applyEdit(kind)
    const r = checker.check(change.paths)
    if (r.diagnostics.some(d => d.category === 'error')) throw new Error(`floor: a good ${kind} edit has errors`)
    floor[kind].push(r.durationMs)
    rechecked[kind].push(r.rechecked)
  }

  // --- first check after boot: cold vs a fresh build-info cache --------------
  const vault = mkdtempSync(join(tmpdir(), 'dsh-bench-vault-'))
  const boots: { label: string; ms: number; rechecked: number; restored: number }[] = []
  try {
    const bootOnce = async (label: string) => {
      const client = new TsWorkerClient({ root, configPath, typescriptPath, cacheDir: join(vault, 'tsbuildinfo') }, { maxHeapMb: 0 })
      try {
        const t0 = performance.now()
        const answer = await client.check([], io.timeoutMs)
        const took = performance.now() - t0
        if (answer.status !== 'ok' || answer.result.diagnostics.some(d => d.category === 'error')) throw new Error(`first check after boot (${label}) was not clean: ${answer.status}`)
        boots.push({ label, ms: took, rechecked: answer.result.rechecked, restored: answer.result.restored.length })
      } finally {
        // Disposal writes the cache (not timed: it happens when a session ends).
        await client.dispose(10 * 60_000)
      }
    }
    await bootOnce('cold (no cache)')
    await bootOnce('fresh build-info cache')
    applyEdit('body')
    await bootOnce('cache + a body-only edit made while down')
    applyEdit('export')
    await bootOnce('cache + an export-changing edit made while down')
  } finally {
    rmSync(vault, { recursive: true, force: true })
  }

  const naiveMed = median(naive)
  const vs = (x: number) => (Number.isNaN(x) ? '—' : `1/${(naiveMed / x).toFixed(1)}`)
  const both = (r: Row) => [...r.total.body, ...r.total.export]
  console.log(`## dsh-dstvalid on a library-sized project (${lib.modules.length} modules; ${lib.testFiles} test files, ${lib.tests} tests in ${lib.projects.length} vitest projects; solution tsconfig, ${lib.tsconfigs.length - 2} referenced projects)\n`)
  console.log(`Medians; ${EDITS} warm-guard edits, ${CLI_EDITS} CLI-guard edits, ${NAIVE_EDITS} naive (edits alternate body-only / export-changing; the first edit after session start is its own row).\n`)
  console.log('| approach | export-changing edit | body-only edit | vs naive (export) | peak RSS |')
  console.log('|---|---|---|---|---|')
  console.log(`| naive: cold \`tsc -b\` (every referenced project) + full \`vitest run\` | ${ms(naiveMed)} (tsc ${ms(median(naiveTsc))}, vitest ${ms(median(naiveVitest))}) | same | 1 | tsc ${mb(naiveTscRss)}, vitest ${mb(naiveVitestRss)} |`)
  const line = (label: string, r: Row, rss: string) => console.log(`| ${label} | ${ms(median(r.total.export))} (type-check ${ms(median(r.type.export))}, tests ${ms(median(r.tests.export))}) | ${ms(median(r.total.body))} (type-check ${ms(median(r.type.body))}, tests ${ms(median(r.tests.body))}) | ${vs(median(r.total.export))} | ${rss} |`)
  line('today\'s guard: warm type-check + CLI `vitest related`', cliRow, `${mb(cliRow.peakKb)} (guard process; vitest CLI not sampled)`)
  line('**warm guard**: warm type-check + warm test runner', warmRow, `${mb(warmRow.peakKb)} (guard + type-check worker + runner ${mb(runnerPeakKb)})`)
  console.log(`| floor: warm in-process type-check only | ${ms(median(floor.export))} (${median(rechecked.export)} files re-checked) | ${ms(median(floor.body))} (${median(rechecked.body)} files) | ${vs(median(floor.export))} | |`)
  console.log('')
  console.log('| first judged edit after session start | edit | time | type-check | tests | session start (worker + type-check baseline) |')
  console.log('|---|---|---|---|---|---|')
  for (const [label, r] of [['today\'s guard', cliRow], ['warm guard', warmRow]] as const) {
    console.log(`| ${label} | ${r.first!.kind} | ${ms(r.first!.total)} | ${ms(r.first!.type)} | ${ms(r.first!.tests)} | ${ms(r.startMs)} |`)
  }
  console.log('')
  console.log('| first type-check after boot (worker start + check) | time | files re-checked | programs from the cache | vs cold |')
  console.log('|---|---|---|---|---|')
  for (const b of boots) console.log(`| ${b.label} | ${ms(b.ms)} | ${b.rechecked} | ${b.restored} | ${b === boots[0] ? '1' : `1/${(boots[0]!.ms / b.ms).toFixed(1)}`} |`)
  console.log('')
  console.log(`Related test files per edit (median): ${median(warmRow.related)}. A test-file-only edit: today's guard ${ms(cliRow.testOnly ?? NaN)}, warm guard ${ms(warmRow.testOnly ?? NaN)} (1 test file run).`)
  if (warmRow.phases.length) {
    const p = (key: keyof WarmRunPhases) => median(warmRow.phases.map(x => x[key] ?? 0))
    console.log(`Where the warm runner's time goes (median per steady edit, ${p('files')} test files): related-files walk ${ms(p('relatedMs'))}, invalidation ${ms(p('invalidateMs'))}, vitest run ${ms(p('runMs'))} — summed over its test files: worker preparation ${ms(p('prepareMs'))}, collection (imports) ${ms(p('collectMs'))}, tests ${ms(p('testsMs'))}; the rest of the run is a fresh worker per test file (vitest's isolation, kept: it decides verdicts).`)
  }
  const exp = median(warmRow.total.export)
  const steady = median(both(warmRow))
  const goals = [
    `export-changing median ≤ 1/15 of naive and ≤ 5 s: ${ms(exp)} = ${vs(exp)} of naive (${exp <= naiveMed / 15 && exp <= 5000 ? 'met' : 'NOT met'})`,
    `body-only type-check ≤ 1.5 s: ${ms(median(warmRow.type.body))} (${median(warmRow.type.body) <= 1500 ? 'met' : 'NOT met'}); its tests ${ms(median(warmRow.tests.body))} warm vs ${ms(median(cliRow.tests.body))} through the CLI`,
    `first judged edit ≤ 2× the steady median: ${ms(warmRow.first!.total)} vs ${ms(steady)} = ${(warmRow.first!.total / steady).toFixed(2)}× (${warmRow.first!.total <= 2 * steady ? 'met' : 'NOT met'})`,
    `guard RSS incl. workers ≤ 1.5 GB: ${mb(warmRow.peakKb)} (${warmRow.peakKb <= 1.5 * 1024 * 1024 ? 'met' : 'NOT met'})`,
  ]
  console.log(`\nGoals (warm guard): ${goals.join('; ')}.`)
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
  console.log(`Load average at the end: ${load} (wall-clock times on a shared machine; compare rows, not absolute figures).`)
}

/** The first unit test file's name. */
function readTestName(root: string): string {
  return readdirSync(join(root, 'test', 'unit')).sort()[0]!
}
