/**
 * What the guard costs an agent session: a scripted session of 20 writes
 * (one file per call, good and bad mixed) driven through the real agent
 * loop and the OpenAI-compatible adapter (dsh-llm-openai) against a local
 * HTTP server that holds each answer back for the model's "thinking" time,
 * unguarded (no suite plugin) and guarded (dsh-snapshot + dsh-dstvalid
 * with its defaults: turn verdicts), in the same run, on a generated library (bench/gen-library.ts) and on a real one
 * (unjs/defu from its mirror, installed once with its own pnpm).
 *
 * Per workspace and thinking time: the session wall (the prompt sent to the
 * turn's end) unguarded and guarded, guarded ÷ unguarded, and whether the
 * script's writes ended as they must before the next call ran: a probe
 * listener innermost in `tools/execute` (after every guard) compares each
 * written file with what the good writes that ran alone left, before each
 * call runs and once after the turn. A bad write whose problems are in the
 * written file itself (a type or syntax error) must be gone before the
 * next call runs; one whose problems are elsewhere (a behaviour its tests
 * catch) is kept for now under turn verdicts and must be gone by the
 * turn's end (strict verdicts: before the next call too). A good write
 * missing is a false rollback. A call the guard answers `not run: …` is
 * sent again by the model, as an agent would (background verdicts answer a
 * call that way once an earlier write was undone after its result). Goal:
 * ≤ 1.05× at 5 s thinking; at 0 s, the guard's own cost per write.
 *
 *   pnpm bench agent [--workspace library|defu]…
 *   DSH_BENCH_AGENT_THINK_MS=5000,0   thinking times (ms), each a pair of sessions
 *   DSH_BENCH_AGENT_VERDICTS=strict    dsh-dstvalid's verdicts (default: its default, turn)
 *   DSH_BENCH_AGENT_FOREGROUND=1       also a guarded session with background: false (each call waits for its whole verdict)
 *   DSH_BENCH_AGENT_DEFU=<bare repo>   the defu mirror (default /work/.mirror/unjs+defu/repo; absent: skipped)
 *   DSH_BENCH_VERBOSE=1                each call's first result line, and dsh-dstvalid's notices after the last call (the stop)
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import type { Context } from '@deepseek-ai/cordis'
import DstValidService from 'dsh-dstvalid'
import * as OpenAI from 'dsh-llm-openai'
import { scriptReplies, startProtocolServer, type RecordedRequest, type StreamReply } from 'dsh-llm-openai/test-server'
import type { ScriptStep } from 'dsh-llm'
import * as Snapshot from 'dsh-snapshot'
import { harness, type PluginSpec } from 'dsh-testkit'
import { generateLibrary } from './gen-library.ts'

const here = dirname(fileURLToPath(import.meta.url))
const nodeModules = join(here, '..', 'node_modules')
const THINKS = (process.env.DSH_BENCH_AGENT_THINK_MS ?? '5000,0').split(',').map(Number)
const DEFU_MIRROR = process.env.DSH_BENCH_AGENT_DEFU ?? '/work/.mirror/unjs+defu/repo'
/** unjs/defu v6.1.7. */
const DEFU_REV = '80c0146'
const DEFU_PNPM = 'pnpm@10.33.0'

/** One write of the script: a whole file's new content, and whether the guard must undo it. */
interface Write {
  path: string
  content: string
  bad: boolean
  /** Bad, with its problems outside the written file (tests elsewhere): kept for now under turn verdicts. */
  ripple?: boolean
  what: string
}

interface Workspace {
  name: string
  /** A fresh copy to run one session on; returns its root. */
  fresh(): string
  writes: Write[]
}

/** Turn edits of files (applied to what the good writes before them left) into whole-file writes. */
function scriptOf(root: string, plan: { path: string; edit: (text: string) => string; bad: boolean; what: string }[]): Write[] {
  const good = new Map<string, string>()
  return plan.map(({ path, edit, bad, what }) => {
    const ripple = what === CAUGHT
    const before = good.get(path) ?? (existsSync(join(root, path)) ? readFileSync(join(root, path), 'utf8') : '')
    const content = edit(before)
    if (content === before) throw new Error(`agent bench: the ${what} write to ${path} changes nothing`)
    if (!bad) good.set(path, content)
    return { path, content, bad, what, ...(ripple ? { ripple } : {}) }
  })
}

