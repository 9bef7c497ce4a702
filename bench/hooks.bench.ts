/**
 * dsh hooks with the real Claude Code CLI: the same scripted session of 20
 * writes (a Read, then 20 `Write`s of one module, each good) with and
 * without `dsh hooks install`, on the generated library (bench/gen-library.ts)
 * and on examples/demo/workspace, offline in a loopback-only namespace:
 *
 * - added time per hook call: the client (`sh` + `curl` over the socket) on
 *   a call the host answers at once, against the naive client (a `node`
 *   start-up per call);
 * - per judged write: tool/call → tool/result in the host's session log,
 *   against the same 20 writes through `dsh run` (write_file, scripted model);
 * - the session's wall clock with and without the hooks;
 * - the warm host's RSS after the session.
 *
 *   tsx bench/hooks.bench.ts
 *   DSH_BENCH_HOOKS=client tsx bench/hooks.bench.ts     # the client's round trip only
 *   DSH_BENCH_WRITES=10 DSH_BENCH_MODULES=80 DSH_BENCH_TEST_FILES=40 tsx bench/hooks.bench.ts
 */
import { spawnSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runCommand } from 'dsh-common'
import { ADAPTERS, HOOK_CLIENT, hostStatus, installHooks, startHost } from 'dsh-host-hooks'
import { anthropicModel, runClaude, startModelServer } from 'dsh-testkit'
import { ensureAgentCli } from '../scripts/agent-clis.ts'
import { generateLibrary } from './gen-library.ts'

const here = dirname(fileURLToPath(import.meta.url))
const repo = resolve(here, '..')
const env = (name: string, def: number) => Number(process.env[name] ?? def)
const WRITES = env('DSH_BENCH_WRITES', 20)

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2) : NaN
}
const ms = (x: number) => (Number.isNaN(x) ? '—' : x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(x < 10 ? 1 : 0)} ms`)

interface Project {
  name: string
  root: string
  /** The module the session writes, workspace-relative. */
  file: string
}

function contents(original: string, i: number): string {
  return `${original.trimEnd()}\n// revision ${i + 1}\n`
}

/** tool/call → tool/result of each write in a session log, in ms. */
function judgedWrites(vault: string): number[] {
  const out: number[] = []
  for (const f of readdirSync(join(vault, 'sessions'))) {
    const calls = new Map<string, number>()
    for (const line of readFileSync(join(vault, 'sessions', f), 'utf8').split('\n')) {
      if (!line) continue
      const e = JSON.parse(line) as { time: number; type: string; data: { callId?: string; name?: string } }
      if (e.type === 'tool/call' && /^(Write|write_file)$/.test(e.data.name ?? '')) calls.set(e.data.callId!, e.time)
      if (e.type === 'tool/result' && calls.has(e.data.callId!)) out.push(e.time - calls.get(e.data.callId!)!)
    }
  }
  return out
}

function copyProject(p: Project): Project {
  const root = join(mkdtempSync(join(tmpdir(), `dsh-bench-hooks-${p.name}-`)), 'ws')
  cpSync(p.root, root, { recursive: true, filter: src => !src.includes('/.dsh') && !src.endsWith('/node_modules') })
  symlinkSync(join(repo, 'node_modules'), join(root, 'node_modules'), 'dir')
  return { ...p, root }
}

