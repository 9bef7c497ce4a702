import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'
import { listPackages, listSourceFiles, relPath, type WorkspacePackage } from './workspace.ts'

/**
 * Event declarations, found with the TypeScript parser (not regexes):
 * - Cordis events: members of `interface Events` inside
 *   `declare module '@deepseek-ai/cordis' { … }`; the mode is the JSDoc
 *   `@mode` tag of the member.
 * - Session-log events: members of `interface SessionEventMap`, at the top
 *   level of the log package (`dsh-session`) or inside
 *   `declare module 'dsh-session' { … }`; their mode is `log`.
 */

export type EventKind = 'cordis' | 'log'

/** Dispatch modes a Cordis event may document; `log` is the mode of session-log events. */
const CORDIS_MODES = ['emit', 'parallel', 'serial', 'waterfall', 'bail'] as const
const LOG_MODE = 'log'

export interface EventDeclaration {
  name: string
  kind: EventKind
  /** `@mode` of a Cordis event (undefined when the tag is missing); `log` for log events. */
  mode: string | undefined
  /** File relative to the root, POSIX separators. */
  file: string
  line: number
  /** Name of the package whose source declares it. */
  packageName: string
  /** The JSDoc text of the declaration, tags left out ('' when there is none). */
  doc: string
}

export interface DeclarationScanOptions {
  /** Module names whose `interface Events` declares Cordis events. */
  cordisModules?: readonly string[]
  /** The package that owns `SessionEventMap`. */
  logModule?: string
}

const DEFAULT_SCAN: Required<DeclarationScanOptions> = {
  cordisModules: ['@deepseek-ai/cordis'],
  logModule: 'dsh-session',
}

/** Every event declared in `<root>/packages/*\/src`. */
export function scanEventDeclarations(root: string, options: DeclarationScanOptions = {}, packages: WorkspacePackage[] = listPackages(root)): EventDeclaration[] {
  const declarations: EventDeclaration[] = []
  for (const pkg of packages) {
    for (const file of listSourceFiles(join(pkg.dir, 'src'))) {
      declarations.push(...declarationsInSource(relPath(root, file), readFileSync(file, 'utf8'), pkg.name, options))
    }
  }
  return declarations
}

/** Event declarations in one source text. */
export function declarationsInSource(file: string, text: string, packageName: string, options: DeclarationScanOptions = {}): EventDeclaration[] {
  const opts = { ...DEFAULT_SCAN, ...options }
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const found: EventDeclaration[] = []

  const collect = (iface: ts.InterfaceDeclaration, kind: EventKind) => {
    for (const member of iface.members) {
      const name = memberName(member)
      if (name === undefined) continue
      const line = source.getLineAndCharacterOfPosition(member.getStart(source)).line + 1
      const mode = kind === 'log' ? LOG_MODE : modeTag(member)
      found.push({ name, kind, mode, file, line, packageName, doc: docText(member) })
    }
  }

  const visitModuleBody = (body: ts.ModuleBlock, moduleName: string) => {
    for (const statement of body.statements) {
      if (!ts.isInterfaceDeclaration(statement)) continue
      if (opts.cordisModules.includes(moduleName) && statement.name.text === 'Events') collect(statement, 'cordis')
      if (moduleName === opts.logModule && statement.name.text === 'SessionEventMap') collect(statement, 'log')
    }
  }

  for (const statement of source.statements) {
    if (ts.isModuleDeclaration(statement) && ts.isStringLiteral(statement.name) && statement.body && ts.isModuleBlock(statement.body)) {
      visitModuleBody(statement.body, statement.name.text)
    } else if (ts.isInterfaceDeclaration(statement) && statement.name.text === 'SessionEventMap' && packageName === opts.logModule) {
      collect(statement, 'log')
    }
  }
  return found
}

function memberName(member: ts.TypeElement): string | undefined {
  const name = member.name
  if (!name) return undefined
  if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name)) return name.text
  return undefined
}

function docText(member: ts.Node): string {
  const docs = (member as ts.Node & { jsDoc?: ts.JSDoc[] }).jsDoc ?? []
  return docs.map(d => ts.getTextOfJSDocComment(d.comment) ?? '').join(' ').replace(/\s+/g, ' ').trim()
}

function modeTag(member: ts.Node): string | undefined {
  for (const tag of ts.getJSDocTags(member)) {
    if (tag.tagName.text !== 'mode') continue
    const text = ts.getTextOfJSDocComment(tag.comment)?.trim()
    return text ? text.split(/\s+/)[0] : ''
  }
  return undefined
}

/** What is wrong with the declarations themselves: a missing or unknown `@mode`, or two declarations of one event that disagree. */
export function declarationProblems(declarations: readonly EventDeclaration[]): string[] {
  const problems: string[] = []
  const byName = new Map<string, EventDeclaration>()
  for (const d of declarations) {
    const where = `${d.file}:${d.line}`
    if (d.kind === 'cordis' && d.mode === undefined) {
      problems.push(`${where}: \`${d.name}\` has no @mode tag (add "@mode ${CORDIS_MODES.join('|')}" to its JSDoc)`)
    } else if (d.kind === 'cordis' && !(CORDIS_MODES as readonly string[]).includes(d.mode ?? '')) {
      problems.push(`${where}: \`${d.name}\` has unknown @mode "${d.mode}" (expected one of ${CORDIS_MODES.join(', ')})`)
    }
    const first = byName.get(d.name)
    if (!first) {
      byName.set(d.name, d)
    } else if (first.mode !== d.mode && d.mode !== undefined && first.mode !== undefined) {
      problems.push(`${where}: \`${d.name}\` is declared as ${d.mode} here but as ${first.mode} at ${first.file}:${first.line}`)
    }
  }
  return problems
}

/** One entry per event name (the first declaration wins; `declarationProblems` reports disagreements). */
export function uniqueEvents(declarations: readonly EventDeclaration[]): Map<string, EventDeclaration> {
  const map = new Map<string, EventDeclaration>()
  for (const d of declarations) if (!map.has(d.name) || map.get(d.name)!.mode === undefined) map.set(d.name, d)
  return map
}
