#!/usr/bin/env node
// Runs the TypeScript CLI through tsx's loader (the suite ships sources, not builds).
// Plain JavaScript up to the version check, so an older Node gets one clear line.
import { readFileSync } from 'node:fs'

const floor = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).engines.node.replace(/^>=\s*/, '')
const have = process.versions.node.split('.').map(Number)
const need = floor.split('.').map(Number)
const i = have.findIndex((n, k) => n !== need[k])
if (i !== -1 && i < 3 && have[i] < need[i]) {
  process.stderr.write(`dsh: Node.js ${floor} or newer is needed (this is ${process.versions.node})\n`)
  process.exit(1)
}
try {
  const { register } = await import('tsx/esm/api')
  register()
  const { runMain } = await import('../src/main.ts')
  process.exitCode = await runMain(process.argv.slice(2))
} catch (error) {
  // Loading failed (a missing dependency, a syntax error): the same one-line report as a crash in main.
  const text = process.env.DSH_DEBUG === '1' && error?.stack ? error.stack : `${String(error?.message ?? error).split('\n')[0]} (DSH_DEBUG=1 shows where)`
  process.stderr.write(`dsh: ${text}\n`)
  process.exitCode = 1
}
