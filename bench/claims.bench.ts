// claims: checking a checkpoint's claims against a 1,000,000-event session log
// on disk. Ours streams the JSONL through the activity recorder, which keeps
// only the last run per command, and parses only the lines of the event types
// it reads (dsh-common streamJsonlOfTypes); the middle way parses every line
// (streamJsonl); the naive way loads the whole log (readJsonl) and folds the
// same events. Each way runs in a fresh process so its peak RSS is its own;
// CPU time is shown beside wall time because the machine may be shared.
// Goal (issue 8): < 2 s and < 300 MB RSS for 1,000,000 events.
//
// The live rows: the plugin in a real Context (dsh-session, dsh-tools,
// dsh-claims), the same events appended to a session one by one, then the
// `checkpoint` tool called. Ours keeps the activity record as events are
// appended (the checkpoint costs its claims); before, each checkpoint folded
// the whole in-memory log. Timed is the checkpoint call alone; the RSS shown
// is what the checkpoint added (the log itself is the session's, held by
// dsh-session either way).
import { spawnSync } from 'node:child_process'
import { createWriteStream, existsSync, mkdirSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Context } from '@deepseek-ai/cordis'
import { readJsonl, streamJsonl } from 'dsh-common'
import SessionService, { type RawSessionEvent } from 'dsh-session'
import ToolsService from 'dsh-tools'
import * as Claims from 'dsh-claims'
import { ActivityRecorder, checkClaims, checkSessionLog, recordCheckpoint, type ClaimsReport } from 'dsh-claims'

const N = Number(process.env.DSH_BENCH_EVENTS ?? 1_000_000)
const RUNS = Number(process.env.DSH_BENCH_RUNS ?? 3)
const here = dirname(fileURLToPath(import.meta.url))
const FILE = join(here, '.out', `claims-${N}.jsonl`)

const VERIFIED = [
  'login rejects expired tokens — pnpm vitest run tests/auth.test.ts',
  'types check — npx tsc --noEmit',
  'lint is clean — pnpm lint',
  'go side builds — go build ./...',
  'cart totals — `cd web && npm test`',
  'refactored the parser',
]

/** The bash commands of the synthetic session: compound, piped, with cd/env/runners, some failing. */
const COMMANDS = [
  'cd packages/auth && pnpm vitest run tests/auth.test.ts 2>&1 | tail -30',
  'pnpm vitest run tests/auth.test.ts',
  'npx tsc --noEmit -p tsconfig.json',
  'CI=1 pnpm lint',
  'go build ./... && go test ./...',
  'cd web && npm test',
  'git status --short',
  'rg -n "parseDate" src | head -20',
  'pnpm exec eslint src --max-warnings 0',
  'set -e\ncd web\nnpm run build',
]

async function generate(file: string, n: number): Promise<void> {
  mkdirSync(dirname(file), { recursive: true })
  const out = createWriteStream(file)
  let seq = 0
  let buf = ''
  const push = (type: string, data: unknown) => {
    buf += JSON.stringify({ seq, time: 1_700_000_000_000 + seq, type, data }) + '\n'
    seq++
  }
  for (let turn = 0; seq < n; turn++) {
    push('user/message', { text: `continue with task ${turn}` })
    push('turn/start', { turn })
    for (let step = 0; step < 4 && seq < n; step++) {
      push('step/start', { turn, step })
      for (let c = 0; c < 3; c++) push('assistant/chunk', { text: 'Running the checks for the part I just changed, then I will look at the output. ' })
      push('usage', { inputTokens: 4100, outputTokens: 120 })
      const command = COMMANDS[(turn * 4 + step) % COMMANDS.length]!
      const calls = [
        { callId: `b_${turn}_${step}`, name: 'bash', arguments: { command } },
        { callId: `e_${turn}_${step}`, name: 'edit_file', arguments: { path: `src/m${step}.ts`, old_string: 'return a', new_string: 'return b' } },
      ]
      push('assistant/message', { text: 'Running the checks.', toolCalls: calls })
      const exit = (turn + step) % 7 === 0 ? 1 : 0
      push('tool/call', calls[0])
      push('tool/call', calls[1])
      push('verify/run', { check: 'typecheck', argv: ['node_modules/.bin/tsc', '--noEmit'], cwd: '/w', exitCode: 0, durationMs: 840, outcome: 'pass' })
      push('tool/result', { callId: calls[0]!.callId, name: 'bash', content: `RUN v3.2\n ✓ tests/auth.test.ts (12 tests) 41ms\n Test Files 1 passed\n[exit code ${exit}]`, isError: exit !== 0, exitCode: exit })
      push('tool/result', { callId: calls[1]!.callId, name: 'edit_file', content: `edited src/m${step}.ts`, isError: false })
      push('step/end', { turn, step })
      if (buf.length > 1 << 20) {
        if (!out.write(buf)) await new Promise<void>(resolve => out.once('drain', () => resolve()))
        buf = ''
      }
    }
    push('turn/end', { turn, reason: 'completed' })
    // A checkpoint every ~250k events moves the cut-off forward.
    if (turn % 8000 === 7999) push('claims/checkpoint', { summary: 'midway', verified: [], failed: [], next: [], report: {} })
  }
  out.write(buf)
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())))
}

