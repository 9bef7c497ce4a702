// Runs every bench/*.bench.ts in its own process, one after another, so each
// measures on a quiet machine. `pnpm bench [name…]` runs only the named ones;
// arguments from the first one starting with `-` on go to each of them
// (`pnpm bench replay --project defu`, `pnpm bench replay --help`).
import { readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { spawnSync } from 'node:child_process'

const here = dirname(fileURLToPath(import.meta.url))
const argv = process.argv.slice(2)
const firstFlag = argv.findIndex(a => a.startsWith('-'))
const wanted = firstFlag < 0 ? argv : argv.slice(0, firstFlag)
const forwarded = firstFlag < 0 ? [] : argv.slice(firstFlag)
const files = readdirSync(here)
  .filter(f => f.endsWith('.bench.ts'))
  .filter(f => !wanted.length || wanted.some(w => f.startsWith(w)))
  .sort()
if (!files.length) {
  console.error(`bench: no benchmark matches ${wanted.join(', ') || '*'} (have: ${readdirSync(here).filter(f => f.endsWith('.bench.ts')).join(', ')})`)
  process.exit(2)
}
let failed = 0
for (const file of files) {
  if (!forwarded.includes('--help') && !forwarded.includes('-h')) console.log(`\n## ${file.replace(/\.bench\.ts$/, '')}\n`)
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--expose-gc', join(here, file), ...forwarded], { stdio: 'inherit' })
  if (r.status !== 0) {
    failed++
    console.error(`bench: ${file} exited with ${r.status ?? r.signal}`)
  }
}
process.exit(failed ? 1 : 0)
