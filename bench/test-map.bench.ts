/**
 * The map of executed functions (ADR 0021) on the generated library
 * (bench/gen-library.ts: 320 modules, 160 test files, 4,160 tests, three
 * vitest projects), side by side in one run:
 *
 * - what recording the map costs: the whole suite in the warm runner with
 *   the calls recorder and without it (alternating, after a warm-up run each);
 * - body-only edits (a function of a middle-layer module gets a new body,
 *   same behaviour): the test files and tests the map selection runs and its
 *   time, against the related test files by imports (today's selection);
 * - breaking body-only edits: both selections must roll them back with the
 *   same failing tests.
 *
 *   tsx bench/test-map.bench.ts
 *   DSH_BENCH_EDITS=8 DSH_BENCH_RUNS=2 tsx bench/test-map.bench.ts
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadavg } from 'node:os'
import { resolveFromWorkspace, TestMap, VitestCheck, vitestCommand, WarmVitestCheck, type Change, type CheckIO, type Measurement } from 'dsh-dstvalid'
import { generateLibrary } from './gen-library.ts'

const env = (name: string, def: number) => Number(process.env[name] ?? def)
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2) : NaN
}
const sec = (ms: number) => `${(ms / 1000).toFixed(2)} s`

const here = dirname(fileURLToPath(import.meta.url))
const root = mkdtempSync(join(tmpdir(), 'dsh-bench-test-map-'))
const lib = generateLibrary(root, { modules: env('DSH_BENCH_MODULES', 320), testFiles: env('DSH_BENCH_TEST_FILES', 160), seed: 1 }, join(here, '..', 'node_modules'))
const vitestNode = resolveFromWorkspace(root, 'vitest/node')!
const cli = new VitestCheck({ root, command: vitestCommand(root)!, mode: 'related' })

const notices: string[] = []
const io: CheckIO = { record: () => {}, notice: (_level, text) => { notices.push(text) }, timeoutMs: 600_000, maxOutputBytes: 1 << 20 }

function runner(map: boolean): WarmVitestCheck {
  return new WarmVitestCheck({ root, vitestNode, mode: 'related', cli, maxRssMb: 0, ...(map ? { testMap: new TestMap() } : {}) })
}

/** Tests a measurement ran (passed or failed) and its test files. */
function counted(m: Measurement): { tests: number; files: number } {
  const files = m.scope === 'all' ? 0 : m.scope.length
  return { tests: (m.passed?.length ?? 0) + m.problems.length, files }
}

