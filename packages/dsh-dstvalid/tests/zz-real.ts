// Scratch driver for real-project trials (not committed).
import { readFileSync } from 'node:fs'
import { boot, runs } from './helpers.ts'

const [root, editsFile, configJson] = process.argv.slice(2)
const edits = JSON.parse(readFileSync(editsFile!, 'utf8')) as { name: string; tool: string; args: Record<string, unknown> }[]
const h = await boot(root!, { warmOnStart: false, testArgs: [], ...(configJson ? JSON.parse(configJson) : {}) }, { snapshot: { real: {} } })
const t0 = Date.now()
h.ctx.on('dstvalid/notice', n => { if (n.phase === 'end' || n.level !== 'info') console.log(`  [${((Date.now() - t0) / 1000).toFixed(1)}s] ${n.text}`) })
for (const e of edits) {
  const before = h.session.ofType('verify/run').length
  const started = Date.now()
  const r = await h.exec(e.tool, e.args)
  const ms = Date.now() - started
  console.log(`\n== ${e.name}: ${(ms / 1000).toFixed(1)} s ${r.isError ? 'ERROR' : 'ok'}\n${r.content.split('\n').slice(0, 8).join('\n')}`)
  for (const run of runs(h.session).slice(before)) console.log(`   run ${run.check} ${run.argv.slice(1, 5).join(' ').slice(-90)} ${(run.durationMs / 1000).toFixed(1)} s ${run.outcome}`)
}
await h.dispose()
process.exit(0)
