// isolation: what the bash tool's isolation costs per call. The same short
// command (`true`, then `ls` of a 200-file directory) run through runCommand
// three ways, interleaved so load changes hit every row alike:
//   - naive: `bash -c` in its own process group (the bash tool before isolation);
//   - marker sweep: the fallback without namespaces (every process scanned in
//     /proc for the run's marker when the command ends);
//   - namespaces: fresh user, PID and mount namespaces with the vault read-only
//     and the key store hidden (the default where the system allows it).
// Medians of N calls; read the ratios, not the milliseconds, on a shared machine.
// Then what the checks pay for the same namespaces (ADR 0015): a one-test
// `vitest run` (the CLI check) and the start of a long-lived Node child with
// an IPC channel (the warm runner's start, to its first message), naive vs
// isolated.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isolationSupport, runCommand, startProcess, type Isolation } from 'dsh-common'

const N = Number(process.env.DSH_BENCH_RUNS ?? 40)
const ws = mkdtempSync(join(tmpdir(), 'dsh-bench-isolation-'))
process.on('exit', () => rmSync(ws, { recursive: true, force: true }))
const vault = join(ws, '.dsh')
const keys = join(ws, 'state')
mkdirSync(vault)
mkdirSync(keys)
mkdirSync(join(ws, 'src'))
for (let i = 0; i < 200; i++) writeFileSync(join(ws, 'src', `m${i}.ts`), `export const m${i} = ${i}\n`)
const isolation: Isolation = { readOnly: [vault], hidden: [keys] }

const support = isolationSupport()
if (support.mode !== 'namespaces') console.log(`(namespaces not available here: ${support.reason}; that row is the marker sweep again)`)

type Way = 'naive' | 'marker sweep' | 'namespaces'
async function once(way: Way, command: string): Promise<number> {
  if (way === 'marker sweep') process.env.DSH_ISOLATION = 'off'
  try {
    const r = await runCommand(['bash', '-c', command], { cwd: ws, ...(way === 'naive' ? {} : { isolate: isolation }) })
    if (r.exitCode !== 0) throw new Error(`${way}: ${command} → ${r.output}`)
    return r.durationMs
  } finally {
    delete process.env.DSH_ISOLATION
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const ways: Way[] = ['naive', 'marker sweep', 'namespaces']
console.log(`| command | ${ways.join(' | ')} | namespaces vs naive |`)
console.log(`|---|${ways.map(() => '---').join('|')}|---|`)
for (const command of ['true', 'ls -l src > /dev/null']) {
  const times = new Map<Way, number[]>(ways.map(w => [w, []]))
  for (const w of ways) await once(w, command) // warm-up
  for (let i = 0; i < N; i++) for (const w of ways) times.get(w)!.push(await once(w, command))
  const m = ways.map(w => median(times.get(w)!))
  console.log(`| \`${command}\` | ${m.map(x => `${x} ms`).join(' | ')} | +${m[2]! - m[0]!} ms (${(m[2]! / m[0]!).toFixed(1)}×) |`)
}
console.log(`\n${N} calls per row, medians; load average ${(await import('node:os')).loadavg()[0]!.toFixed(1)}`)

// The checks: a one-test vitest workspace on the repository's vitest.
const repo = join(dirname(fileURLToPath(import.meta.url)), '..')
writeFileSync(join(ws, 'package.json'), '{ "name": "bench", "private": true, "type": "module" }\n')
symlinkSync(join(repo, 'node_modules'), join(ws, 'node_modules'))
mkdirSync(join(ws, 'tests'))
writeFileSync(join(ws, 'tests', 'a.test.js'), "import { expect, it } from 'vitest'\n\nit('adds', () => expect(1 + 1).toBe(2))\n")
writeFileSync(join(ws, 'child.mjs'), "process.send({ ready: true })\nprocess.on('message', () => process.exit(0))\n")
const vitest = [process.execPath, join(repo, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--pool=threads']
const checks: Record<string, (isolated: boolean) => Promise<number>> = {
  '`vitest run` (one test)': async isolated => {
    const r = await runCommand(vitest, { cwd: ws, env: { CI: '1' }, ...(isolated ? { isolate: { hidden: [keys] } } : {}) })
    if (r.exitCode !== 0) throw new Error(`vitest: ${r.output}`)
    return r.durationMs
  },
  'Node child with IPC, to its first message': async isolated => {
    const started = performance.now()
    const child = startProcess([process.execPath, join(ws, 'child.mjs')], { cwd: ws, ipc: true, ...(isolated ? { isolate: { hidden: [keys] } } : {}) })
    await new Promise<void>(resolve => { child.onMessage(() => resolve()) })
    const ms = Math.round(performance.now() - started)
    child.send('bye')
    await child.exited
    return ms
  },
}
const M = Math.max(3, Math.round(N / 8))
console.log('\n| check | naive | namespaces | namespaces vs naive |')
console.log('|---|---|---|---|')
for (const [name, run] of Object.entries(checks)) {
  const plain: number[] = []
  const isolated: number[] = []
  await run(false)
  await run(true)
  for (let i = 0; i < M; i++) {
    plain.push(await run(false))
    isolated.push(await run(true))
  }
  const [a, b] = [median(plain), median(isolated)]
  console.log(`| ${name} | ${a} ms | ${b} ms | ${b >= a ? '+' : ''}${b - a} ms (${(b / a).toFixed(2)}×) |`)
}
console.log(`\n${M} runs per row, medians; load average ${(await import('node:os')).loadavg()[0]!.toFixed(1)}`)
