// dev-reload: what one saved plugin edit costs under `dsh dev` (in-place
// reload on Node 20: fresh module URLs, the entry's fiber swapped; sessions
// keep running) against the naive way, restarting the process and booting
// the harness again (what a restart-on-change runner does; every session
// and in-flight turn is lost). Same harness for both: the core plugins,
// dsh-invariants and a small tool plugin in a temporary project.
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { startDev } from 'dsh-cli/dev'

const runs = Number(process.env.DSH_BENCH_RUNS ?? 7)
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(import.meta.url)

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]!
}

function greeter(reply: string): string {
  return `export const name = 'greeter'
export const inject = ['tools']
export function apply(ctx: { tools: { register(def: object): () => void } }) {
  ctx.tools.register({ name: 'greet', description: 'Say hello.', parameters: { type: 'object', properties: {} }, effects: 'read', execute: () => ({ content: ${JSON.stringify(reply)} }) })
}
`
}

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-bench-dev-')))
mkdirSync(join(dir, 'plugins'))
mkdirSync(join(dir, 'workspace'))
writeFileSync(join(dir, 'package.json'), '{"type":"module"}\n')
const config = join(dir, 'cordis.yml')
writeFileSync(config, ['sessions: dsh-session', 'tools: dsh-tools', 'workspace-tools: dsh-tools-workspace', 'llm: dsh-llm', 'agents: dsh-agent', 'invariants: dsh-invariants', 'greeter: ./plugins/greeter.ts']
  .map(line => line.split(': ')).map(([id, name]) => `- id: ${id}\n  name: ${name}\n`).join(''))
const greeterFile = join(dir, 'plugins', 'greeter.ts')
writeFileSync(greeterFile, greeter('v0'))

// ours
const dev = await startDev({ config, workspace: join(dir, 'workspace'), debounceMs: 60 })
const { session } = dev.harness.createSession('kept')
const inPlace: number[] = []
const saveToReport: number[] = []
const suite: number[] = []
const invariantsFile = realpathSync(require.resolve('dsh-invariants'))
const invariantsFiles = dev.reloader.track().find(t => t.id === 'invariants')!.graph.files.size
// Through the watcher: save, wait for the report.
for (let i = 1; i <= runs; i++) {
  const next = dev.nextReport()
  const start = performance.now()
  writeFileSync(greeterFile, greeter(`saved ${i}`))
  const report = await next
  saveToReport.push(performance.now() - start)
  if (report.kind !== 'plugins' || report.entries[0]?.outcome !== 'reloaded') throw new Error(`reload failed: ${JSON.stringify(report)}`)
}
// The reload alone (watcher stopped, so it does not reload the same saves again).
await dev.watcher.close()
for (let i = 1; i <= runs; i++) {
  writeFileSync(greeterFile, greeter(`direct ${i}`))
  let start = performance.now()
  const report = await dev.reloader.reloadFiles([greeterFile])
  inPlace.push(performance.now() - start)
  if (report?.entries[0]?.outcome !== 'reloaded') throw new Error(`reload failed: ${JSON.stringify(report)}`)
  start = performance.now()
  await dev.reloader.reloadFiles([invariantsFile])
  suite.push(performance.now() - start)
}
const kept = dev.harness.ctx.sessions.get('kept') === session
await dev.close()

// naive: a new process boots the same harness (until it is ready)
const tsx = pathToFileURL(require.resolve('tsx')).href
const bootScript = join(dir, 'boot.ts')
writeFileSync(bootScript, `import { bootHarness } from ${JSON.stringify(join(repo, 'packages/dsh-cli/src/harness.ts'))}
const harness = await bootHarness({ config: ${JSON.stringify(config)}, workspace: ${JSON.stringify(join(dir, 'workspace'))} })
await harness.dispose()
`)
const restart: number[] = []
for (let i = 0; i < runs; i++) {
  const start = performance.now()
  const r = spawnSync(process.execPath, ['--import', tsx, bootScript], { cwd: dir, encoding: 'utf8' })
  restart.push(performance.now() - start)
  if (r.status !== 0) throw new Error(`boot failed: ${r.stderr}`)
}

const ours = median(inPlace)
const rows: [string, number, string][] = [
  ['dsh dev: in-place reload of the edited plugin (1 file)', ours, `yes (${kept ? 'verified' : 'NOT kept'})`],
  ['dsh dev: save → reload report (incl. 60 ms debounce)', median(saveToReport), 'yes'],
  [`dsh dev: in-place reload of dsh-invariants (${invariantsFiles}-file graph)`, median(suite), 'yes'],
  ['naive: restart the process and boot the harness', median(restart), 'no'],
]
console.log(`${runs} runs each, medians; Node ${process.version}\n`)
console.log('| approach | per change | sessions kept | vs in-place reload |')
console.log('|---|---|---|---|')
for (const [name, ms, keeps] of rows) console.log(`| ${name} | ${ms.toFixed(1)} ms | ${keeps} | ${(ms / ours).toFixed(1)}× |`)
