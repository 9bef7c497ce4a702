import { dirname } from 'node:path'
import { toPosixRelative } from 'dsh-common'
import { runRecorded, whyNotJudged } from '../../run.ts'
import type { Change, CheckIO, ImpactSource } from '../../types.ts'
import { findImporters, type ImpactList, type ImportEdge } from '../../impact.ts'

/** `go list` line format: import path, directory, then the package's imports (code and tests). */
const FORMAT = '{{.ImportPath}}\t{{.Dir}}\t{{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}'

/**
 * Go change impact: the module's packages that import the edited file's
 * package (directly, from their tests, or through other packages), from
 * `go list`. Nodes are package directories, workspace-relative (`.` for the
 * module root).
 */
export class GoImpact implements ImpactSource {
  constructor(private readonly root: string) {}

  async importers(change: Change, max: number, io: CheckIO): Promise<ImpactList | undefined> {
    const dirs = [...new Set(change.files.filter(f => f.endsWith('.go')).map(f => dirname(f) || '.'))]
    if (!dirs.length) return undefined
    const r = await runRecorded('impact', ['go', 'list', '-e', '-f', FORMAT, './...'], this.root, io)
    if (r.outcome !== 'pass') throw new Error(whyNotJudged('go list', r, io.timeoutMs))
    return findImporters(parseGoImports(this.root, r.stdout), dirs, max, 'package')
  }
}

/** Edges between the module's own packages (by directory) from `go list` output in {@link FORMAT}. */
function parseGoImports(root: string, stdout: string): ImportEdge[] {
  const rows = stdout.split('\n').filter(Boolean).map(line => {
    const [importPath, dir, imports] = line.split('\t')
    return { importPath: importPath!, dir: toPosixRelative(root, dir ?? '') || '.', imports: (imports ?? '').split(' ').filter(Boolean) }
  })
  const dirOf = new Map(rows.map(r => [r.importPath, r.dir]))
  const edges: ImportEdge[] = []
  for (const row of rows) {
    for (const imported of new Set(row.imports)) {
      const to = dirOf.get(imported)
      if (to !== undefined) edges.push({ from: row.dir, to })
    }
  }
  return edges
}
