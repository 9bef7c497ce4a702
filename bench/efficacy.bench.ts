/**
 * Efficacy of dsh-dstvalid on the layouts real repositories have: a corpus
 * of scripted edits (bench/efficacy-corpus.ts) over every layout of
 * dsh-testkit's layouts.ts, examples/demo, the setups workspace, a Go
 * module and a Python package, each labelled bad (must be rolled back, byte for byte)
 * or good (must be kept), run through the real harness: session, tools,
 * workspace tools, dsh-snapshot (with `shell: git`, so a deleting `rm` is
 * undone too) and dsh-dstvalid with its defaults
 * (type-check + related tests, `shell: true`, turn verdicts). Each edit is a
 * turn of its own that the agent then ends: a bad edit whose new problems
 * are only in other files is kept for now, and must be gone by the end of
 * its turn (the stop refused, then the edit undone, ADR 0037). Per workspace it prints
 * escaped regressions (bad, kept), false rollbacks (good, rolled back),
 * `not verified` verdicts, the median time per judged edit, and the naive
 * per-edit check (cold type-check of every project + the whole test suite)
 * measured once on the same workspace. Goal: 0 / 0 / 0.
 *
 * The corpus runs with the map of executed functions on (`testSelection:
 * 'functions'`, ADR 0021), then again with the related test files selected
 * by imports alone (`'files'`): on every bad edit, each failing-test line the
 * file selection reports the map must report too, both listed side by side
 * where they differ. An edit a check before the tests (the type-check)
 * judged differently in the two passes ran no selection in one of them:
 * not a miss, but a check that is not deterministic — listed, and the
 * bench fails too (`DSH_BENCH_SELECTIONS=functions` skips the second pass).
 *
 *   tsx bench/efficacy.bench.ts [vite-app|library|monorepo|jest|demo|setups|go|python …]
 *   DSH_BENCH_VERBOSE=1 tsx bench/efficacy.bench.ts   # every result in full
 */
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Context, type Fiber } from '@deepseek-ai/cordis'
import SessionService from 'dsh-session'
import ToolService, { type ToolResult } from 'dsh-tools'
import * as WorkspaceTools from 'dsh-tools-workspace'
import * as Snapshot from 'dsh-snapshot'
import type { Agent } from 'dsh-agent'
import DstValidService from 'dsh-dstvalid'
import { demoCorpus, goCorpus, goModuleFiles, layoutCorpus, pythonCorpus, pythonPackageFiles, setupsCorpus, setupsFiles, type CorpusEdit, type CorpusWorkspace, type ToolCall } from './efficacy-corpus.ts'
import { generateLayout, LAYOUT_KINDS, repoNodeModules, type Layout } from 'dsh-testkit'

const here = dirname(fileURLToPath(import.meta.url))
const verbose = !!process.env.DSH_BENCH_VERBOSE
const wanted = process.argv.slice(2)
const WORKSPACES: CorpusWorkspace[] = [...LAYOUT_KINDS, 'demo', 'setups', 'go', 'python']
const selected = wanted.length ? WORKSPACES.filter(w => wanted.includes(w)) : WORKSPACES
if (!selected.length) {
  console.error(`efficacy: no workspace matches ${wanted.join(', ')} (have: ${WORKSPACES.join(', ')})`)
  process.exit(2)
}

type Outcome = 'kept' | 'rolled back' | 'undone at turn end' | 'not verified' | 'unrestored'

/** Gone by the end of its turn: rolled back at once, or kept for now and undone when the turn ended. */
const goneByTurnEnd = (o: Outcome) => o === 'rolled back' || o === 'undone at turn end'

interface Row {
  workspace: CorpusWorkspace
  edit: CorpusEdit
  outcome: Outcome
  /** Bytes of the touched files differ from before the call after a rollback (or at the end of the turn that undid it). */
  restoreMismatch: boolean
  ms: number
  content: string
}

