/**
 * dsh hooks with the real Claude Code CLI, offline in a loopback-only
 * namespace, on the generated library (bench/gen-library.ts), every row in
 * one run:
 *
 * - the hook client's round trip (`sh` + `curl` over the socket) on a call
 *   the host answers at once, against a `node` start-up per call;
 * - time to warm: a fresh host's first session measures what a first write
 *   needs (type-check baseline, the whole suite: accepted results and the
 *   per-test map), against the naive check (`tsc -b` + `vitest run`); then a
 *   body-only edit made once warm, judged (client Pre + Post), against the
 *   same naive check; the idle host's RSS (with its workers);
 * - per call, inside Claude Code: N no-op `Bash` calls (`true`), N comment
 *   `Edit`s and N body `Edit`s of one module, with and without the hooks
 *   (the host up and warm), each call timed from the model's side: the
 *   time between the scripted model's consecutive requests.
 *
 *   tsx bench/hooks.bench.ts
 *   DSH_BENCH_HOOKS=client tsx bench/hooks.bench.ts     # the client's round trip only
 *   DSH_BENCH_HOOKS=memory tsx bench/hooks.bench.ts     # idle host RSS, the packed guard on plain node and the sources through tsx, against `tsc -b`'s peak
 *   DSH_BENCH_CALLS=20 DSH_BENCH_MODULES=120 DSH_BENCH_TEST_FILES=40 tsx bench/hooks.bench.ts
 *   DSH_BENCH_HOOKS_WORKSPACE=/tmp/hono DSH_BENCH_HOOKS_MODULE=src/utils/url.ts tsx bench/hooks.bench.ts
 *     # time to warm and a body-only edit once warm on a real project (installed, its own node_modules), against its naive check
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runCommand } from 'dsh-common'
import { ADAPTERS, HOOK_CLIENT, hostStatus, installHooks, settleHostVerdicts, startHost, type HostStatus } from 'dsh-host-hooks'
import { anthropicModel, isClaudeTurnRequest, runClaude, startModelServer, type AgentStep } from 'dsh-testkit'
import { ensureAgentCli } from '../scripts/agent-clis.ts'
import { generateLibrary } from './gen-library.ts'

const here = dirname(fileURLToPath(import.meta.url))
const repo = resolve(here, '..')
const env = (name: string, def: number) => Number(process.env[name] ?? def)
const CALLS = env('DSH_BENCH_CALLS', 20)
const claude = ADAPTERS.find(a => a.agent === 'claude-code')!

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2) : NaN
}
const ms = (x: number) => (Number.isNaN(x) ? '—' : Math.abs(x) >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(Math.abs(x) < 10 ? 1 : 0)} ms`)
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ')[0]!
const sleep = (t: number) => new Promise(r => setTimeout(r, t))

interface Project {
  name: string
  root: string
  /** The module the calls edit, workspace-relative. */
  file: string
}

/** A copy of the project (node_modules symlinked to `modules`: the repo's, or a real project's own), in its own temp dir. */
function copyProject(p: Project, tag: string, modules = join(repo, 'node_modules')): Project {
  const root = join(mkdtempSync(join(tmpdir(), `dsh-bench-hooks-${tag}-`)), 'ws')
  cpSync(p.root, root, { recursive: true, filter: src => !src.includes('/.dsh') && !src.endsWith('/node_modules') && !src.endsWith('/.git') })
  symlinkSync(modules, join(root, 'node_modules'), 'dir')
  return { ...p, root }
}

/** A home for Claude Code that trusts the workspace (its `.claude.json` also takes our MCP entry, not the user's). */
function claudeHome(ws: string): string {
  const home = mkdtempSync(join(tmpdir(), 'dsh-bench-claude-home-'))
  writeFileSync(join(home, '.claude.json'), JSON.stringify({ projects: { [ws]: { hasTrustDialogAccepted: true } } }))
  return home
}

