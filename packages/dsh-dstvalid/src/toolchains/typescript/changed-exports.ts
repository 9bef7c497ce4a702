/**
 * The exported names of a module whose declaration a write changed: gone,
 * added, or declared by different text (a rename, a new signature, a type
 * made narrower). Syntax only, on the two source files a type-check already
 * parsed; an importer that mentions one of them is the likeliest to break,
 * so it is checked first.
 */
import type * as TS from 'typescript'

/** Exported name → the text of what declares it (the statement, or the export specifier). */
function exportsOf(ts: typeof TS, sf: TS.SourceFile): Map<string, string> {
  const out = new Map<string, string>()
  const add = (name: string, node: TS.Node) => out.set(name, (out.get(name) ?? '') + node.getText(sf))
  for (const statement of sf.statements) {
    const exported = ts.canHaveModifiers(statement) && ts.getModifiers(statement)?.some(m => m.kind === ts.SyntaxKind.ExportKeyword)
    if (ts.isExportDeclaration(statement) && statement.exportClause && ts.isNamedExports(statement.exportClause)) {
      for (const spec of statement.exportClause.elements) add(spec.name.text, statement)
    } else if (ts.isExportAssignment(statement)) {
      add('default', statement)
    } else if (exported && ts.isVariableStatement(statement)) {
      for (const d of statement.declarationList.declarations) if (ts.isIdentifier(d.name)) add(d.name.text, statement)
    } else if (exported && 'name' in statement && statement.name && ts.isIdentifier(statement.name as TS.Node)) {
      // Functions (each overload adds its text), classes, interfaces, type aliases, enums, namespaces.
      add((statement.name as TS.Identifier).text, statement)
    }
  }
  return out
}

export function changedExports(ts: typeof TS, before: TS.SourceFile | undefined, after: TS.SourceFile): string[] {
  if (!before) return []
  const old = exportsOf(ts, before)
  const now = exportsOf(ts, after)
  const names = new Set<string>()
  for (const [name, text] of old) if (now.get(name) !== text) names.add(name)
  for (const name of now.keys()) if (!old.has(name)) names.add(name)
  return [...names]
}

/** Whether `text` mentions one of `names` as a whole word. */
export function mentionsAny(text: string, names: readonly string[]): boolean {
  return names.some(name => {
    for (let at = text.indexOf(name); at >= 0; at = text.indexOf(name, at + 1)) {
      const before = text[at - 1]
      const after = text[at + name.length]
      if (!(before && /[\w$]/.test(before)) && !(after && /[\w$]/.test(after))) return true
    }
    return false
  })
}