interface Sample { ms: number; cpuMs: number; rssMB: number; marks: number; questioned: boolean }

/** A checkpoint through the plugin after the log's events were appended to a live session. */
async function live(mode: string, file: string): Promise<Sample> {
  const ctx = new Context()
  await ctx.plugin(SessionService)
  await ctx.plugin(ToolsService)
  await ctx.plugin(Claims, Claims.Config({ handoff: false }))
  const session = ctx.sessions.create('bench', { vault: join(here, '.out', 'claims-vault') })
  for await (const [event] of streamJsonl<RawSessionEvent>(file)) session.append(event.type as never, event.data as never)
  const rss0 = process.memoryUsage().rss
  const t0 = performance.now()
  const c0 = process.cpuUsage()
  const checkpoint = { summary: 'bench', verified: VERIFIED, failed: [], next: [] }
  const report = mode === 'live'
    ? (await ctx.tools.execute({ session, callId: 'bench', name: 'checkpoint', arguments: checkpoint }), session.ofType('claims/checkpoint').at(-1)!.data.report)
    : (await recordCheckpoint(session, checkpoint)).report
  const cpu = process.cpuUsage(c0)
  const ms = performance.now() - t0
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000, rssMB: (process.memoryUsage().rss - rss0) / 2 ** 20, marks: report.marks.length, questioned: report.asked }
}

/** One measurement, in this (fresh) process. */
async function child(mode: string, file: string): Promise<Sample> {
  if (mode === 'live' || mode === 'refold') return live(mode, file)
  const t0 = performance.now()
  const c0 = process.cpuUsage()
  const checkpoint = { verified: VERIFIED, failed: [] }
  let report: ClaimsReport
  if (mode === 'select') {
    report = await checkSessionLog(file, checkpoint)
  } else {
    const recorder = new ActivityRecorder()
    if (mode === 'stream') {
      for await (const [event] of streamJsonl<RawSessionEvent>(file)) recorder.add(event)
    } else {
      for (const event of readJsonl<RawSessionEvent>(file).records) recorder.add(event)
    }
    report = checkClaims(checkpoint, recorder.activity, 'bench')
  }
  const cpu = process.cpuUsage(c0)
  return { ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000, rssMB: process.resourceUsage().maxRSS / 1024, marks: report.marks.length, questioned: report.asked }
}

