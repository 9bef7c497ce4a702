import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { join } from 'node:path'

/** Files under a directory, by path relative to it: each one's bytes (as latin1 text), a symlink as `-> target`. */
export type FileTree = Record<string, string>

/**
 * Every file under `root` (none when it is absent), skipping directories
 * and files whose name is in `skip`; for byte-comparing what an install
 * touched with what its uninstall left.
 */
export function readTree(root: string, skip: readonly string[] = []): FileTree {
  const tree: FileTree = {}
  const walk = (dir: string, rel: string) => {
    for (const name of readdirSync(dir).sort()) {
      if (skip.includes(name)) continue
      const path = join(dir, name)
      const at = rel ? `${rel}/${name}` : name
      const stat = lstatSync(path)
      if (stat.isSymbolicLink()) tree[at] = `-> ${readlinkSync(path)}`
      else if (stat.isDirectory()) walk(path, at)
      else if (stat.isFile()) tree[at] = readFileSync(path).toString('latin1')
    }
  }
  if (existsSync(root)) walk(root, '')
  return tree
}

/** The paths added, changed or removed from `before` to `after` (trees, or picks of them), sorted. */
export function treeChanges(before: Readonly<Record<string, string | undefined>>, after: Readonly<Record<string, string | undefined>>): string[] {
  return [...new Set([...Object.keys(before), ...Object.keys(after)])].filter(f => before[f] !== after[f]).sort()
}

/** `tree` restricted to `paths` (an absent one as undefined): what to compare after an uninstall. */
export function pick(tree: FileTree, paths: readonly string[]): Record<string, string | undefined> {
  return Object.fromEntries(paths.map(p => [p, tree[p]]))
}
