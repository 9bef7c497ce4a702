import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { noteLeftover } from './leftovers.ts'

const made: string[] = []
let hooked = false

function removeAll(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
}

/**
 * A fresh directory under the OS temp dir (its real path, so it compares
 * equal to what `realpath` gives back), removed when the test worker exits
 * (or, when the pool stops the worker without an `exit` event, at the end of
 * the run: see leftovers.ts).
 */
export function tempDir(prefix = 'dsh-test-'): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)))
  made.push(dir)
  noteLeftover(dir)
  if (!hooked) {
    hooked = true
    process.once('exit', removeAll)
  }
  return dir
}