/** One hook through the real client, as Claude Code runs it; its wall clock and what it printed. */
function hook(ws: string, home: string, event: string, payload: Record<string, unknown>, client = HOOK_CLIENT): Promise<{ ms: number; out: string }> {
  const entry = claude.hooks.find(h => h.event === event)!
  return new Promise((done, fail) => {
    const started = performance.now()
    const child = spawn('sh', [client, ws, 'claude-code', event, String(entry.timeoutSeconds - 2), String(entry.bootWaitSeconds ?? 0)], { stdio: ['pipe', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (c: Buffer) => { out += c.toString('utf8') })
    child.on('error', fail)
    child.on('close', () => done({ ms: performance.now() - started, out }))
    child.stdin.end(JSON.stringify({ hook_event_name: event, cwd: ws, session_id: 'bench-warm', transcript_path: join(home, 'transcript.jsonl'), ...payload }))
  })
}

async function waitFor(vault: string, done: (s: HostStatus) => boolean, limitMs: number): Promise<HostStatus> {
  const started = performance.now()
  for (;;) {
    const s = await hostStatus(vault, 5000)
    if (done(s) || performance.now() - started > limitMs) return s
    await sleep(250)
  }
}

/** Resident memory of a process and everything under it (the host, its vitest runner and workers), MB. */
function treeRssMb(pid: number): number {
  const children = new Map<number, number[]>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      children.set(ppid, [...children.get(ppid) ?? [], Number(entry)])
    } catch {
      // ENOENT: the process ended while /proc was read.
    }
  }
  const rss = (p: number) => {
    try {
      return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0)
    } catch {
      // ENOENT: gone.
      return 0
    }
  }
  const walk = (p: number): number => rss(p) + (children.get(p) ?? []).reduce((sum, c) => sum + walk(c), 0)
  return walk(pid) / 1024
}

/** The packed guard installed from its tarball into an empty npm prefix, as `npm i -g ./dsh-guard-<version>.tgz` does; its hook client starts `dsh-guard serve` on plain node. */
function installGuard(): { prefix: string; client: string } {
  const out = execFileSync(process.execPath, ['--import', 'tsx', join(repo, 'packages/dsh-guard/src/build.ts'), '--pack'], { cwd: repo, encoding: 'utf8' })
  const prefix = mkdtempSync(join(tmpdir(), 'dsh-bench-guard-'))
  execFileSync('npm', ['install', '--global', '--prefix', prefix, out.trim().split('\n').at(-1)!, '--no-audit', '--no-fund', '--loglevel=error'], { timeout: 300_000 })
  return { prefix, client: join(prefix, 'lib/node_modules/dsh-guard/assets/packages/dsh-host-hooks/bin/dsh-hook') }
}

/** Peak RSS of the project's own `tsc -b` on a fresh copy (no build info), MB. */
function tscPeakMb(p: Project): number {
  const ws = copyProject(p, 'tsc')
  const r = spawnSync('/usr/bin/time', ['-v', join(ws.root, 'node_modules', '.bin', 'tsc'), '-b'], { cwd: ws.root, encoding: 'utf8' })
  rmSync(dirname(ws.root), { recursive: true, force: true })
  const kb = /Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr)?.[1]
  if (r.status !== 0 || !kb) throw new Error(`tsc -b: exit ${r.status}: ${r.stderr.slice(-500)}`)
  return Number(kb) / 1024
}

/** A process's resident memory as anonymous (heaps, malloc) and file-backed (node's binary, mapped files), MB. */
function rssParts(pid: number): string {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024
  return `${kb('RssAnon').toFixed(0)} / ${kb('RssFile').toFixed(0)} MB`
}

/** The host's V8 heaps as its status reports them: each thread's used and committed size. */
function heapParts(s: HostStatus): string {
  if (!s.heaps?.length) return '—'
  return s.heaps.map(h => `${h.thread} ${(h.usedBytes / 1048576).toFixed(0)} / ${(h.totalBytes / 1048576).toFixed(0)} MB`).join('; ')
}

