/**
 * The TypeScript 7 rows of `pnpm bench dstvalid`: the same generated project
 * (default 320 modules, a library of the size the TS 7 figures were taken
 * on) type-checked by the workspace's own TypeScript 7 (`typescript@7.0.2`,
 * installed once into node_modules/.cache/dsh-bench, never replacing the
 * suite's own TypeScript), per export-changing and body-only edit:
 *
 * - naive: a cold `tsc -p tsconfig.json --noEmit` per edit;
 * - ours, fallback: the cold per-judgement `tsc -b` over shadow configs;
 * - ours, warm: the `tsc --api` server (Typecheck7Check, through the Guard);
 * - measured alternative: native `tsc -p --watch --noEmit`, from the write to
 *   the end of its cycle (what ADR 0006 compared the API server with).
 *
 *   DSH_BENCH_TS=7 tsx bench/dstvalid.bench.ts        (only these rows)
 *   DSH_BENCH_TS7_MODULES=320 DSH_BENCH_EDITS=10 DSH_BENCH_NAIVE_EDITS=3
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runCommand, startProcess } from 'dsh-common'
import { Guard, Typecheck7Check, nativeTscCommand, workspaceTypescript, type GuardIO } from 'dsh-dstvalid'
import { generateProject } from './gen-ts-project.ts'

const TS7 = '7.0.2'
const env = (name: string, def: number) => Number(process.env[name] ?? def)
const here = dirname(fileURLToPath(import.meta.url))
const repoModules = join(here, '..', 'node_modules')

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2) : NaN
}
const ms = (x: number) => (Number.isNaN(x) ? '—' : x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(x < 10 ? 1 : 0)} ms`)
const mb = (kb: number | undefined) => (kb ? `${Math.round(kb / 1024)} MB` : '—')

/** typescript@7 in its own directory under node_modules/.cache (installed once from the registry). */
async function typescript7(): Promise<string> {
  const dir = join(repoModules, '.cache', 'dsh-bench', `typescript-${TS7}`)
  if (existsSync(join(dir, 'node_modules', 'typescript', 'package.json'))) return join(dir, 'node_modules')
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'dsh-bench-typescript7', private: true }))
  const r = await runCommand(['npm', 'install', '--no-audit', '--no-fund', `typescript@${TS7}`], { cwd: dir, timeoutMs: 300_000 })
  if (r.exitCode !== 0) throw new Error(`npm install typescript@${TS7} failed: ${r.output.slice(-500)}`)
  return join(dir, 'node_modules')
}

/** Peak RSS (VmHWM) of a live process, in kB. */
function peakRssKb(pid: number | undefined): number | undefined {
  if (!pid) return undefined
  try {
    return Number(/VmHWM:\s*(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1])
  } catch {
    // Not Linux, or gone.
    return undefined
  }
}

