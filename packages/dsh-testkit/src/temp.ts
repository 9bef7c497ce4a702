import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const made: string[] = []
let hooked = false

function removeAll(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
}

/**
 * A fresh directory under the OS temp dir (its real path, so it compares
 * equal to what `realpath` gives back), removed when the test worker exits.
 */
export function tempDir(prefix = 'dsh-test-'): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)))
  made.push(dir)
  if (!hooked) {
    hooked = true
    process.once('exit', removeAll)
  }
  return dir
}