/** The naive check of the whole project: its own `tsc -b` (build info deleted first: a fresh copy has none), then `vitest run`. */
async function naiveCheck(p: Project, modules?: string): Promise<{ tscMs: number; vitestMs: number }> {
  const ws = copyProject(p, 'naive', modules)
  const bin = (name: string) => join(ws.root, 'node_modules', '.bin', name)
  let t = performance.now()
  await runCommand([bin('tsc'), '-b'], { cwd: ws.root, timeoutMs: 3_600_000 })
  const tscMs = performance.now() - t
  t = performance.now()
  await runCommand([bin('vitest'), 'run'], { cwd: ws.root, timeoutMs: 3_600_000 })
  const vitestMs = performance.now() - t
  rmSync(dirname(ws.root), { recursive: true, force: true })
  return { tscMs, vitestMs }
}

/** DSH_BENCH_HOOKS_LOG=FILE: the host's log (its notices, timestamped: where the warm-up's time went) is copied there. */
function keepLog(root: string): void {
  const to = process.env.DSH_BENCH_HOOKS_LOG
  if (to) cpSync(join(root, '.dsh', 'hooks', 'host.log'), to)
}

interface Edits {
  /** The comment a comment Edit rewrites, and the statement a body Edit rewrites, at revision i. */
  comment(i: number): string
  body(i: number): string
}

/** Markers for the calls' edits: a comment line at the module's top, a no-op statement in its first function's body. */
function prepareEdits(abs: string): Edits {
  const text = readFileSync(abs, 'utf8')
  const edits: Edits = { comment: i => `// revision ${i}`, body: i => `total += 0 * ${i}` }
  const withBody = text.replace(/(\n {2}return total\n)/, `\n  ${edits.body(0)}$1`)
  if (withBody === text) throw new Error(`${abs}: no \`return total\` to put the body edit's statement before`)
  writeFileSync(abs, `${edits.comment(0)}\n${withBody}`)
  return edits
}

/** Markers in a real module: a no-op statement before its first indented `return` (a body-only edit rewrites it). */
function prepareRealEdits(abs: string): Edits {
  const text = readFileSync(abs, 'utf8')
  const edits: Edits = { comment: i => `// revision ${i}`, body: i => `void 'dsh-bench-${i}'` }
  const withBody = text.replace(/\n(\s+)return\b/, (m, indent: string) => `\n${indent}${edits.body(0)}${m}`)
  if (withBody === text) throw new Error(`${abs}: no indented \`return\` to put the body edit's statement before`)
  writeFileSync(abs, withBody)
  return edits
}

/** The fresh host's first session: time to warm, a body edit judged once warm, the idle RSS. The host stays up. */
async function warmRow(ws: Project, edits: Edits, home: string, client = HOOK_CLIENT) {
  const vault = join(ws.root, '.dsh')
  installHooks(claude, ws.root, { home })
  const started = performance.now()
  // Claude Code's SessionStart starts the host (and does not wait for it); its first prompt waits and brings the session.
  await hook(ws.root, home, 'SessionStart', { source: 'startup' }, client)
  await waitFor(vault, s => s.state === 'up', 120_000)
  await hook(ws.root, home, 'UserPromptSubmit', { prompt: 'Warm up.' }, client)
  const warm = await waitFor(vault, s => !!s.warm && s.warm.state !== 'warming', 3_600_000)
  const warmMs = performance.now() - started
  if (warm.warm?.state !== 'warm') throw new Error(`the host did not get warm: ${JSON.stringify(warm.warm)}`)
  const abs = join(ws.root, ws.file)
  const input = { file_path: abs, old_string: edits.body(0), new_string: edits.body(1) }
  const pre = await hook(ws.root, home, 'PreToolUse', { tool_name: 'Edit', tool_use_id: 'toolu_bench_warm', tool_input: input }, client)
  writeFileSync(abs, readFileSync(abs, 'utf8').replace(edits.body(0), edits.body(1)))
  const post = await hook(ws.root, home, 'PostToolUse', { tool_name: 'Edit', tool_use_id: 'toolu_bench_warm', tool_input: input, tool_response: { filePath: abs } }, client)
  // Its tests may still run in the background (the model has its answer): the whole verdict is in once they are final.
  const settling = performance.now()
  await settleHostVerdicts(vault)
  const verdictMs = pre.ms + post.ms + (performance.now() - settling)
  if (!readFileSync(abs, 'utf8').includes(edits.body(1))) throw new Error(`the good body edit was not kept: ${post.out}`)
  // Back to revision 0 for the sessions' calls (judged too: a body edit).
  const back = { file_path: abs, old_string: edits.body(1), new_string: edits.body(0) }
  await hook(ws.root, home, 'PreToolUse', { tool_name: 'Edit', tool_use_id: 'toolu_bench_back', tool_input: back }, client)
  writeFileSync(abs, readFileSync(abs, 'utf8').replace(edits.body(1), edits.body(0)))
  await hook(ws.root, home, 'PostToolUse', { tool_name: 'Edit', tool_use_id: 'toolu_bench_back', tool_input: back, tool_response: { filePath: abs } }, client)
  await hook(ws.root, home, 'Stop', { stop_hook_active: false }, client)
  await sleep(10_000)
  const idle = await hostStatus(vault)
  return { warmMs, hostWarmMs: warm.warm.ms, bodyMs: pre.ms + post.ms, verdictMs, idleHostMb: (idle.rssBytes ?? 0) / 1048576, idleTreeMb: idle.pid ? treeRssMb(idle.pid) : NaN, idle }
}