const mapped = runner(true)
const plain = runner(false)
try {
  // 1. Recording cost: whole suite, alternating, after one warm-up run each.
  const RUNS = env('DSH_BENCH_RUNS', 2)
  const full: Record<'with' | 'without', number[]> = { with: [], without: [] }
  for (const check of [plain, mapped]) await check.measure(undefined, io)
  for (let i = 0; i < RUNS; i++) {
    for (const [name, check] of [['without', plain], ['with', mapped]] as const) {
      const t = performance.now()
      const m = await check.measure(undefined, io)
      if (m.status !== 'ok' || m.problems.length) throw new Error(`the whole suite did not pass (${m.error ?? m.problems[0]?.message})`)
      full[name].push(performance.now() - t)
    }
  }

  // 2. Body-only edits of middle-layer modules, alternating make<N> (called by its own tests) and compute<N> (called through its dependents).
  const EDITS = env('DSH_BENCH_EDITS', 8)
  const targets = lib.modules.filter(m => m.layer === 1 || m.layer === 2)
  interface Row { file: string; fn: string; related: { tests: number; files: number; ms: number }; map: { tests: number; files: number; ms: number }; note: string }
  const rows: Row[] = []
  const breaks: { file: string; same: boolean; related: number; map: number }[] = []
  for (let i = 0; i < EDITS; i++) {
    const m = targets[(i * 37) % targets.length]!
    const abs = join(root, m.path)
    const before = readFileSync(abs)
    const text = before.toString('utf8')
    const make = i % 2 === 0
    const fn = make ? `make${m.index}` : `compute${m.index}`
    const edited = make
      ? text.replace('  const unique = [...new Set(tags)].sort()', '  const unique = [...new Set(tags)].sort().slice(0)')
      : text.replace('  return total\n', '  return total + 0\n')
    if (edited === text) throw new Error(`edit ${i} changed nothing in ${m.path}`)
    const change: Change = { paths: [abs], files: [m.path], before: new Map([[abs, before]]) }
    writeFileSync(abs, edited)
    notices.length = 0
    let t = performance.now()
    const byMap = await mapped.measure(change, io)
    const mapMs = performance.now() - t
    const note = notices.find(n => n.startsWith('tests: ')) ?? '(no map selection)'
    t = performance.now()
    const byFiles = await plain.measure({ paths: [abs], files: [m.path] }, io)
    const relatedMs = performance.now() - t
    if (byMap.problems.length || byFiles.problems.length) throw new Error(`a same-behaviour edit of ${fn} failed tests`)
    rows.push({ file: m.path, fn, map: { ...counted(byMap), ms: mapMs }, related: { ...counted(byFiles), ms: relatedMs }, note })
    // Rolled back byte for byte (as a rollback would): the map's re-recorded entries are put back.
    writeFileSync(abs, before)
    await mapped.restore()

    // The same function broken: both selections roll it back with the same failing tests.
    const broken = make ? text.replace('  return { id, label, tags: unique }', '  return { id: id + 1, label, tags: unique }') : text.replace('  return total\n', '  return total + 1\n')
    writeFileSync(abs, broken)
    const brokenMap = await mapped.measure({ ...change, before: new Map([[abs, before]]) }, io)
    const brokenFiles = await plain.measure({ paths: [abs], files: [m.path] }, io)
    const keys = (x: Measurement) => x.problems.map(p => p.key).sort().join('\n')
    breaks.push({ file: m.path, same: keys(brokenMap) === keys(brokenFiles) && brokenMap.problems.length > 0, related: brokenFiles.problems.length, map: brokenMap.problems.length })
    writeFileSync(abs, before)
    await mapped.restore()
  }

  const load = loadavg().map(x => x.toFixed(1)).join(', ')
  console.log(`generated library: ${lib.modules.length} modules, ${lib.testFiles} test files, ${lib.tests} tests; load average ${load}\n`)
  const w = median(full.with)
  const wo = median(full.without)
  console.log('| whole suite in the warm runner | median | runs |')
  console.log('|---|---|---|')
  console.log(`| without the calls recorder | ${sec(wo)} | ${full.without.map(sec).join(', ')} |`)
  console.log(`| with the calls recorder (the map recorded) | ${sec(w)} | ${full.with.map(sec).join(', ')} |`)
  console.log(`\nrecording overhead: ${(((w / wo) - 1) * 100).toFixed(1)} % (goal ≤ 20 %)\n`)
  console.log('| body-only edit | related by imports: files / tests / time | map: files / tests / time | fewer tests | the map said |')
  console.log('|---|---|---|---|---|')
  for (const r of rows) {
    const ratio = r.map.tests ? `${(r.related.tests / r.map.tests).toFixed(1)}×` : `all ${r.related.tests}`
    console.log(`| \`${r.fn}\` (${r.file}) | ${r.related.files} / ${r.related.tests} / ${sec(r.related.ms)} | ${r.map.files} / ${r.map.tests} / ${sec(r.map.ms)} | ${ratio} | ${r.note} |`)
  }
  const relTests = rows.reduce((s, r) => s + r.related.tests, 0)
  const mapTests = rows.reduce((s, r) => s + r.map.tests, 0)
  console.log(`\nbody-only edits: ${relTests} tests by imports, ${mapTests} by the map (${(relTests / Math.max(1, mapTests)).toFixed(1)}× fewer; goal ≥ 5×); median time ${sec(median(rows.map(r => r.related.ms)))} → ${sec(median(rows.map(r => r.map.ms)))}`)
  const missed = breaks.filter(b => !b.same)
  console.log(`breaking body edits: ${breaks.length}, the same failing tests by both selections in ${breaks.length - missed.length} (failures by imports / by the map: ${breaks.map(b => `${b.related}/${b.map}`).join(', ')})${missed.length ? ` — DIFFERENT in ${missed.map(b => b.file).join(', ')}` : ''}`)
  if (missed.length) process.exitCode = 1
} finally {
  await mapped.dispose()
  await plain.dispose()
  rmSync(root, { recursive: true, force: true })
}