export async function runTs7Bench(): Promise<void> {
  const MODULES = env('DSH_BENCH_TS7_MODULES', 320)
  const EDITS = env('DSH_BENCH_EDITS', 10)
  const NAIVE_EDITS = env('DSH_BENCH_NAIVE_EDITS', 3)
  const ts7Modules = await typescript7()
  const root = mkdtempSync(join(tmpdir(), 'dsh-bench-ts7-'))
  const project = generateProject(root, { modules: MODULES, testFiles: 20, seed: 1 })
  // The workspace's own node_modules: TypeScript 7 (and vitest, whose types the test files import).
  mkdirSync(join(root, 'node_modules'))
  symlinkSync(join(ts7Modules, 'typescript'), join(root, 'node_modules', 'typescript'))
  symlinkSync(join(ts7Modules, '@typescript'), join(root, 'node_modules', '@typescript'))
  symlinkSync(join(repoModules, 'vitest'), join(root, 'node_modules', 'vitest'))
  const ts = workspaceTypescript(root)!
  const tsc = nativeTscCommand(ts)

  const targets = project.modules.filter(m => m.layer === 1 || m.layer === 2)
  let editNo = 0
  const applyEdit = (kind: 'body' | 'export'): string => {
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
  const byKind = () => ({ body: [] as number[], export: [] as number[] })
  const change = (file: string) => ({ paths: [file], files: [file.slice(root.length + 1)] })
  const io: GuardIO = { record: () => {}, notice: () => {} }
  const checkIO = { ...io, timeoutMs: 600_000, maxOutputBytes: 1 << 22 }

  // naive: cold `tsc -p --noEmit` per edit
  const naive = byKind()
  let naiveRss = 0
  const gnuTime = existsSync('/usr/bin/time')
  for (let i = 0; i < NAIVE_EDITS * 2; i++) {
    const kind = kindOf(i)
    applyEdit(kind)
    const marker = join(root, '.rss')
    const r = await runCommand(gnuTime ? ['/usr/bin/time', '-o', marker, '-f', '%M', ...tsc, '-p', 'tsconfig.json', '--noEmit'] : [...tsc, '-p', 'tsconfig.json', '--noEmit'], { cwd: root, timeoutMs: 600_000 })
    if (r.exitCode !== 0) throw new Error(`naive tsc failed on a good edit: ${r.output.slice(0, 500)}`)
    naive[kind].push(r.durationMs)
    if (gnuTime && existsSync(marker)) naiveRss = Math.max(naiveRss, Number(readFileSync(marker, 'utf8').trim().split('\n').pop()))
  }

  // ours, fallback: the cold per-judgement `tsc -b` over shadow configs
  const cold = byKind()
  const coldCheck = new Typecheck7Check({ root, configPath: join(root, 'tsconfig.json'), tsc, warm: false })
  for (let i = 0; i < NAIVE_EDITS * 2; i++) {
    const kind = kindOf(i)
    const file = applyEdit(kind)
    const t = performance.now()
    const m = await coldCheck.measure(change(file), checkIO)
    if (m.status !== 'ok' || m.problems.length) throw new Error(`cold tsc -b: ${m.error ?? m.problems.map(p => p.message).join('; ')}`)
    cold[kind].push(performance.now() - t)
  }

  // ours, warm: the tsc --api server through the Guard
  const warm = byKind()
  const check = new Typecheck7Check({ root, configPath: join(root, 'tsconfig.json'), tsc })
  const guard = new Guard({ root, checks: [check], rules: { strictTests: false, isTestFile: f => f.startsWith('tests/') }, timeoutMs: 600_000, maxOutputBytes: 1 << 22, confirmFlaky: true })
  let t = performance.now()
  await guard.prepare(io)
  const warmBaseline = performance.now() - t
  for (let i = 0; i < EDITS; i++) {
    const kind = kindOf(i)
    const file = applyEdit(kind)
    t = performance.now()
    const j = await guard.measure(change(file), io, 'bench edit')
    if (j.regression || j.checks[0]?.outcome !== 'pass') throw new Error(`warm: a good edit was not kept: ${JSON.stringify(j.checks)}`)
    guard.advance(j)
    warm[kind].push(performance.now() - t)
  }
  const warmRss = peakRssKb(check.serverPid)
  await guard.dispose()

  // measured alternative: native watch, from the write to the end of its cycle
  const watch = byKind()
  const watcher = startProcess([...tsc, '-p', 'tsconfig.json', '--watch', '--noEmit', '--pretty', 'false', '--preserveWatchOutput'], { cwd: root })
  let buffer = ''
  let waiting: (() => void) | undefined
  watcher.stdout.on('data', (c: Buffer) => {
    buffer += c.toString('utf8')
    if (/Watching for file changes/.test(buffer)) {
      buffer = ''
      waiting?.()
    }
  })
  const cycle = () => new Promise<void>(resolve => { waiting = resolve })
  await cycle()
  for (let i = 0; i < EDITS; i++) {
    const kind = kindOf(i)
    const done = cycle()
    t = performance.now()
    applyEdit(kind)
    await done
    watch[kind].push(performance.now() - t)
  }
  const watchRss = peakRssKb(watcher.pid)
  await watcher.stop()
  rmSync(root, { recursive: true, force: true })

  const naiveAll = median([...naive.body, ...naive.export])
  const ratio = (x: number) => `${(x / naiveAll).toFixed(3)} (1/${Math.round(naiveAll / x)})`
  const row = (name: string, k: { body: number[]; export: number[] }, rss: string) => {
    const all = median([...k.body, ...k.export])
    return `| ${name} | ${ms(median(k.export))} | ${ms(median(k.body))} | ${ratio(all)} | ${rss} |`
  }
  console.log(`\n## dsh-dstvalid on TypeScript ${ts.version}: type-check per edit (${project.modules.length} modules + 20 test files; ${EDITS} edits warm, ${NAIVE_EDITS * 2} cold)\n`)
  console.log('| approach | export-changing edit | body-only edit | vs naive | peak RSS |')
  console.log('|---|---|---|---|---|')
  console.log(row('naive: cold `tsc -p tsconfig.json --noEmit` (TS 7 native)', naive, `tsc ${mb(naiveRss)}`))
  console.log(row('dsh-dstvalid fallback: cold per-judgement `tsc -b` (shadow configs, outputs in node_modules/.cache)', cold, '—'))
  console.log(row('**dsh-dstvalid: warm `tsc --api` server** (Typecheck7Check, through the Guard)', warm, `server ${mb(warmRss)}`))
  console.log(row('alternative (not chosen, ADR 0006): native `tsc --watch`, write → end of cycle', watch, `watch ${mb(watchRss)}`))
  const e = median(warm.export)
  const b = median(warm.body)
  console.log(`\nGoal for TS 7 (warm): export-changing ≤ 1.5 s — ${ms(e)} (${e <= 1500 ? 'met' : 'NOT met'}); body-only ≤ 0.3 s — ${ms(b)} (${b <= 300 ? 'met' : 'NOT met'}). One-time warm baseline (server start + first check): ${ms(warmBaseline)}.`)
}