function measure(mode: string): Sample {
  const r = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', mode, FILE], { encoding: 'utf8', maxBuffer: 1 << 20 })
  if (r.status !== 0) throw new Error(`${mode} run failed: ${r.stderr}`)
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as Sample
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

async function main() {
  if (process.argv[2] === '--child') {
    const mode = process.argv[3]!
    if (mode === 'floor') {
      console.log(JSON.stringify({ ms: 0, cpuMs: 0, rssMB: process.resourceUsage().maxRSS / 1024, marks: 0, questioned: false }))
      return
    }
    console.log(JSON.stringify(await child(mode, process.argv[4]!)))
    return
  }
  if (!existsSync(FILE)) {
    const t = performance.now()
    await generate(FILE, N)
    console.log(`generated ${FILE} in ${((performance.now() - t) / 1000).toFixed(1)} s`)
  }
  const mb = statSync(FILE).size / 1e6
  console.log(`session log: ${N.toLocaleString('en')} events, ${mb.toFixed(0)} MB; ${VERIFIED.length} verified claims; median of ${RUNS} runs, each in a fresh process\n`)

  const floor = measure('floor')
  const ways: [string, string][] = [
    ['select', 'ours: stream, parse only activity lines (streamJsonlOfTypes)'],
    ['stream', 'stream, parse every line (streamJsonl)'],
    ['load', 'naive: load the whole log (readJsonl), then fold'],
  ]
  const rows = ways.map(([mode, label]) => {
    const samples = Array.from({ length: RUNS }, () => measure(mode))
    const m = (f: (s: Sample) => number) => median(samples.map(f))
    return { label, ms: m(s => s.ms), cpuMs: m(s => s.cpuMs), rssMB: m(s => s.rssMB), marks: samples[0]!.marks }
  })
  const liveWays: [string, string][] = [
    ['live', 'ours: the plugin\'s checkpoint on a live session, record kept as events are appended'],
    ['refold', 'before: the checkpoint folds the whole in-memory log'],
  ]
  const liveRows = liveWays.map(([mode, label]) => {
    const samples = Array.from({ length: RUNS }, () => measure(mode))
    const m = (f: (s: Sample) => number) => median(samples.map(f))
    return { label, ms: m(s => s.ms), cpuMs: m(s => s.cpuMs), rssMB: m(s => s.rssMB), marks: samples[0]!.marks }
  })
  if (new Set([...rows, ...liveRows].map(r => r.marks)).size !== 1) throw new Error(`the ways disagree: ${[...rows, ...liveRows].map(r => r.marks).join(' vs ')} marks`)
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`
  console.log('| way | wall time | CPU time | events/s (wall) | peak RSS | marks |')
  console.log('|---|---|---|---|---|---|')
  for (const r of rows) console.log(`| ${r.label} | ${s(r.ms)} | ${s(r.cpuMs)} | ${Math.round(N / (r.ms / 1000)).toLocaleString('en')} | ${r.rssMB.toFixed(0)} MB | ${r.marks} |`)
  console.log(`| process floor (tsx, modules loaded, no work) | — | — | — | ${floor.rssMB.toFixed(0)} MB | — |`)
  const [ours, every, naive] = rows as [typeof rows[0], typeof rows[0], typeof rows[0]]
  const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`
  console.log(`\nratios vs ours — naive: wall ${ratio(naive.ms, ours.ms)}, CPU ${ratio(naive.cpuMs, ours.cpuMs)}, peak RSS ${ratio(naive.rssMB, ours.rssMB)}; `
    + `parse-every-line: wall ${ratio(every.ms, ours.ms)}, CPU ${ratio(every.cpuMs, ours.cpuMs)}, peak RSS ${ratio(every.rssMB, ours.rssMB)}`)
  console.log('\n| checkpoint in a live session of the same events | wall time | CPU time | RSS added by the checkpoint | marks |')
  console.log('|---|---|---|---|---|')
  for (const r of liveRows) console.log(`| ${r.label} | ${(r.ms).toFixed(1)} ms | ${(r.cpuMs).toFixed(1)} ms | ${r.rssMB.toFixed(0)} MB | ${r.marks} |`)
  const [kept, refold] = liveRows as [typeof liveRows[0], typeof liveRows[0]]
  console.log(`\nlive checkpoint: ${ratio(refold.ms, kept.ms)} faster than re-folding the log (goal < 2 s and < 300 MB: ${kept.ms < 2000 && kept.rssMB < 300 ? 'met' : 'NOT met'})`)
  const ok = ours.ms < 2000 && ours.rssMB < 300
  console.log(`goal < 2 s and < 300 MB: ${ok ? 'met' : 'NOT met'} (${s(ours.ms)} wall, ${s(ours.cpuMs)} CPU, ${ours.rssMB.toFixed(0)} MB; load average ${(await import('node:os')).loadavg()[0]!.toFixed(1)})`)
}

await main()