async function claudeSession(bin: string, p: Project, hooked: boolean): Promise<{ wallMs: number; writes: number[]; rssMb?: number }> {
  const ws = copyProject(p)
  const abs = join(ws.root, ws.file)
  const original = readFileSync(abs, 'utf8')
  const home = mkdtempSync(join(tmpdir(), 'dsh-bench-claude-home-'))
  writeFileSync(join(home, '.claude.json'), JSON.stringify({ projects: { [ws.root]: { hasTrustDialogAccepted: true } } }))
  if (hooked) {
    installHooks(ADAPTERS.find(a => a.agent === 'claude-code')!, ws.root, { home })
    // Started and up before the session, as after any earlier session of the day: the session measures writes, not the boot.
    startHost(ws.root, join(ws.root, '.dsh'))
    while ((await hostStatus(join(ws.root, '.dsh'))).state !== 'up') await new Promise(r => setTimeout(r, 200))
  }
  const steps = [
    { text: 'Reading.', toolCalls: [{ name: 'Read', arguments: { file_path: abs } }] },
    ...Array.from({ length: WRITES }, (_, i) => ({ text: `Revision ${i + 1}.`, toolCalls: [{ name: 'Write', arguments: { file_path: abs, content: contents(original, i) } }] })),
    { text: 'Done.' },
  ]
  const server = await startModelServer(anthropicModel(steps))
  const started = performance.now()
  const run = await runClaude({ bin, workspace: ws.root, prompt: 'Revise the module.', server, home, timeoutMs: 1_800_000 })
  const wallMs = performance.now() - started
  await server.close()
  if (run.exitCode !== 0) throw new Error(`claude exited ${run.exitCode}: ${run.stderr.slice(0, 500)}`)
  if (readFileSync(abs, 'utf8') !== contents(original, WRITES - 1)) throw new Error(`${p.name}: a write was not kept (a good write must never be rolled back)`)
  let rssMb: number | undefined
  if (hooked) {
    const status = await hostStatus(join(ws.root, '.dsh'))
    rssMb = (status.rssBytes ?? 0) / 1048576
    if (status.pid) process.kill(status.pid, 'SIGTERM')
    await new Promise(r => setTimeout(r, 1000))
  }
  const writes = hooked ? judgedWrites(join(ws.root, '.dsh')) : []
  rmSync(dirname(ws.root), { recursive: true, force: true })
  rmSync(home, { recursive: true, force: true })
  return { wallMs, writes, ...(rssMb !== undefined ? { rssMb } : {}) }
}

async function dshRun(p: Project): Promise<number[]> {
  const ws = copyProject(p)
  const original = readFileSync(join(ws.root, ws.file), 'utf8')
  const script = join(dirname(ws.root), 'script.jsonl')
  writeFileSync(script, Array.from({ length: WRITES }, (_, i) => JSON.stringify({ text: `Revision ${i + 1}.`, toolCalls: [{ name: 'write_file', arguments: { path: ws.file, content: contents(original, i) } }] })).join('\n') + '\n{"text":"Done."}\n')
  const r = await runCommand([process.execPath, join(repo, 'packages/dsh-cli/bin/dsh.mjs'), 'run', '--script', script, '--workspace', ws.root], { cwd: repo, timeoutMs: 1_800_000 })
  if (r.exitCode !== 0) throw new Error(`dsh run exited ${r.exitCode}: ${r.output.slice(-500)}`)
  const writes = judgedWrites(join(ws.root, '.dsh'))
  rmSync(dirname(ws.root), { recursive: true, force: true })
  return writes
}

