import { readdirSync } from 'node:fs'
import { join } from 'node:path'

/**
 * Workspace-relative files below `root` whose names end with `ext`, hidden
 * directories and those named in `skip` left out, at most `max` of them (a
 * huge tree cannot stall a write).
 */
export function sourceFiles(root: string, ext: string, skip: ReadonlySet<string>, max: number, dir = '.', out: string[] = []): string[] {
  let entries
  try {
    entries = readdirSync(join(root, dir), { withFileTypes: true })
  } catch {
    // Vanished or unreadable: nothing to scan there.
    return out
  }
  for (const entry of entries) {
    if (out.length >= max) break
    const rel = dir === '.' ? entry.name : `${dir}/${entry.name}`
    if (entry.isDirectory() && !entry.name.startsWith('.') && !skip.has(entry.name)) sourceFiles(root, ext, skip, max, rel, out)
    else if (entry.isFile() && entry.name.endsWith(ext)) out.push(rel)
  }
  return out
}