function git(root: string, ...args: string[]) {
  const r = spawnSync('git', ['-c', 'user.email=bench@example.invalid', '-c', 'user.name=bench', ...args], { cwd: root, encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`)
}

function prepareWorkspace(w: CorpusWorkspace): { root: string; corpus: CorpusEdit[]; layout?: Layout } {
  const dir = mkdtempSync(join(tmpdir(), `dsh-efficacy-${w}-`))
  let result: { root: string; corpus: CorpusEdit[]; layout?: Layout }
  if (w === 'demo') {
    cpSync(join(here, '..', 'examples', 'demo', 'workspace'), dir, { recursive: true })
    symlinkSync(repoNodeModules, join(dir, 'node_modules'), 'dir')
    writeFileSync(join(dir, '.gitignore'), 'node_modules\n.dsh\n')
    result = { root: dir, corpus: demoCorpus() }
  } else if (w === 'setups' || w === 'go' || w === 'python') {
    for (const [rel, text] of Object.entries(w === 'setups' ? setupsFiles() : w === 'go' ? goModuleFiles() : pythonPackageFiles())) {
      mkdirSync(dirname(join(dir, rel)), { recursive: true })
      writeFileSync(join(dir, rel), text)
    }
    if (w === 'setups') symlinkSync(repoNodeModules, join(dir, 'node_modules'), 'dir')
    result = { root: dir, corpus: w === 'setups' ? setupsCorpus() : w === 'go' ? goCorpus() : pythonCorpus() }
  } else {
    const layout = generateLayout(w, dir)
    result = { root: layout.root, corpus: layoutCorpus(layout), layout }
  }
  // A git work tree, as real projects are: dsh-snapshot's `shell: git` needs one to undo an `rm`.
  git(result.root, 'init', '-q')
  git(result.root, 'add', '-A')
  git(result.root, 'commit', '-qm', 'initial')
  return result
}

/** The paths a call may touch (for the byte-for-byte comparison). */
function touched(call: ToolCall): string[] {
  if (call.tool === 'multi_edit') return [...new Set((call.args.edits as { path: string }[]).map(e => e.path))]
  if (call.tool === 'bash') return [String(call.args.command).replace(/^rm /, '')]
  return [String(call.args.path)]
}

function contents(root: string, paths: string[]): (string | null)[] {
  return paths.map(p => existsSync(join(root, p)) ? readFileSync(join(root, p), 'utf8') : null)
}

function classify(result: ToolResult): Outcome {
  const text = String(result.content)
  if (text.startsWith('rolled back:')) return 'rolled back'
  if (text.startsWith('regression detected') || text.startsWith('rollback FAILED')) return 'unrestored'
  if (text.includes('not verified')) return 'not verified'
  return 'kept'
}

/** The naive per-edit check on this workspace: a cold type-check of every project and the whole test suite (Python: a compile of every file and the whole pytest suite; Go: build, vet and test every package). */
function naive(root: string, w: CorpusWorkspace): { ms: number; argv: string[][] } {
  if (w === 'python' || w === 'go') {
    const argv = w === 'go'
      ? [['go', 'build', './...'], ['go', 'vet', './...'], ['go', 'test', './...']]
      : [['python3', '-m', 'compileall', '-q', 'src', 'tests'], ['python3', '-m', 'pytest', '-q', '-p', 'no:cacheprovider']]
    const started = performance.now()
    for (const [cmd, ...args] of argv) spawnSync(cmd!, args, { cwd: root, stdio: 'ignore', env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } })
    return { ms: performance.now() - started, argv }
  }
  const tsc = join(repoNodeModules, 'typescript', 'bin', 'tsc')
  const projects = w === 'vite-app' ? ['tsconfig.app.json', 'tsconfig.node.json']
    : w === 'library' ? ['tsconfig.build.json', 'tsconfig.spec.json']
    : w === 'monorepo' ? ['core', 'model', 'service', 'app'].map(p => `packages/${p}/tsconfig.json`)
    : ['tsconfig.json']
  // `tsc -b` would build (and write) the library's references; `-p --noEmit` per project checks the same files.
  const argv = projects.map(p => [tsc, '--noEmit', '-p', p])
  if (w === 'library') argv.splice(0, argv.length, [tsc, '-b', '--noEmit', 'tsconfig.json'])
  argv.push(w === 'jest' ? [join(repoNodeModules, 'jest', 'bin', 'jest.js')] : [join(repoNodeModules, 'vitest', 'vitest.mjs'), 'run'])
  const started = performance.now()
  for (const a of argv) spawnSync(process.execPath, a, { cwd: root, stdio: 'ignore' })
  return { ms: performance.now() - started, argv }
}

async function runWorkspace(w: CorpusWorkspace, testSelection: 'functions' | 'files' = 'functions', withNaive = true): Promise<{ rows: Row[]; naiveMs: number; baselineMs: number }> {
  const { root, corpus } = prepareWorkspace(w)
  const ctx = new Context()
  const fibers: Fiber[] = []
  const load = async (plugin: Parameters<Context['plugin']>[0], config?: unknown) => {
    const fiber = ctx.plugin(plugin, config)
    fibers.push(fiber)
    await fiber.await()
  }
  await load(SessionService)
  await load(ToolService)
  await load(WorkspaceTools, {})
  await load(Snapshot, { fsync: 'off', shell: 'git' })
  await load(DstValidService, { warmOnStart: false, shell: true, testArgs: w === 'jest' || w === 'go' || w === 'python' ? [] : ['--pool=threads'], testSelection })
  const session = ctx.sessions.create(undefined, { cwd: root })
  let calls = 0
  const rows: Row[] = []
  try {
    // The baseline, as the first write would measure it (timed apart from the edits).
    let t = performance.now()
    const guard = ctx.dstvalid.guardFor(root)
    await guard.queue.run(() => guard.prepare({ record: run => { session.append('verify/run', run) }, notice: () => {} }))
    const baselineMs = performance.now() - t
    for (const edit of corpus) {
      const call = edit.call(root)
      const paths = touched(call)
      const before = contents(root, paths)
      t = performance.now()
      const result = await ctx.tools.execute({ session, callId: `e${++calls}`, name: call.tool, arguments: call.args })
      const ms = performance.now() - t
      let outcome = classify(result)
      // The agent ends its turn (and again, as often as the stop is refused): a change kept for now is undone then.
      const said = session.ofType('context/message').length
      const agent = { session } as unknown as Agent
      for (let refused = 0; refused < 10 && await ctx.serial('agent/stop', agent, calls); refused++);
      if (session.ofType('context/message').slice(said).some(e => e.data.text.startsWith('undone at the end of the turn:'))) outcome = 'undone at turn end'
      const after = contents(root, paths)
      const restoreMismatch = goneByTurnEnd(outcome) && JSON.stringify(before) !== JSON.stringify(after)
      rows.push({ workspace: w, edit, outcome, restoreMismatch, ms, content: String(result.content) })
      if (verbose || (edit.verdict === 'bad') !== goneByTurnEnd(outcome) || restoreMismatch) {
        console.log(`  ${edit.verdict} ${edit.kind.padEnd(20)} ${outcome.padEnd(12)} ${(ms / 1000).toFixed(1)} s  ${edit.name}`)
        console.log(`    ${String(result.content).split('\n').slice(0, 6).join('\n    ')}`)
      }
      if (edit.verdict === 'bad' && !goneByTurnEnd(outcome)) {
        // An escaped regression: put the files back ourselves so the next edits start from the accepted state.
        paths.forEach((p, i) => {
          const abs = join(root, p)
          if (before[i] === null) { if (existsSync(abs)) unlinkSync(abs) } else writeFileSync(abs, before[i]!)
        })
        guard.markDirty()
      }
    }
    const naiveMs = withNaive ? naive(root, w).ms : NaN
    return { rows, naiveMs, baselineMs }
  } finally {
    for (const f of fibers.reverse()) await f.dispose()
    rmSync(root, { recursive: true, force: true })
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2) : NaN
}
const sec = (ms: number) => `${(ms / 1000).toFixed(1)} s`

const all: Row[] = []
const table: string[] = [
  '| workspace | edits (bad/good) | escaped | false rollbacks | not verified | restore mismatches | baseline | median per edit | naive per edit | naive / ours |',
  '|---|---|---|---|---|---|---|---|---|---|',
]
const byWorkspace = new Map<CorpusWorkspace, Row[]>()
for (const w of selected) {
  console.log(`\n### ${w}`)
  const { rows, naiveMs, baselineMs } = await runWorkspace(w)
  all.push(...rows)
  byWorkspace.set(w, rows)
  const bad = rows.filter(r => r.edit.verdict === 'bad')
  const goodRows = rows.filter(r => r.edit.verdict === 'good')
  const escaped = bad.filter(r => !goneByTurnEnd(r.outcome)).length
  const falseRollbacks = goodRows.filter(r => goneByTurnEnd(r.outcome) || r.outcome === 'unrestored').length
  const notVerified = rows.filter(r => r.outcome === 'not verified').length
  const mismatches = rows.filter(r => r.restoreMismatch).length
  const per = median(rows.map(r => r.ms))
  table.push(`| ${w} | ${rows.length} (${bad.length}/${goodRows.length}) | ${escaped} | ${falseRollbacks} | ${notVerified} | ${mismatches} | ${sec(baselineMs)} | ${sec(per)} | ${sec(naiveMs)} | ${(naiveMs / per).toFixed(1)}× |`)
}
const bad = all.filter(r => r.edit.verdict === 'bad')
const kinds = [...new Set(bad.map(r => r.edit.kind))]
console.log(`\n${all.length} edits: ${bad.length} bad of ${kinds.length} kinds (${kinds.join(', ')}), ${all.length - bad.length} good\n`)
console.log(table.join('\n'))
const byKind = kinds.map(k => {
  const rows = bad.filter(r => r.edit.kind === k)
  const undone = rows.filter(r => r.outcome === 'undone at turn end').length
  return `${k} ${rows.filter(r => goneByTurnEnd(r.outcome)).length}/${rows.length}${undone ? ` (${undone} at the turn's end)` : ''}`
})
console.log(`\nbad edits gone by the end of their turn, by kind: ${byKind.join(', ')}`)
const totals = {
  escaped: bad.filter(r => !goneByTurnEnd(r.outcome)).length,
  falseRollbacks: all.filter(r => r.edit.verdict === 'good' && (goneByTurnEnd(r.outcome) || r.outcome === 'unrestored')).length,
  notVerified: all.filter(r => r.outcome === 'not verified').length,
}
console.log(`total: ${totals.escaped} escaped / ${totals.falseRollbacks} false rollbacks / ${totals.notVerified} not verified (goal 0 / 0 / 0)`)

// The map against the file selection on every bad edit: each problem line the file selection reports, the map reports too.
if (process.env.DSH_BENCH_SELECTIONS !== 'functions') {
  // The tests' problem lines (`file:line FAIL …`): what a test selection can catch or miss.
  // Each pass has its own temporary copy of the workspace: its path is left out of the comparison.
  const problemLines = (row: Row) => new Set(row.content.split('\n').slice(1).filter(l => / FAIL /.test(l)).map(l => l.replace(/\/[^\s'"]*dsh-efficacy-[^/\s'"]+/g, '<workspace>')))
  const compare = [
    '| workspace | bad edits | rolled back (files / map) | failing-test lines (files / map) | lines the map missed | kept by the map, rolled back by the tests of the file selection | judged apart before the tests |',
    '|---|---|---|---|---|---|---|',
  ]
  /** The verdict's first line without the workspace path: which check decided it. */
  const head = (row: Row) => row.content.split('\n')[0]!
  const byTests = (row: Row) => head(row).startsWith('rolled back: test failed') || (row.outcome === 'undone at turn end' && /\nkept for now: \d+ tests? in /.test(row.content))
  let missedTotal = 0
  let apartTotal = 0
  for (const w of selected) {
    console.log(`\n### ${w} (related test files by imports)`)
    const { rows: byFiles } = await runWorkspace(w, 'files', false)
    const byMap = byWorkspace.get(w)!
    let lines = [0, 0]
    let missed = 0
    let kept = 0
    let apart = 0
    let rolled = [0, 0]
    byFiles.forEach((f, i) => {
      const m = byMap[i]!
      if (f.edit.verdict !== 'bad') return
      const fl = problemLines(f)
      const ml = problemLines(m)
      lines = [lines[0]! + fl.size, lines[1]! + ml.size]
      rolled = [rolled[0]! + (goneByTurnEnd(f.outcome) ? 1 : 0), rolled[1]! + (goneByTurnEnd(m.outcome) ? 1 : 0)]
      // Rolled back in both passes, but in one by a check before the tests (a type-check): no selection ran, nothing to compare.
      const judgedApart = goneByTurnEnd(f.outcome) && goneByTurnEnd(m.outcome) && byTests(f) !== byTests(m)
      const gone = judgedApart ? [] : [...fl].filter(l => !ml.has(l))
      if (judgedApart || gone.length || ml.size !== fl.size) {
        // Side by side: what each pass reported on this edit.
        console.log(`  ${judgedApart ? 'judged apart before the tests' : gone.length ? 'the map missed' : 'the selections differ'} on ${f.edit.name}:`)
        for (const [who, row, set] of [['files', f, fl], ['map', m, ml]] as const) {
          console.log(`    ${who}: ${head(row).replace(/\/[^\s'"]*dsh-efficacy-[^/\s'"]+/g, '<workspace>')} (${set.size} failing-test lines)`)
          for (const l of [...set].sort()) console.log(`      ${fl.has(l) && ml.has(l) ? ' ' : who === 'files' ? '-' : '+'} ${l}`)
        }
      }
      if (judgedApart) apart++
      missed += gone.length
      if (byTests(f) && !goneByTurnEnd(m.outcome)) kept++
    })
    missedTotal += missed + kept
    apartTotal += apart
    const bad = byFiles.filter(r => r.edit.verdict === 'bad').length
    compare.push(`| ${w} | ${bad} | ${rolled[0]} / ${rolled[1]} | ${lines[0]} / ${lines[1]} | ${missed} | ${kept} | ${apart} |`)
  }
  console.log(`\nthe map of executed functions against the file selection, every bad edit:\n${compare.join('\n')}`)
  console.log(`map misses: ${missedTotal} (goal 0)`)
  // A check before the tests that judges the same edit differently in two passes is not deterministic: the comparison is void there.
  if (apartTotal) console.log(`judged apart before the tests: ${apartTotal} (goal 0: the same edit, the same earlier verdict in both passes)`)
  if (missedTotal || apartTotal) process.exitCode = 1
}
