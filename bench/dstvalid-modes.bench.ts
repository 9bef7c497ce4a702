/**
 * dsh-dstvalid advanced modes: the latency each mode adds to a guarded
 * one-file edit on the generated project (bench/gen-ts-project.ts), as a
 * ratio to the core check (warm type-check + `vitest related`), in one run.
 * Every edit is judged twice, on the same files: by a core guard and by a
 * guard with every mode on, so the comparison is paired.
 *
 *   tsx bench/dstvalid-modes.bench.ts
 *   DSH_BENCH_MODULES=520 DSH_BENCH_TEST_FILES=120 DSH_BENCH_EDITS=8 tsx bench/dstvalid-modes.bench.ts
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Context } from '@deepseek-ai/cordis'
import {
  CoverageCheck, Guard, StyleCheck, TypecheckCheck, VitestCheck, styleToolsFor, vitestCommand,
  type Change, type GuardIO, type Measured, type VerifyLearning,
} from 'dsh-dstvalid'
import { generateProject } from './gen-ts-project.ts'

const env = (name: string, def: number) => Number(process.env[name] ?? def)
const MODULES = env('DSH_BENCH_MODULES', 520)
const TEST_FILES = env('DSH_BENCH_TEST_FILES', 120)
const EDITS = env('DSH_BENCH_EDITS', 8)

const here = dirname(fileURLToPath(import.meta.url))
// dsh-dstvalid's own node_modules holds typescript, vitest and the modes' tools (eslint, typescript-eslint, prettier, @vitest/coverage-v8).
const nodeModules = join(here, '..', 'packages', 'dsh-dstvalid', 'node_modules')
const root = mkdtempSync(join(tmpdir(), 'dsh-bench-modes-'))
const project = generateProject(root, { modules: MODULES, testFiles: TEST_FILES, seed: 1 }, nodeModules)
writeFileSync(join(root, 'eslint.config.js'), `import tseslint from 'typescript-eslint'

export default [
  { files: ['**/*.ts'], languageOptions: { parser: tseslint.parser }, rules: { 'no-debugger': 'error', 'no-var': 'error', 'prefer-const': 'error', eqeqeq: 'error' } },
]
`)
writeFileSync(join(root, '.prettierrc'), '{ "semi": false, "singleQuote": true, "printWidth": 160 }\n')

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2) : NaN
}
const ms = (x: number) => (x >= 1000 ? `${(x / 1000).toFixed(2)} s` : x >= 1 ? `${x.toFixed(x < 10 ? 1 : 0)} ms` : `${(x * 1000).toFixed(1)} µs`)

// Edits alternate: a body-only change, then one that adds an untested export (coverage drops a little).
const targets = project.modules.filter(m => m.layer === 1 || m.layer === 2)
let editNo = 0
function nextEdit(): { file: string; rel: string; apply: () => void } {
  const m = targets[(editNo * 37) % targets.length]!
  const n = editNo++
  const file = join(root, m.path)
  return {
    file, rel: m.path,
    apply: () => {
      const text = readFileSync(file, 'utf8')
      writeFileSync(file, n % 2 === 0
        ? text.replace('  const unique = [...new Set(tags)].sort()', `  const unique = [...new Set(tags)].sort() // edit ${n}`)
        : `${text}\nexport function extra${n}(x: number): number {\n  return x > ${n} ? x - ${n} : ${n} - x\n}\n`)
    },
  }
}

const require = createRequire(join(root, 'package.json'))
const typescriptPath = require.resolve('typescript')
const vitest = vitestCommand(root)!
const rules = { strictTests: false, isTestFile: (f: string) => f.startsWith('tests/') }
const common = { root, rules, timeoutMs: 600_000, maxOutputBytes: 1 << 22, confirmFlaky: true }
const io: GuardIO = { record: () => {}, notice: () => {} }

const coreType = new TypecheckCheck({ root, configPath: join(root, 'tsconfig.json'), typescriptPath, maxHeapMb: 0 })
const core = new Guard({ ...common, checks: [coreType, new VitestCheck({ root, command: vitest, mode: 'related' })] })

const modesType = new TypecheckCheck({ root, configPath: join(root, 'tsconfig.json'), typescriptPath, maxHeapMb: 0 })
const style = styleToolsFor(root, 'typescript', [])
if (style.tools.map(t => t.name).join() !== 'eslint,prettier') throw new Error(`style tools not found: ${style.notes.join('; ')}`)
const covered = new VitestCheck({ root, command: vitest, mode: 'related', coverage: true })
const coverage = new CoverageCheck(covered, { threshold: 50, maxDrop: 5 })
const modes = new Guard({
  ...common,
  checks: [modesType, new StyleCheck({ root, tools: style.tools, mode: 'warn' }), covered, coverage],
  impact: [modesType],
})