const replaceOnce = (from: string, to: string) => (text: string) => {
  if (text.split(from).length !== 2) throw new Error(`agent bench: ${JSON.stringify(from)} is not in the file exactly once`)
  return text.replace(from, to)
}
const prepend = (line: string) => (text: string) => `${line}\n${text}`
const append = (line: string) => (text: string) => `${text}${line}\n`
const fileOf = (content: string) => () => content

/** A bad write whose tests (in other files) catch it. */
const CAUGHT = 'behaviour its tests catch'

/** The generated library's mix: twelve good, eight bad. */
const ORDER = 'GGBGBGGBGBGGBGBGGBBG'

function libraryWorkspace(): Workspace {
  const base = mkdtempSync(join(tmpdir(), 'dsh-bench-agent-lib-'))
  const lib = generateLibrary(join(base, 'template'), { modules: 80, testFiles: 40, seed: 7 })
  const tested = new Set(readdirSync(join(lib.root, 'test'), { recursive: true }).map(String).filter(f => f.endsWith('.test.ts')).map(f => f.split('/').pop()!.replace(/-\d+\.test\.ts$/, '')))
  const middle = lib.modules.filter(m => m.layer === 1 || m.layer === 2)
  const testedMods = middle.filter(m => tested.has(m.path.split('/').pop()!.replace(/\.ts$/, '')))
  const id = (m: { index: number }) => m.index
  let g = 0
  let b = 0
  const goods = [
    ...middle.slice(0, 6).map(m => ({ path: m.path, edit: replaceOnce('  return total\n}', '  const result = total\n  return result\n}'), what: 'body-only' })),
    ...[1, 2, 3].map(n => ({ path: `src/extra/extra${n}.ts`, edit: fileOf(`export function extra${n}(x: number): number {\n  return x + ${n}\n}\n`), what: 'new module' })),
    ...middle.slice(6, 9).map(m => ({ path: m.path, edit: prepend('// Reviewed.'), what: 'comment' })),
  ]
  const bads = [
    ...middle.slice(9, 12).map(m => ({ path: m.path, edit: (t: string) => replaceOnce(`export const LABEL_${id(m)} = `, `export const LABEL_${id(m)}: number = `)(t), what: 'own type error' })),
    ...testedMods.slice(0, 3).map(m => ({ path: m.path, edit: replaceOnce('ids.sort((a, b) => a - b)', 'ids.sort((a, b) => b - a)'), what: CAUGHT })),
    ...middle.slice(12, 14).map(m => ({ path: m.path, edit: append('export function broken(: number {'), what: 'syntax error' })),
  ]
  if (testedMods.length < 3) throw new Error('agent bench: the generated library has fewer than 3 tested modules in its middle layers')
  const plan = [...ORDER].map(c => (c === 'G' ? { ...goods[g++]!, bad: false } : { ...bads[b++]!, bad: true }))
  let n = 0
  return {
    name: `generated library (${lib.modules.length} modules, ${lib.testFiles} test files, ${lib.tests} tests)`,
    writes: scriptOf(lib.root, plan),
    fresh: () => {
      const root = join(base, `s${++n}`)
      execFileSync('cp', ['-a', lib.root, root])
      symlinkSync(nodeModules, join(root, 'node_modules'))
      return root
    },
  }
}