/** The hook client's own cost: a call the host answers at once (a tool it does not guard), N times, against `node -e ''`. */
async function clientCost(p: Project): Promise<{ client: number; naive: number; clientCpu: number; naiveCpu: number; load: string }> {
  const ws = copyProject(p)
  const vault = join(ws.root, '.dsh')
  installHooks(ADAPTERS.find(a => a.agent === 'claude-code')!, ws.root, { home: dirname(ws.root) })
  startHost(ws.root, vault)
  while ((await hostStatus(vault)).state !== 'up') await new Promise(r => setTimeout(r, 200))
  const payload = JSON.stringify({ session_id: 'bench', tool_name: 'Read', tool_use_id: 't', tool_input: { file_path: join(ws.root, ws.file) } })
  const wall = (argv: string[], input?: string) => {
    const t = performance.now()
    spawnSync(argv[0]!, argv.slice(1), { input: input ?? '', stdio: ['pipe', 'ignore', 'ignore'] })
    return performance.now() - t
  }
  // The CPU the calls' processes used (GNU time's user + sys over 30 calls in one loop: it counts in 10 ms steps), which the machine's load changes much less than the wall clock.
  const payloadFile = join(dirname(ws.root), 'payload.json')
  writeFileSync(payloadFile, payload)
  const q = (s: string) => `'${s}'`
  const cpu = (command: string) => {
    const r = spawnSync('/usr/bin/time', ['-f', '%U %S', 'sh', '-c', `for i in $(seq 30); do ${command} >/dev/null; done`], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' })
    const [user, sys] = r.stderr.trim().split('\n').at(-1)!.split(' ').map(Number)
    return ((user ?? NaN) + (sys ?? NaN)) * 1000 / 30
  }
  const client: number[] = []
  const naive: number[] = []
  for (let i = 0; i < 30; i++) {
    client.push(wall(['sh', HOOK_CLIENT, ws.root, 'claude-code', 'PreToolUse', '10', '0'], payload))
    naive.push(wall([process.execPath, '-e', '']))
  }
  const clientCpu = cpu(`sh ${q(HOOK_CLIENT)} ${q(ws.root)} claude-code PreToolUse 10 0 < ${q(payloadFile)}`)
  const naiveCpu = cpu(`${q(process.execPath)} -e ''`)
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ')[0]!
  const status = await hostStatus(vault)
  if (status.pid) process.kill(status.pid, 'SIGTERM')
  await new Promise(r => setTimeout(r, 500))
  rmSync(dirname(ws.root), { recursive: true, force: true })
  return {
    client: median(client), naive: median(naive), clientCpu, naiveCpu, load,
  }
}

const bin = await ensureAgentCli('claude')
const libRoot = join(mkdtempSync(join(tmpdir(), 'dsh-bench-hooks-lib-')), 'lib')
const lib = generateLibrary(libRoot, { modules: env('DSH_BENCH_MODULES', 320), testFiles: env('DSH_BENCH_TEST_FILES', 160), seed: 1 })
const libModule = lib.modules.find(m => m.layer === 1)!.path
const projects: Project[] = [
  { name: 'demo', root: join(repo, 'examples/demo/workspace'), file: 'src/money.ts' },
  { name: 'library', root: libRoot, file: libModule },
]

const cost = await clientCost(projects[0]!)
console.log(`Hook client round trip (median of 30, host up, a call it answers at once; load average ${cost.load}):`)
console.log(`| client | wall clock | CPU (user + sys) |`)
console.log(`|---|---|---|`)
console.log(`| sh + curl over the socket | ${ms(cost.client)} | ${ms(cost.clientCpu)} |`)
console.log(`| naive: a node start-up per call (nothing else) | ${ms(cost.naive)} (${(cost.naive / cost.client).toFixed(1)}×) | ${ms(cost.naiveCpu)} (${(cost.naiveCpu / cost.clientCpu).toFixed(1)}×) |\n`)
if (process.env.DSH_BENCH_HOOKS === 'client') process.exit(0)
console.log(`| project | session without hooks | with hooks | added per write (2 hook calls) | judged write, hooks (median) | same write, dsh run (median) | hooks / dsh run | host RSS after |`)
console.log(`|---|---|---|---|---|---|---|---|`)
for (const p of projects) {
  const plain = await claudeSession(bin, p, false)
  const hooked = await claudeSession(bin, p, true)
  const run = await dshRun(p)
  const h = median(hooked.writes)
  const d = median(run)
  console.log(`| ${p.name} (${p.file}, ${WRITES} writes) | ${ms(plain.wallMs)} | ${ms(hooked.wallMs)} | ${ms((hooked.wallMs - plain.wallMs) / WRITES)} | ${ms(h)} | ${ms(d)} | ${(h / d).toFixed(2)} | ${hooked.rssMb!.toFixed(0)} MB |`)
}
rmSync(dirname(libRoot), { recursive: true, force: true })
