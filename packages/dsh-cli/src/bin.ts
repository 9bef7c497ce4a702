#!/usr/bin/env -S node --import tsx
import { main } from './main.ts'

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code },
  (error) => {
    process.stderr.write(`dsh: ${(error as Error)?.stack ?? String(error)}\n`)
    process.exitCode = 1
  },
)