function defuWorkspace(): Workspace | string {
  if (!existsSync(DEFU_MIRROR)) return `defu: skipped, no mirror at ${DEFU_MIRROR} (set DSH_BENCH_AGENT_DEFU)`
  const cache = join(homedir(), '.cache', 'dsh-bench-agent', `defu-${DEFU_REV}`)
  if (!existsSync(join(cache, 'node_modules'))) {
    console.error(`agent bench: installing defu ${DEFU_REV} with ${DEFU_PNPM} into ${cache} (once)…`)
    rmSync(cache, { recursive: true, force: true })
    mkdirSync(dirname(cache), { recursive: true })
    execFileSync('git', ['clone', '-q', DEFU_MIRROR, cache])
    execFileSync('git', ['-C', cache, 'checkout', '-q', DEFU_REV])
    execFileSync('npx', ['--yes', DEFU_PNPM, 'install', '--frozen-lockfile'], { cwd: cache, stdio: ['ignore', 'ignore', 'inherit'] })
  }
  const base = mkdtempSync(join(tmpdir(), 'dsh-bench-agent-defu-'))
  const tick = '`'
  const plan = [
    { path: 'src/_utils.ts', edit: prepend('// Plain-object test used by every merge.'), bad: false, what: 'comment' },
    { path: 'src/defu.ts', edit: replaceOnce('const object = { ...defaults };', 'const object = Object.assign({}, defaults);'), bad: false, what: 'body-only' },
    { path: 'src/_utils.ts', edit: replaceOnce('if (Symbol.iterator in value) {', 'if (Symbol.iterator in value && false) {'), bad: true, what: CAUGHT },
    { path: 'src/merge.ts', edit: fileOf('import { defu } from "./defu";\n\nexport function mergeAll<T extends object>(items: T[]): T {\n  return items.reduce((a, b) => defu(a, b) as unknown as T, {} as T);\n}\n'), bad: false, what: 'new module' },
    { path: 'src/defu.ts', edit: replaceOnce('namespace = ".",', 'namespace: number = ".",'), bad: true, what: 'own type error' },
    { path: 'test/merge.test.ts', edit: fileOf('import { expect, it } from "vitest";\nimport { mergeAll } from "../src/merge";\n\nit("merges left to right", () => {\n  expect(mergeAll([{ a: 1 }, { a: 2, b: 3 }])).toEqual({ a: 1, b: 3 });\n});\n'), bad: false, what: 'new test' },
    { path: 'src/types.ts', edit: prepend('// Types of defu and its variants.'), bad: false, what: 'comment' },
    { path: 'src/defu.ts', edit: replaceOnce('object[key] = [...value, ...object[key]];', 'object[key] = value;'), bad: true, what: CAUGHT },
    { path: 'src/_utils.ts', edit: replaceOnce('const prototype = Object.getPrototypeOf(value);', 'const prototype: unknown = Object.getPrototypeOf(value);'), bad: false, what: 'body-only' },
    { path: 'src/types.ts', edit: append('export const broken: number = "x";'), bad: true, what: 'own type error' },
    { path: 'src/version.ts', edit: fileOf('export const version = "6.1.7";\n'), bad: false, what: 'new module' },
    { path: 'test/defu.test.ts', edit: prepend('// defu: merges defaults into an object.'), bad: false, what: 'comment' },
    { path: 'src/merge.ts', edit: append('export function broken( {'), bad: true, what: 'syntax error' },
    { path: 'src/defu.ts', edit: prepend('// Merge with defaults, left to right.'), bad: false, what: 'comment' },
    { path: 'src/_utils.ts', edit: replaceOnce('return true;\n}', 'return 1;\n}'), bad: true, what: 'own type error' },
    { path: 'src/merge.ts', edit: append(`export const describe = (n: number): string => ${tick}\${n} items${tick};`), bad: false, what: 'new export' },
    { path: 'src/version.ts', edit: append('export const major = 6;'), bad: false, what: 'new export' },
    { path: 'src/defu.ts', edit: append('export const { bad } = ;'), bad: true, what: 'syntax error' },
    { path: 'src/types.ts', edit: append('export type Pair<A, B> = [A, B];'), bad: false, what: 'new type' },
    { path: 'test/merge.test.ts', edit: append('it("merges none", () => {\n  expect(mergeAll([])).toEqual({});\n});'), bad: false, what: 'new test' },
  ]
  let n = 0
  return {
    name: `unjs/defu ${DEFU_REV} (vitest ${vitestVersion(cache)}, pnpm)`,
    writes: scriptOf(cache, plan),
    fresh: () => {
      const root = join(base, `s${++n}`)
      execFileSync('git', ['clone', '-q', cache, root])
      symlinkSync(join(cache, 'node_modules'), join(root, 'node_modules'))
      return root
    },
  }
}

function vitestVersion(root: string): string {
  try {
    return (JSON.parse(readFileSync(join(root, 'node_modules', 'vitest', 'package.json'), 'utf8')) as { version: string }).version
  } catch {
    return '?'
  }
}

