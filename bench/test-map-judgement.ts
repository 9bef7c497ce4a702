/**
 * `pnpm bench test-map` with `DSH_BENCH_JUDGE=1` on a real project
 * (DSH_BENCH_WORKSPACE, a throw-away clone with its dependencies installed;
 * DSH_BENCH_MODULE, one of its source modules; DSH_BENCH_FUNCTION, one of
 * its top-level functions, the first by default): the whole judgement of a
 * write through the real harness (session, tools, dsh-snapshot, dsh-dstvalid
 * with its defaults: type-check, related tests by the map) once the map is
 * warm — the accepted state measured first (the whole suite, which records
 * the map), then two same-behaviour body edits of the function, a breaking
 * one and a comment. Per write: the verdict, its time, and each check's
 * runs with their times (what dominates). The module is put back byte for
 * byte.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { Context, type Fiber } from '@deepseek-ai/cordis'
import SessionService from 'dsh-session'
import ToolService from 'dsh-tools'
import * as WorkspaceTools from 'dsh-tools-workspace'
import * as Snapshot from 'dsh-snapshot'
import DstValidService, { type RunRecord } from 'dsh-dstvalid'
import { env, functionsOf } from './test-map-workspace.ts'

const load = () => loadavg()[0]!.toFixed(1)
const line = (run: RunRecord) => `  ${run.check}: ${run.argv.join(' ').slice(0, 140)} — ${(run.durationMs / 1000).toFixed(1)} s (${run.outcome})`

export async function runJudgementBench(root: string, module: string): Promise<void> {
  if (!module) throw new Error('DSH_BENCH_MODULE: the module to edit (workspace-relative) is required with DSH_BENCH_WORKSPACE')
  const abs = join(root, module)
  const original = readFileSync(abs, 'utf8')
  const fns = functionsOf(module, original)
  const fn = process.env.DSH_BENCH_FUNCTION ? fns.find(f => f.name === process.env.DSH_BENCH_FUNCTION) : fns[0]
  if (!fn) throw new Error(`${module}: no top-level function ${process.env.DSH_BENCH_FUNCTION ?? 'with a block body'}`)
  const ctx = new Context()
  const fibers: Fiber[] = []
  const plugin = async (p: Parameters<Context['plugin']>[0], config?: unknown) => {
    const fiber = ctx.plugin(p, config)
    fibers.push(fiber)
    await fiber.await()
  }
  try {
    await plugin(SessionService)
    await plugin(ToolService)
    await plugin(WorkspaceTools, {})
    await plugin(Snapshot, { fsync: 'off' })
    await plugin(DstValidService, { warmOnStart: true, timeoutMs: env('DSH_BENCH_TIMEOUT_S', 3600) * 1000 })
    const session = ctx.sessions.create(undefined, { cwd: root })
    const guard = ctx.dstvalid.guardFor(root, session.vault)
    console.log(`${root} (${module}, \`${fn.name}\`); load average ${loadavg().map(x => x.toFixed(1)).join(', ')}`)
    let t = performance.now()
    const baseline: RunRecord[] = []
    await guard.queue.run(() => guard.prepare({ record: run => { baseline.push(run); session.append('verify/run', run) }, notice: () => {} }))
    console.log(`accepted state (the whole suite: the map recorded): ${((performance.now() - t) / 1000).toFixed(1)} s, load ${load()}`)
    for (const run of baseline) console.log(line(run))
    let calls = 0
    const write = async (name: string, text: string) => {
      const before = session.ofType('verify/run').length
      t = performance.now()
      const result = await ctx.tools.execute({ session, callId: `w${++calls}`, name: 'write_file', arguments: { path: module, content: text } })
      const ms = performance.now() - t
      console.log(`\n${name}: ${(ms / 1000).toFixed(1)} s, load ${load()}`)
      for (const l of String(result.content).split('\n').slice(0, 6)) console.log(`  | ${l}`)
      for (const run of session.ofType('verify/run').slice(before)) console.log(line(run.data))
    }
    const at = (statement: string) => original.slice(0, fn.at) + statement + original.slice(fn.at)
    await write(`\`${fn.name}\` body edit, same behaviour`, at(' void 0;'))
    await write(`\`${fn.name}\` body edit again, same behaviour`, at(' void 1;'))
    await write(`\`${fn.name}\` throws`, at(" if (Date.now() > 0) throw new Error('dsh bench: a behaviour change');"))
    await write('a comment above it', at(' void 1; // dsh bench: a comment'))
  } finally {
    writeFileSync(abs, original)
    for (const f of fibers.reverse()) await f.dispose()
  }
}