/** The warm row against the naive check of the same project, as a Markdown table. */
function printWarmRows(w: Awaited<ReturnType<typeof warmRow>>, naive: { tscMs: number; vitestMs: number }): void {
  const naiveMs = naive.tscMs + naive.vitestMs
  console.log('| | guard | naive check (`tsc -b` + `vitest run`, same run) | ratio |')
  console.log('|---|---|---|---|')
  console.log(`| time to warm (first hook to "warm") | ${ms(w.warmMs)} (the host's own count ${ms(w.hostWarmMs)}) | ${ms(naiveMs)} (${ms(naive.tscMs)} + ${ms(naive.vitestMs)}) | ${(w.warmMs / naiveMs).toFixed(2)}× |`)
  console.log(`| body-only edit once warm: answered (Pre + Post hooks) / whole verdict (its tests final) | ${ms(w.bodyMs)} / ${ms(w.verdictMs)} | ${ms(naiveMs)} | ${(w.verdictMs / naiveMs).toFixed(3)}× |`)
  console.log(`| idle host RSS after warm: the host / with its workers and test runner | ${w.idleHostMb.toFixed(0)} MB / ${w.idleTreeMb.toFixed(0)} MB | | |\n`)
}

type Kind = 'bash' | 'comment' | 'body'
const KINDS: { kind: Kind; label: string }[] = [
  { kind: 'bash', label: 'no-op `Bash` (`true`)' },
  { kind: 'comment', label: 'comment `Edit`' },
  { kind: 'body', label: 'body `Edit` (a statement in a function)' },
]

/** One Claude Code session of a Read and CALLS calls of one kind: each call's time as the model sees it (its request to the next). */
async function claudeCalls(bin: string, ws: Project, edits: Edits, kind: Kind, home: string): Promise<number[]> {
  const abs = join(ws.root, ws.file)
  const call = (i: number): AgentStep['toolCalls'] => kind === 'bash'
    ? [{ name: 'Bash', arguments: { command: 'true', description: 'Nothing' } }]
    : [{ name: 'Edit', arguments: { file_path: abs, old_string: edits[kind](i), new_string: edits[kind](i + 1) } }]
  const steps: AgentStep[] = [
    { text: 'Reading.', toolCalls: [{ name: 'Read', arguments: { file_path: abs } }] },
    ...Array.from({ length: CALLS }, (_, i) => ({ text: `Call ${i + 1}.`, toolCalls: call(i) })),
    { text: 'Done.' },
  ]
  const server = await startModelServer(anthropicModel(steps))
  const run = await runClaude({ bin, workspace: ws.root, prompt: 'Make the calls.', server, home, timeoutMs: 1_800_000 })
  await server.close()
  if (run.exitCode !== 0) throw new Error(`claude exited ${run.exitCode}: ${run.stderr.slice(0, 500)}`)
  if (kind !== 'bash') {
    const marker = edits[kind]
    if (!readFileSync(abs, 'utf8').includes(marker(CALLS))) throw new Error(`${kind}: an edit was not made or not kept (a good edit must never be rolled back)`)
    // Put the module back at revision 0 for the next session (no hook sees this: the bench's own write).
    writeFileSync(abs, readFileSync(abs, 'utf8').replace(marker(CALLS), marker(0)))
  }
  const times = server.requests.filter(isClaudeTurnRequest).map(r => r.time)
  // Request k + 1 follows call k (request 0 is the prompt, answered with the Read).
  return times.slice(2, CALLS + 2).map((t, k) => t - times[k + 1]!)
}