interface SessionResult {
  wallMs: number
  /** Bad writes on disk when they must be gone: at a later call (at the turn's end for a kept-for-now one under turn verdicts). */
  escaped: Set<string>
  /** Good writes that ran and were missing at a later call or at the end. */
  undone: Set<string>
  /** Calls answered `not run` (sent again). */
  refused: number
  /** Per call: the first line of its result. */
  results: string[]
  /** Summed over the calls: from each call to its result (what the agent waited for in its tools). */
  inCallsMs: number
  /** From the last call's result to the turn's end (the stop, its judgement and any refusal). */
  tailMs: number
  /** dsh-dstvalid's notices, with when they came (ms since the prompt). */
  notices: { at: number; text: string }[]
  /** performance.now() when the last call's tool returned (its verdict may go on in the background). */
  lastResultAt?: number
}

/**
 * The innermost `tools/execute` listener: before each call runs (every
 * guard has had its say), the files the writes that ran so far touched,
 * against what their good writes left.
 */
function probe(writes: readonly Write[], root: string, out: SessionResult, strict: boolean) {
  const ran: number[] = []
  const check = (atEnd: boolean) => {
    const paths = new Map<string, { good?: number; bad?: number }>()
    // Per path: its last good write, and the last bad one since.
    for (const i of ran) {
      const w = writes[i]!
      paths.set(w.path, w.bad ? { ...paths.get(w.path), bad: i } : { good: i })
    }
    for (const [path, { good, bad }] of paths) {
      const now = existsSync(join(root, path)) ? readFileSync(join(root, path), 'utf8') : undefined
      // The last bad write since the last good one: kept for now is allowed only for a ripple under turn verdicts, until the turn's end.
      const b = bad === undefined ? undefined : writes[bad]!
      const heldForNow = !!b?.ripple && !strict && !atEnd
      if (b && now === b.content) {
        if (!heldForNow) out.escaped.add(`#${bad! + 1} ${b.what} ${path}`)
        continue
      }
      if (good !== undefined && now !== writes[good]!.content) out.undone.add(`#${good + 1} ${writes[good]!.what} ${path}`)
    }
  }
  return {
    plugin: {
      name: 'bench-agent-probe',
      apply: (ctx: Context) => {
        ctx.on('dstvalid/notice', notice => { out.notices.push({ at: performance.now(), text: notice.text }) })
        ctx.on('tools/execute', (exec, next) => {
          check(false)
          const args = exec.arguments as { path?: string; content?: string }
          const i = writes.findIndex((w, j) => j > (ran.at(-1) ?? -1) && w.path === args.path && w.content === args.content)
          if (i >= 0) ran.push(i)
          return next().finally(() => { out.lastResultAt = performance.now() })
        })
      },
    },
    atEnd: () => check(true),
  }
}

/** The model's answers: the script, one step per request, each held back `thinkMs`; a call answered `not run` is sent again. */
function model(steps: readonly ScriptStep[], thinkMs: number, out: SessionResult) {
  const script = scriptReplies(steps)
  let next = 0
  return (request: RecordedRequest): StreamReply => {
    const last = request.body?.messages?.at(-1)
    const refused = last?.role === 'tool' && typeof last.content === 'string' && last.content.startsWith('not run:')
    if (refused) out.refused++
    const step = refused && next > 0 ? next - 1 : next++
    return { ...(script(request, step) as StreamReply), gate: { before: 0, until: delay(thinkMs) } }
  }
}

async function session(ws: Workspace, thinkMs: number, guard: Record<string, unknown> | undefined): Promise<SessionResult> {
  const root = ws.fresh()
  const steps: ScriptStep[] = [...ws.writes.map(w => ({ toolCalls: [{ name: 'write_file', arguments: { path: w.path, content: w.content } }] })), { text: 'Done.' }]
  const out: SessionResult = { wallMs: 0, escaped: new Set(), undone: new Set(), refused: 0, results: [], inCallsMs: 0, tailMs: 0, notices: [] }
  const server = await startProtocolServer(model(steps, thinkMs, out))
  const p = probe(ws.writes, root, out, guard?.verdicts === 'strict')
  const plugins: PluginSpec[] = guard ? [[Snapshot, {}], [DstValidService, guard], p.plugin] : [p.plugin]
  const h = await harness({
    workspace: root,
    model: [OpenAI, { baseUrl: server.baseUrl, model: 'bench', maxRetries: 0, timeoutMs: 600_000 }],
    agent: { maxSteps: 2 * ws.writes.length + 5 },
    plugins,
  })
  try {
    const started = performance.now()
    await h.agent.send('Make the twenty changes.')
    await h.agent.idle()
    out.wallMs = performance.now() - started
    p.atEnd()
    const results = h.session.ofType('tool/result')
    out.results = results.map(e => String(e.data.content).split('\n')[0]!)
    const called = new Map(h.session.ofType('tool/call').map(e => [e.data.callId, e.time]))
    out.inCallsMs = results.reduce((sum, e) => sum + e.time - (called.get(e.data.callId) ?? e.time), 0)
    out.tailMs = (h.session.ofType('turn/end').at(-1)?.time ?? 0) - (results.at(-1)?.time ?? 0)
    if (out.results.length !== ws.writes.length + out.refused) throw new Error(`agent bench: ${out.results.length} calls ran, ${ws.writes.length} writes and ${out.refused} sent again`)
  } finally {
    await h.dispose()
    await server.close()
    rmSync(root, { recursive: true, force: true })
  }
  return guard ? out : { ...out, escaped: new Set(), undone: new Set() }
}

