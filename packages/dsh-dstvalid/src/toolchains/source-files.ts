import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * Workspace-relative files below `root` whose names end with `ext` (or whose
 * workspace-relative path `ext` accepts), hidden directories and those named
 * in `skip` left out, at most `max` of them (a huge tree cannot stall a write).
 */
export function sourceFiles(root: string, ext: string | ((rel: string) => boolean), skip: ReadonlySet<string>, max: number, dir = '.', out: string[] = []): string[] {
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
    else if (entry.isFile() && (typeof ext === 'string' ? entry.name.endsWith(ext) : ext(rel))) out.push(rel)
  }
  return out
}

/**
 * The first file of {@link sourceFiles} (at most 50,000 of them) whose text
 * matches `re`, or undefined; an unreadable file counts as absent.
 */
export function firstSourceMatching(root: string, ext: string, skip: ReadonlySet<string>, re: RegExp): string | undefined {
  return sourceFiles(root, ext, skip, 50_000).find(path => {
    try {
      return re.test(readFileSync(join(root, path), 'utf8'))
    } catch {
      // Unreadable: as if absent.
      return false
    }
  })
}
