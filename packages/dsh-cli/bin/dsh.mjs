#!/usr/bin/env node
// Runs the TypeScript CLI through tsx's loader (the suite ships sources, not builds).
import { register } from 'tsx/esm/api'
register()
const { main } = await import('../src/main.ts')
process.exitCode = await main(process.argv.slice(2))
