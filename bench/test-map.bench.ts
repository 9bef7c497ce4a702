/**
 * The map of executed functions (ADR 0021) on the generated library
 * (bench/gen-library.ts: 320 modules, 160 test files, 4,160 tests, three
 * vitest projects), side by side in one run:
 *
 * - what recording the map costs: the whole suite in the warm runner with
 *   the calls recorder and without it (alternating, after a warm-up run each);
 * - body-only edits (a function of a middle-layer module gets a new body,
 *   same behaviour; make, compute, summarise and a store method in turn): the test files and tests the map selection runs and its
 *   time, against the related test files by imports (today's selection);
 * - breaking body-only edits: both selections must roll them back with the
 *   same failing tests.
 *
 * With `DSH_BENCH_WORKSPACE=DIR DSH_BENCH_MODULE=src/x.ts` the same on a
 * real project (a throw-away clone: its files are edited and put back byte
 * for byte): the module's related test files run once with the recorder and
 * once without, then every top-level function of the module gets a
 * same-behaviour body edit and a breaking one, each judged by both
 * selections (bench/test-map-workspace.ts).
 *
 *   tsx bench/test-map.bench.ts
 *   DSH_BENCH_EDITS=8 DSH_BENCH_RUNS=2 tsx bench/test-map.bench.ts
 *   DSH_BENCH_WORKSPACE=/tmp/hono DSH_BENCH_MODULE=src/utils/url.ts tsx bench/test-map.bench.ts
 *
 * With `DSH_BENCH_JUDGE=1` as well: the whole judgement of body-only edits
 * through the real harness once the map is warm (bench/test-map-judgement.ts).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadavg } from 'node:os'
import { resolveFromWorkspace, TestMap, VitestCheck, vitestCommand, WarmVitestCheck, type Change, type CheckIO, type Measurement } from 'dsh-dstvalid'
import { generateLibrary } from './gen-library.ts'
import { counted, env, median, runWorkspaceBench, sec } from './test-map-workspace.ts'
import { runJudgementBench } from './test-map-judgement.ts'

/** The functions of a generated module the edits take in turn: a same-behaviour body and a breaking one. */
const EDIT_KINDS: { fn: (id: number) => string; from: string; same: string; broken: string }[] = [
  { fn: id => `make${id}`, from: '  return { id, label, tags: unique }', same: '  return { id, label, tags: unique.slice(0) }', broken: '  return { id: id + 1, label, tags: unique }' },
  { fn: id => `compute${id}`, from: '  return total\n', same: '  return total + 0\n', broken: '  return total + 1\n' },
  { fn: id => `summarise${id}`, from: '  return { count: records.length,', same: '  return { count: records.length + 0,', broken: '  return { count: records.length + 1,' },
  { fn: id => `Store${id}.get`, from: '    return this.items.get(id)\n', same: '    return this.items.get(id) ?? undefined\n', broken: '    return this.items.get(id + 1)\n' },
]

async function runLibraryBench(): Promise<void> {
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

  const mapped = runner(true)
  const plain = runner(false)
  // As at session start: the runners (and the map's parser) start in the background.
  mapped.startWorkers()
  plain.startWorkers()
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
      // One function of the module per edit, in turn: its same-behaviour edit and its breaking one.
      const kind = EDIT_KINDS[i % EDIT_KINDS.length]!
      const fn = kind.fn(m.index)
      const edited = text.replace(kind.from, kind.same)
      const broken = text.replace(kind.from, kind.broken)
      if (edited === text || broken === text) throw new Error(`edit ${i} changed nothing in ${m.path}`)
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

      // The same function broken: both selections find the same failing tests.
      writeFileSync(abs, broken)
      const brokenMap = await mapped.measure({ ...change, before: new Map([[abs, before]]) }, io)
      const brokenFiles = await plain.measure({ paths: [abs], files: [m.path] }, io)
      const keys = (x: Measurement) => x.problems.map(p => p.key).sort().join('\n')
      breaks.push({ file: m.path, same: keys(brokenMap) === keys(brokenFiles), related: brokenFiles.problems.length, map: brokenMap.problems.length })
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
}

if (process.env.DSH_BENCH_WORKSPACE && process.env.DSH_BENCH_JUDGE === '1') await runJudgementBench(process.env.DSH_BENCH_WORKSPACE, process.env.DSH_BENCH_MODULE ?? '')
else if (process.env.DSH_BENCH_WORKSPACE) await runWorkspaceBench(process.env.DSH_BENCH_WORKSPACE, process.env.DSH_BENCH_MODULE ?? '')
else await runLibraryBench()
