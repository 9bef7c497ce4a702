/**
 * Change impact on a plain import graph: who imports the files a write is
 * about to change, transitively, nearest first. No toolchain knowledge here:
 * the TypeScript program, `go list` and the Python import scan each produce
 * edges; this file walks them.
 */

/** `from` imports `to` (workspace-relative files, or package directories for Go). */
export interface ImportEdge {
  from: string
  to: string
  /** Only types cross this edge (`import type`, `export type … from`, `import('x').T`). */
  typeOnly?: boolean
}

/** One file (or package) that reaches a changed one through imports. */
export interface Importer {
  file: string
  /** Import hops to the nearest changed file: 1 imports it directly. */
  distance: number
  /** Only types connect it to the change (every nearest path has a type-only import on it). */
  typeOnly: boolean
}

/** The importers of a change, nearest first, capped. */
export interface ImpactList {
  /** The changed files (or packages) the list is about. */
  targets: string[]
  /** Nearest first, then by name; at most the cap. */
  importers: Importer[]
  /** All importers found (more than `importers.length` when capped). */
  total: number
  /** What the nodes are: files (TypeScript, Python) or packages (Go directories). */
  noun: 'file' | 'package'
}

/**
 * Breadth-first over the reversed graph from `targets`: every node that
 * imports a target, directly or through others, with its hop count. The
 * targets themselves are never listed.
 */
export function findImporters(edges: Iterable<ImportEdge>, targets: readonly string[], max: number, noun: ImpactList['noun'] = 'file'): ImpactList {
  const importersOf = new Map<string, { from: string; typeOnly: boolean }[]>()
  for (const e of edges) {
    if (e.from === e.to) continue
    let list = importersOf.get(e.to)
    if (!list) importersOf.set(e.to, list = [])
    list.push({ from: e.from, typeOnly: !!e.typeOnly })
  }
  const seen = new Set(targets)
  const typeOnlyNode = new Map<string, boolean>()
  const found: Importer[] = []
  let layer = [...new Set(targets)]
  for (let distance = 1; layer.length; distance++) {
    // A node is type-only when every way it reaches the previous layer is a type-only edge or goes through a type-only node.
    const next = new Map<string, boolean>()
    for (const node of layer) {
      for (const { from, typeOnly } of importersOf.get(node) ?? []) {
        if (seen.has(from)) continue
        next.set(from, (next.get(from) ?? true) && (typeOnly || (typeOnlyNode.get(node) ?? false)))
      }
    }
    const ordered = [...next.keys()].sort()
    for (const file of ordered) {
      seen.add(file)
      typeOnlyNode.set(file, next.get(file)!)
      found.push({ file, distance, typeOnly: next.get(file)! })
    }
    layer = ordered
  }
  return { targets: [...new Set(targets)], importers: found.slice(0, Math.max(0, max)), total: found.length, noun }
}

/**
 * The line the model (and the notice) sees, e.g.
 * `impact: 4 files import src/money.ts (nearest first): src/cart.ts, src/format.ts (type-only), src/index.ts, src/checkout.ts (2 hops)`;
 * `… and N more` when capped. Undefined when nothing imports the targets.
 */
export function formatImpact(list: ImpactList): string | undefined {
  if (!list.total) return undefined
  const items = list.importers.map(i => {
    const notes = [i.distance > 1 ? `${i.distance} hops` : '', i.typeOnly ? 'type-only' : ''].filter(Boolean)
    return notes.length ? `${i.file} (${notes.join(', ')})` : i.file
  })
  const more = list.total - list.importers.length
  const subject = `${list.total} ${list.noun}${list.total === 1 ? '' : 's'} import${list.total === 1 ? 's' : ''}`
  return `impact: ${subject} ${list.targets.join(', ')} (nearest first): ${items.join(', ')}${more > 0 ? `, … and ${more} more` : ''}`
}
