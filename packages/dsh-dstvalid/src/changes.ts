import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { NOT_SOURCE_DIRS } from 'dsh-common'

/** mtime+size of every file below `root` (minus NOT_SOURCE_DIRS), by workspace-relative posix path. */
export type FileStates = Map<string, string>

/** Scan the workspace's files (bounded by `limit` entries, so a huge tree cannot stall a shell call). */
export function scanFiles(root: string, limit = 50_000): FileStates {
  const out: FileStates = new Map()
  const walk = (dir: string, rel: string) => {
    let entries
    try {
      entries = readdirSync(dir, { withFileTypes: true })
    } catch {
      // Vanished or unreadable while scanning: nothing to compare there.
      return
    }
    for (const e of entries) {
      if (out.size >= limit) return
      const abs = join(dir, e.name)
      const r = rel ? `${rel}/${e.name}` : e.name
      if (e.isDirectory()) {
        if (!NOT_SOURCE_DIRS.has(e.name)) walk(abs, r)
      } else if (e.isFile()) {
        try {
          const s = statSync(abs)
          out.set(r, `${s.mtimeMs}:${s.size}`)
        } catch {
          // Deleted between readdir and stat.
        }
      }
    }
  }
  walk(root, '')
  return out
}

/** Workspace-relative paths created, modified or deleted between two scans. */
export function changedFiles(before: FileStates, after: FileStates): string[] {
  const changed = new Set<string>()
  for (const [p, v] of after) if (before.get(p) !== v) changed.add(p)
  for (const p of before.keys()) if (!after.has(p)) changed.add(p)
  return [...changed].sort()
}