const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')

const wanted = process.argv.slice(2).flatMap((a, i, all) => (all[i - 1] === '--workspace' ? [a] : []))
const verdicts = process.env.DSH_BENCH_AGENT_VERDICTS
const guards: { label: string; config: Record<string, unknown> }[] = [
  { label: 'guarded', config: verdicts ? { verdicts } : {} },
  ...(process.env.DSH_BENCH_AGENT_FOREGROUND ? [{ label: 'guarded, background: false', config: { ...(verdicts ? { verdicts } : {}), background: false } }] : []),
]
const rows: string[] = []
const notes: string[] = []
let failed = false
for (const make of [{ key: 'library', make: libraryWorkspace }, { key: 'defu', make: defuWorkspace }]) {
  if (wanted.length && !wanted.includes(make.key)) continue
  const ws = make.make()
  if (typeof ws === 'string') {
    notes.push(ws)
    continue
  }
  const bad = ws.writes.filter(w => w.bad).length
  for (const think of THINKS) {
    console.error(`agent bench: ${ws.name}, ${think / 1000} s thinking: unguarded…`)
    const plain = await session(ws, think, undefined)
    for (const g of guards) {
      console.error(`agent bench: … ${g.label} (load ${load()})…`)
      const r = await session(ws, think, g.config)
      const perWrite = (r.wallMs - plain.wallMs) / ws.writes.length
      rows.push(`| ${ws.name} | ${think / 1000} s | ${g.label} | ${s(plain.wallMs)} | ${s(r.wallMs)} | **${(r.wallMs / plain.wallMs).toFixed(2)}×** | ${s(perWrite)} | ${s(r.inCallsMs)} / ${s(r.tailMs)} | ${bad - r.escaped.size} of ${bad} | ${r.undone.size} | ${r.refused} | ${load()} |`)
      for (const e of r.escaped) notes.push(`${ws.name}, ${think / 1000} s, ${g.label}: a bad write still on disk when it must be gone: ${e}`)
      for (const u of r.undone) notes.push(`${ws.name}, ${think / 1000} s, ${g.label}: a good write undone: ${u}`)
      failed ||= r.escaped.size > 0 || r.undone.size > 0
      if (process.env.DSH_BENCH_VERBOSE) r.results.forEach((line, i) => notes.push(`${g.label} call ${i + 1}: ${line}`))
      if (process.env.DSH_BENCH_VERBOSE) {
        // What the guard did after the last call returned (the stop): each notice, seconds after that result.
        for (const n of r.notices.filter(n => n.at >= (r.lastResultAt ?? Infinity))) notes.push(`${g.label} after the last call +${s(n.at - r.lastResultAt!)}: ${n.text}`)
      }
    }
  }
}
console.log(`## An agent session of 20 writes (one file per call), unguarded vs guarded (verdicts: ${verdicts ?? 'the default'})\n`)
console.log('| workspace | model thinks | guard | unguarded | guarded | guarded ÷ unguarded | guard per write | in calls / after the last call | bad writes gone in time | good writes undone | calls sent again | load |')
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|')
console.log(rows.join('\n'))
if (notes.length) console.log(`\n${notes.map(n => `- ${n}`).join('\n')}`)
process.exit(failed || !rows.length ? 1 : 0)
