import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { NOT_SOURCE_DIRS } from './skipped-dirs.ts'

/** A file's mtime and size, the stamp a cache of its content is keyed by; undefined when it is gone. */
export function fileStamp(abs: string): string | undefined {
  try {
    const s = statSync(abs)
    return `${s.mtimeMs}:${s.size}`
  } catch {
    // Gone (or unreadable): nothing to key by.
    return undefined
  }
}

/** mtime and size of every file below a root (minus {@link NOT_SOURCE_DIRS}), by root-relative posix path. */
export type FileStates = Map<string, string>

/**
 * The files below `root` and their mtime and size: compared before and
 * after a command (`changedPaths`) where nothing keeps a warmer picture.
 * Bounded by `limit` entries, so a huge tree cannot stall a call.
 */
export function scanFileStates(root: string, limit = 50_000): FileStates {
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
        const stamp = fileStamp(abs)
        // Undefined: deleted between readdir and stat.
        if (stamp !== undefined) out.set(r, stamp)
      }
    }
  }
  walk(root, '')
  return out
}

/** Paths created, modified or deleted between two scans, sorted. */
export function changedPaths(before: FileStates, after: FileStates): string[] {
  const changed = new Set<string>()
  for (const [p, v] of after) if (before.get(p) !== v) changed.add(p)
  for (const p of before.keys()) if (!after.has(p)) changed.add(p)
  return [...changed].sort()
}

/** The same, split by kind (each sorted). */
export function changedPathsByKind(before: FileStates, after: FileStates): { created: string[]; modified: string[]; deleted: string[] } {
  const out = { created: [] as string[], modified: [] as string[], deleted: [] as string[] }
  for (const p of changedPaths(before, after)) {
    if (!before.has(p)) out.created.push(p)
    else if (!after.has(p)) out.deleted.push(p)
    else out.modified.push(p)
  }
  return out
}
