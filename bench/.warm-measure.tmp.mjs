// Time to warm (hooks host, first session) on a fresh workspace, then a body-only edit judged once warm,
// idle RSS of the host tree, then the naive check (tsc -b + vitest run) on a second clone. Usage:
// node warm-measure.mjs WS NAIVE_WS FILE OLD NEW
import { spawn, spawnSync } from 'node:child_process'
import { readFileSync, readdirSync, writeFileSync, mkdtempSync } from 'node:fs'
import { join } from 'node:path'
import { tmpdir } from 'node:os'
const [ws, naiveWs, file, oldS, newS] = process.argv.slice(2)
const repo = '/work/wt/perf'
const client = `${repo}/packages/dsh-host-hooks/bin/dsh-hook`
const { installHooks, ADAPTERS, hostStatus } = await import(`${repo}/packages/dsh-host-hooks/src/index.ts`)
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
const log = (...a) => console.log(new Date().toISOString().slice(11, 19), ...a)
const home = mkdtempSync(join(tmpdir(), 'perf-home-'))
installHooks(ADAPTERS.find(a => a.agent === 'claude-code'), ws, { home })
const hook = (event, payload, max = 598, wait = 60) => new Promise(res => {
  const t = performance.now()
  const c = spawn('sh', [client, ws, 'claude-code', event, String(max), String(wait)], { stdio: ['pipe', 'pipe', 'inherit'] })
  let out = ''; c.stdout.on('data', d => out += d); c.on('close', () => res({ ms: performance.now() - t, out }))
  c.stdin.end(JSON.stringify({ hook_event_name: event, cwd: ws, session_id: 'perf-warm', transcript_path: join(home, 't.jsonl'), ...payload }))
})
function treeRss(pid) {
  const kids = new Map()
  for (const p of readdirSync('/proc').filter(x => /^\d+$/.test(x))) {
    try { const st = readFileSync(`/proc/${p}/stat`, 'utf8'); const pp = Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[1]); (kids.get(pp) ?? kids.set(pp, []).get(pp)).push(Number(p)) } catch {}
  }
  const rss = p => { try { return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0) } catch { return 0 } }
  const out = []
  const walk = p => { out.push({ pid: p, kb: rss(p), cmd: (() => { try { return readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').slice(0, 4).join(' ').slice(0, 120) } catch { return '' } })() }); for (const k of kids.get(p) ?? []) walk(k) }
  walk(pid)
  return out
}
const started = performance.now()
log('load', load(), 'SessionStart')
const ss = await hook("SessionStart", { source: "startup" }, 28, 0)
while ((await hostStatus(join(ws, ".dsh"))).state !== "up") await new Promise(r => setTimeout(r, 200))
await hook("SessionStart", { source: "startup" }, 28, 0)
log(`SessionStart answered in ${ss.ms.toFixed(0)} ms`)
let st, last = ''
for (;;) {
  await new Promise(r => setTimeout(r, 2000))
  st = await hostStatus(join(ws, '.dsh'))
  const line = `${st.state} ${JSON.stringify(st.warm ?? null)} ${JSON.stringify(st.measuring ?? [])}`
  if (line !== last) { log(line, 'load', load()); last = line }
  if (st.warm && st.warm.state !== 'warming') break
  if (performance.now() - started > 3_600_000) { log('gave up waiting'); break }
}
const warmMs = performance.now() - started
log(`time to warm ${(warmMs / 1000).toFixed(1)} s (host says ${st.warm?.ms} ms), load ${load()}`)
await hook('UserPromptSubmit', { prompt: 'edit' }, 58, 25)
const p = join(ws, file)
const input = { file_path: p, old_string: oldS, new_string: newS }
const pre = await hook('PreToolUse', { tool_name: 'Edit', tool_use_id: 'toolu_perf_1', tool_input: input })
writeFileSync(p, readFileSync(p, 'utf8').replace(oldS, newS))
const post = await hook('PostToolUse', { tool_name: 'Edit', tool_use_id: 'toolu_perf_1', tool_input: input, tool_response: { filePath: p, oldString: oldS, newString: newS } })
log(`body edit: pre ${pre.ms.toFixed(0)} ms, post ${post.ms.toFixed(0)} ms, answer ${post.out.slice(0, 300)}; load ${load()}`)
const kept = readFileSync(p, 'utf8').includes(newS)
log(`kept: ${kept}`)
await hook('Stop', { stop_hook_active: false }, 598, 0)
await new Promise(r => setTimeout(r, 20000))
st = await hostStatus(join(ws, '.dsh'))
const tree = treeRss(st.pid)
log(`idle host tree RSS ${(tree.reduce((a, x) => a + x.kb, 0) / 1024).toFixed(0)} MB:`)
for (const x of tree) log(`  ${x.pid} ${(x.kb / 1024).toFixed(0)} MB ${x.cmd}`)
writeFileSync(join(ws, '..', 'perf-warm.json'), JSON.stringify({ warmMs, pre: pre.ms, post: post.ms, kept, tree }, null, 1))
if (naiveWs) {
  const time = (argv) => { const t = performance.now(); const r = spawnSync(argv[0], argv.slice(1), { cwd: naiveWs, stdio: ['ignore', 'ignore', 'ignore'], timeout: 3_600_000 }); return [(performance.now() - t) / 1000, r.status] }
  log('naive: tsc -b, load', load())
  const [tsc, tscRc] = time([join(naiveWs, 'node_modules/.bin/tsc'), '-b'])
  log(`naive tsc -b ${tsc.toFixed(1)} s exit ${tscRc}; vitest run, load ${load()}`)
  const [vit, vitRc] = time([join(naiveWs, 'node_modules/.bin/vitest'), 'run'])
  log(`naive vitest run ${vit.toFixed(1)} s exit ${vitRc}; total ${(tsc + vit).toFixed(1)} s; warm/naive ${(warmMs / 1000 / (tsc + vit)).toFixed(2)}; load ${load()}`)
}
if (st.pid) process.kill(st.pid, 'SIGTERM')
