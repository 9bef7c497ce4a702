#!/usr/bin/env -S node --import tsx
import { nodeTooOld } from './node-check.ts'

const tooOld = nodeTooOld()
if (tooOld) {
  process.stderr.write(`${tooOld}\n`)
  process.exit(1)
}
const { runMain } = await import('./main.ts')
process.exitCode = await runMain(process.argv.slice(2))