/** The hook client's own cost: a call the host answers at once (a tool it does not guard), against `node -e ''`. */
async function clientCost(ws: Project): Promise<{ client: number; naive: number }> {
  const payload = JSON.stringify({ session_id: 'bench', tool_name: 'Read', tool_use_id: 't', tool_input: { file_path: join(ws.root, ws.file) } })
  const wall = (argv: string[], input = '') => {
    const t = performance.now()
    spawnSync(argv[0]!, argv.slice(1), { input, stdio: ['pipe', 'ignore', 'ignore'] })
    return performance.now() - t
  }
  const client: number[] = []
  const naive: number[] = []
  for (let i = 0; i < 30; i++) {
    client.push(wall(['sh', HOOK_CLIENT, ws.root, 'claude-code', 'PreToolUse', '10', '0'], payload))
    naive.push(wall([process.execPath, '-e', '']))
  }
  return { client: median(client), naive: median(naive) }
}

const realRoot = process.env.DSH_BENCH_HOOKS_WORKSPACE
if (realRoot) {
  // A real project: the fresh host's first session and the naive check only (per-call costs are the library's rows).
  const file = process.env.DSH_BENCH_HOOKS_MODULE
  if (!file) throw new Error('DSH_BENCH_HOOKS_WORKSPACE needs DSH_BENCH_HOOKS_MODULE (the module the body-only edit changes, relative to it)')
  const modules = join(realRoot, 'node_modules')
  const real: Project = { name: realRoot, root: realRoot, file }
  const ws = copyProject(real, 'real', modules)
  const realEdits = prepareRealEdits(join(ws.root, file))
  const realHome = claudeHome(ws.root)
  const w = await warmRow(ws, realEdits, realHome)
  const loadWarm = load()
  const naive = await naiveCheck(real, modules)
  console.log(`${realRoot}, a fresh host's first session (load average ${loadWarm} after it, ${load()} after the naive check):`)
  printWarmRows(w, naive)
  const st = await hostStatus(join(ws.root, '.dsh'))
  if (st.pid) process.kill(st.pid, 'SIGTERM')
  await sleep(1000)
  keepLog(ws.root)
  rmSync(dirname(ws.root), { recursive: true, force: true })
  rmSync(realHome, { recursive: true, force: true })
  process.exit(0)
}

const libRoot = join(mkdtempSync(join(tmpdir(), 'dsh-bench-hooks-lib-')), 'lib')
const lib = generateLibrary(libRoot, { modules: env('DSH_BENCH_MODULES', 120), testFiles: env('DSH_BENCH_TEST_FILES', 40), seed: 1 })
const source: Project = { name: 'library', root: libRoot, file: lib.modules.find(m => m.layer === 1)!.path }
const edits = prepareEdits(join(libRoot, source.file))
console.log(`Generated library: ${lib.modules.length} modules, ${lib.testFiles} test files, ${lib.tests} tests; calls edit ${source.file}.\n`)

