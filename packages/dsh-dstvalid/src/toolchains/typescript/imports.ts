import { relative, sep } from 'node:path'
import { isInside } from 'dsh-common'
import type * as TS from 'typescript'
import type { ImportEdge } from '../../impact.ts'

/** The program's own resolution of a specifier (present in TypeScript 5.x, not in its public typings). */
interface ResolvingProgram {
  getResolvedModule?(file: TS.SourceFile, moduleName: string, mode: TS.ResolutionMode): TS.ResolvedModuleWithFailedLookupLocations | undefined
}

/** Every module specifier a file uses (TypeScript keeps them on `imports`, outside its public typings). */
interface SourceFileWithImports {
  imports?: readonly TS.StringLiteralLike[]
}

/** Whether a module specifier brings in types only. */
function isTypeOnlyUse(ts: typeof TS, literal: TS.StringLiteralLike): boolean {
  const parent = literal.parent
  if (!parent) return false
  if (ts.isImportDeclaration(parent)) {
    const clause = parent.importClause
    if (!clause) return false
    if (clause.isTypeOnly) return true
    const named = clause.namedBindings
    return !clause.name && !!named && ts.isNamedImports(named) && named.elements.length > 0 && named.elements.every(e => e.isTypeOnly)
  }
  if (ts.isExportDeclaration(parent)) {
    if (parent.isTypeOnly) return true
    const clause = parent.exportClause
    return !!clause && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every(e => e.isTypeOnly)
  }
  // `import('../../typescript/x').T` in a type position.
  return ts.isLiteralTypeNode(parent) && !!parent.parent && ts.isImportTypeNode(parent.parent)
}

/** Static specifiers of a file, for a TypeScript without `SourceFile.imports`. */
function topLevelSpecifiers(ts: typeof TS, sf: TS.SourceFile): TS.StringLiteralLike[] {
  const out: TS.StringLiteralLike[] = []
  for (const s of sf.statements) {
    if ((ts.isImportDeclaration(s) || ts.isExportDeclaration(s)) && s.moduleSpecifier && ts.isStringLiteralLike(s.moduleSpecifier)) out.push(s.moduleSpecifier)
    else if (ts.isImportEqualsDeclaration(s) && ts.isExternalModuleReference(s.moduleReference) && ts.isStringLiteralLike(s.moduleReference.expression)) out.push(s.moduleReference.expression)
  }
  return out
}

/**
 * The workspace's own import graph, as the program resolved it: one edge per
 * (importer, imported) pair of files inside `root`, outside `node_modules`.
 * Re-exports (`export … from`) are imports; an edge is type-only when every
 * use of it is.
 */
export function programImports(ts: typeof TS, program: TS.Program, root: string, host: TS.ModuleResolutionHost): ImportEdge[] {
  const options = program.getCompilerOptions()
  const resolving = program as TS.Program & ResolvingProgram
  const cache = ts.createModuleResolutionCache(root, f => f, options)
  const rel = (f: string) => relative(root, f).split(sep).join('/')
  const inside = (f: string) => f !== root && isInside(root, f) && !relative(root, f).split(sep).includes('node_modules')
  const edges = new Map<string, ImportEdge>()
  for (const sf of program.getSourceFiles()) {
    if (!inside(sf.fileName)) continue
    const from = rel(sf.fileName)
    const specifiers = (sf as TS.SourceFile & SourceFileWithImports).imports ?? topLevelSpecifiers(ts, sf)
    for (const literal of specifiers) {
      const mode = program.getModeForUsageLocation(sf, literal)
      const resolved = resolving.getResolvedModule?.(sf, literal.text, mode)?.resolvedModule
        ?? ts.resolveModuleName(literal.text, sf.fileName, options, host, cache, undefined, mode).resolvedModule
      if (!resolved || resolved.isExternalLibraryImport || !inside(resolved.resolvedFileName)) continue
      const to = rel(resolved.resolvedFileName)
      const key = `${from}\u0000${to}`
      const typeOnly = isTypeOnlyUse(ts, literal)
      const had = edges.get(key)
      edges.set(key, { from, to, typeOnly: had ? !!had.typeOnly && typeOnly : typeOnly })
    }
  }
  return [...edges.values()]
}
