/**
 * What a deleted (or moved) file can affect. A test runner's related-file
 * selection follows imports from files that exist, so a deletion selects
 * nothing and a `rm -rf src` would be judged on no test at all. The files
 * that imported a deleted file in the accepted state still exist (or were
 * deleted too, then their importers count): they are what the deletion
 * breaks, and what the lazy checks must run.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { ImportEdge } from './impact.ts'
import type { Change, ModuleGraph } from './types.ts'

/**
 * `change` with the existing files that imported its deleted files added
 * (through deleted importers too), by the import graph of the workspace
 * with the deleted files put back (each of `graphs` for its own files);
 * `change` itself when nothing of it was deleted or nothing imported what was.
 */
export function withImportersOfDeleted(root: string, change: Change, graphs: readonly ModuleGraph[]): Change {
  const gone = change.paths.filter(p => !existsSync(p))
  const edges: ImportEdge[] = []
  const deleted = new Set<string>()
  for (const language of graphs) {
    const mine = gone.filter(p => language.files.test(p))
    if (!mine.length) continue
    for (const p of mine) deleted.add(p)
    edges.push(...language.graph(root, mine))
  }
  if (!edges.length) return change
  const importers = new Map<string, string[]>()
  for (const { from, to } of edges) {
    const list = importers.get(to) ?? []
    list.push(from)
    importers.set(to, list)
  }
  const have = new Set(change.files)
  const added: string[] = []
  const seen = new Set<string>()
  const queue = change.files.filter((_, i) => deleted.has(change.paths[i]!))
  while (queue.length) {
    const file = queue.pop()!
    for (const from of importers.get(file) ?? []) {
      if (seen.has(from)) continue
      seen.add(from)
      if (!existsSync(join(root, from))) queue.push(from)
      else if (!have.has(from)) added.push(from)
    }
  }
  if (!added.length) return change
  added.sort()
  return { paths: [...change.paths, ...added.map(f => join(root, f))], files: [...change.files, ...added] }
}