if (process.env.DSH_BENCH_HOOKS === 'memory') {
  // The idle host as users run it (the packed guard, installed, on plain node) and as this repo runs it (sources through tsx), then `tsc -b`.
  // DSH_BENCH_GUARD_PREFIX: a prefix the guard is installed in already (another build of it).
  const given = process.env.DSH_BENCH_GUARD_PREFIX
  const guard = given ? { prefix: given, client: join(given, 'lib/node_modules/dsh-guard/assets/packages/dsh-host-hooks/bin/dsh-hook') } : installGuard()
  const rows: string[] = []
  for (const [label, client] of [['packed guard (`npm i -g` of the tarball), plain node', guard.client], ['sources through tsx (`pnpm dsh`)', HOOK_CLIENT]] as const) {
    const ws = copyProject(source, 'memory')
    const wsHome = claudeHome(ws.root)
    const w = await warmRow(ws, edits, wsHome, client)
    rows.push(`| ${label} | ${w.idleHostMb.toFixed(0)} MB | ${w.idle.pid ? rssParts(w.idle.pid) : '—'} | ${heapParts(w.idle)} | ${w.idleTreeMb.toFixed(0)} MB | ${ms(w.warmMs)} / ${ms(w.bodyMs)} | ${load()} |`)
    if (w.idle.pid) process.kill(w.idle.pid, 'SIGTERM')
    await sleep(2000)
    keepLog(ws.root)
    rmSync(dirname(ws.root), { recursive: true, force: true })
    rmSync(wsHome, { recursive: true, force: true })
  }
  const tsc = tscPeakMb(source)
  console.log('Idle host after its first session (warm, a body edit judged and undone, 10 s after the last call):')
  console.log('| host | RSS | anonymous / file-backed | heap used / committed, per thread | with its test runner | time to warm / body edit once warm | load average |')
  console.log('|---|---|---|---|---|---|---|')
  for (const row of rows) console.log(row)
  console.log(`| naive: the library's own \`tsc -b\` (peak RSS, \`/usr/bin/time -v\`, same run) | ${tsc.toFixed(0)} MB | | | | | ${load()} |\n`)
  if (!given) rmSync(guard.prefix, { recursive: true, force: true })
  rmSync(dirname(libRoot), { recursive: true, force: true })
  process.exit(0)
}

const bin = await ensureAgentCli('claude')

const guarded = copyProject(source, 'guarded')
const home = claudeHome(guarded.root)
if (process.env.DSH_BENCH_HOOKS === 'client') {
  installHooks(claude, guarded.root, { home })
  startHost(guarded.root, join(guarded.root, '.dsh'))
  await waitFor(join(guarded.root, '.dsh'), s => s.state === 'up', 120_000)
} else {
  const w = await warmRow(guarded, edits, home)
  const loadWarm = load()
  const naive = await naiveCheck(source)
  console.log(`A fresh host's first session (load average ${loadWarm} after it, ${load()} after the naive check):`)
  printWarmRows(w, naive)
}

const cost = await clientCost(guarded)
console.log(`Hook client round trip (median of 30, host up, a call it answers at once; load average ${load()}):`)
console.log('| client | wall clock |')
console.log('|---|---|')
console.log(`| sh + curl over the socket | ${ms(cost.client)} |`)
console.log(`| naive: a node start-up per call (nothing else) | ${ms(cost.naive)} (${(cost.naive / cost.client).toFixed(1)}×) |\n`)
if (process.env.DSH_BENCH_HOOKS !== 'client') {
  const plain = copyProject(source, 'plain')
  const plainHome = claudeHome(plain.root)
  console.log(`Per call inside Claude Code (${CALLS} calls a session, each from the model's request before it to the one after; guarded: hooks installed, host up and warm):`)
  console.log('| call | without hooks (median) | with hooks (median) | added per call | guarded / unguarded | load average |')
  console.log('|---|---|---|---|---|---|')
  for (const { kind, label } of KINDS) {
    const without = await claudeCalls(bin, plain, edits, kind, plainHome)
    const withHooks = await claudeCalls(bin, guarded, edits, kind, home)
    const a = median(without)
    const b = median(withHooks)
    console.log(`| ${label} | ${ms(a)} | ${ms(b)} | ${ms(b - a)} | ${(b / a).toFixed(2)}× | ${load()} |`)
  }
  rmSync(dirname(plain.root), { recursive: true, force: true })
  rmSync(plainHome, { recursive: true, force: true })
}
const status = await hostStatus(join(guarded.root, '.dsh'))
if (status.pid) process.kill(status.pid, 'SIGTERM')
await sleep(1000)
keepLog(guarded.root)
rmSync(dirname(guarded.root), { recursive: true, force: true })
rmSync(home, { recursive: true, force: true })
rmSync(dirname(libRoot), { recursive: true, force: true })