// Learnings: one Cordis event per kept write, with one listener (as dsh-proofchain has).
const ctx = new Context()
let heard = 0
ctx.on('verify/learning', () => { heard++ })
const learning: VerifyLearning = { sessionId: 's', paths: ['src/a.ts'], tool: 'edit_file', checks: ['typecheck', 'style', 'test', 'coverage'] }
function emitCost(): number {
  const n = 10_000
  const t = performance.now()
  for (let i = 0; i < n; i++) ctx.emit('verify/learning', learning)
  return (performance.now() - t) / n
}

let t = performance.now()
await core.prepare(io)
const coreBaseline = performance.now() - t
t = performance.now()
await modes.prepare(io)
const modesBaseline = performance.now() - t

const durations = (j: Measured) => Object.fromEntries(j.checks.map(c => [c.check, c.durationMs])) as Record<string, number>
const rows = { core: [] as number[], impact: [] as number[], style: [] as number[], coverage: [] as number[], all: [] as number[] }
let warnings = 0
let importers = 0
const coverageSeen: number[] = []
for (let i = 0; i < EDITS; i++) {
  const edit = nextEdit()
  const change: Change = { paths: [edit.file], files: [edit.rel] }
  // Impact is computed before the write, on the accepted state.
  t = performance.now()
  const impact = await modes.impact(change, io, 10)
  const impactMs = performance.now() - t
  importers += impact[0]?.total ?? 0
  edit.apply()
  t = performance.now()
  const a = await core.measure(change, io, 'bench edit')
  const coreMs = performance.now() - t
  t = performance.now()
  const b = await modes.measure(change, io, 'bench edit')
  const modesMs = performance.now() - t
  if (a.regression || b.regression) throw new Error(`a good edit was judged a regression: ${JSON.stringify([a.checks, b.checks])}`)
  const unjudged = [...a.checks, ...b.checks].filter(c => c.outcome === 'error')
  if (unjudged.length) throw new Error(`a check could not judge: ${unjudged.map(c => c.error).join('; ')}`)
  core.advance(a)
  modes.advance(b)
  const pct = coverage.accepted(edit.rel)
  if (pct !== undefined) coverageSeen.push(pct)
  warnings += b.checks.reduce((n, c) => n + c.warnings.length, 0)
  const da = durations(a)
  const db = durations(b)
  rows.core.push(coreMs)
  rows.impact.push(impactMs)
  rows.style.push(db.style ?? 0)
  rows.coverage.push((db.test ?? 0) + (db.coverage ?? 0) - (da.test ?? 0))
  rows.all.push(impactMs + modesMs - coreMs)
}
const learningMs = emitCost()
if (heard < 10_000) throw new Error('the learning listener did not hear every event')
const rssMb = Math.round(process.resourceUsage().maxRSS / 1024)
await core.dispose()
await modes.dispose()
rmSync(root, { recursive: true, force: true })

const coreMed = median(rows.core)
const ratio = (x: number) => (x / coreMed).toFixed(3)
console.log(`## dsh-dstvalid advanced modes: added latency per one-file edit (${project.modules.length} modules, ${project.tests} vitest tests; ${EDITS} edits, each judged by both guards)\n`)
console.log('| mode | what runs per edit | median added | vs core check |')
console.log('|---|---|---|---|')
console.log(`| core check (reference) | warm type-check + \`vitest related\` | ${ms(coreMed)} | 1.000 |`)
console.log(`| impact | importers from the warm program's import graph (mean ${Math.round(importers / EDITS)} found) | ${ms(median(rows.impact))} | ${ratio(median(rows.impact))} |`)
console.log(`| style | workspace eslint (typescript-eslint parser) + prettier --list-different on the edited file | ${ms(median(rows.style))} | ${ratio(median(rows.style))} |`)
console.log(`| coverage | v8 coverage of the same targeted vitest run, read per file | ${ms(median(rows.coverage))} | ${ratio(median(rows.coverage))} |`)
console.log(`| learnings | one \`verify/learning\` event (one listener) | ${ms(learningMs)} | ${ratio(learningMs)} |`)
console.log(`| all modes on | sum, measured | ${ms(median(rows.all))} | ${ratio(median(rows.all))} |`)
console.log(`\nOne-time baseline: core ${ms(coreBaseline)}; with every mode ${ms(modesBaseline)} (eslint + prettier on the workspace, full vitest run with coverage). ${warnings} coverage/style warnings over the run; line coverage of the edited files after their edit: ${coverageSeen.length ? `${Math.min(...coverageSeen)}–${Math.max(...coverageSeen)}%` : 'none read'}. Peak RSS of the bench process (two warm type-check workers): ${rssMb} MB.`)
