import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isolationSupport, type Isolation } from 'dsh-common'
import type { Change } from './types.ts'

/**
 * Whether a test command can be shown a write's accepted content in a
 * private mount namespace (ADR 0019): namespaces are available here, and
 * every path the write touched existed before it and is a file now (a
 * created file cannot be made absent by a mount, nor a deleted one mounted
 * over). Unlike the warm runner's served modules, a mount reaches the
 * test's own file reads too (a fixture, a listing of an unchanged directory).
 */
export function servableByMount(change: Change): boolean {
  const before = change.before
  if (!before?.size || isolationSupport().mode !== 'namespaces') return false
  for (const [path, bytes] of before) {
    if (bytes === null) return false
    try {
      if (!statSync(path).isFile()) return false
    } catch {
      return false // Gone since (ENOENT): nothing to mount over.
    }
  }
  return true
}

/**
 * `run` with an isolation that shows each of the write's paths with its
 * content from before the write, to that command alone; the workspace
 * itself keeps the write, so no other process ever sees the pre-image.
 * Undefined when the change cannot be served this way.
 */
export async function withAcceptedContent<T>(change: Change, run: (isolate: Isolation) => Promise<T>): Promise<T | undefined> {
  if (!servableByMount(change)) return undefined
  const dir = mkdtempSync(join(tmpdir(), 'dsh-accepted-'))
  try {
    const overlays = [...change.before!].map(([target, bytes], i) => {
      const source = join(dir, String(i))
      writeFileSync(source, bytes!)
      return { source, target }
    })
    return await run({ overlays })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
