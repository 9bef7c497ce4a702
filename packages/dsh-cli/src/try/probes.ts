import { basename, dirname, posix } from 'node:path'
import ts from 'typescript'
import type { Language, ModuleInfo } from './sources.ts'

/** What a probe expects of the guard: a harmless write is kept, a breaking one rolled back. */
export type Expected = 'kept' | 'rolled back'

/** One probe edit, or why it could not be made on this project. */
export interface Probe {
  id: 'comment' | 'body' | 'rename' | 'behaviour' | 'syntax' | 'new-file'
  /** What the edit does, for the table. */
  title: string
  expect: Expected
  /** The tool call that makes it (through the guard). */
  call?: { name: 'edit_file' | 'write_file'; arguments: Record<string, string> }
  /** Why the probe could not be made. */
  missing?: string
}

/** A function of the module with a block body: where its body starts and whether tests or importers name it. */
interface Fn {
  name: string
  /** Offset just after the body's `{` (TypeScript, Go) or of the first body line (Python). */
  bodyAt: number
  /** Indentation of the body's statements. */
  indent: string
  /** Offset and length of the name in the declaration (for the rename). */
  nameAt: number
  exported: boolean
}

const TITLES: Record<Probe['id'], string> = {
  comment: 'a comment in the most-imported module',
  body: 'a body-only edit',
  rename: 'an export renamed, breaking its importers',
  behaviour: 'a behaviour change its tests catch',
  syntax: 'a syntax error',
  'new-file': 'a new file with a type error',
}

/**
 * The fixed probes, derived from the project itself: `module` is its
 * most-imported source module (or the one asked for), `read` reads a
 * workspace-relative file. `choice.fn`: the function the comment, body-only
 * and behaviour probes are made on (default: the module's first function,
 * and for the behaviour probe the first its tests name); `choice.asked`:
 * the module was asked for (`--module`, `--function`), not ranked. A probe that cannot be
 * made says why (no importers, no tests, no function).
 */
export function deriveProbes(language: Language, module: ModuleInfo | undefined, read: (file: string) => string, choice: { fn?: string; asked?: boolean } = {}): Probe[] {
  const { fn } = choice
  const missing = (id: Probe['id'], why: string): Probe => ({ id, title: TITLES[id], expect: id === 'comment' || id === 'body' ? 'kept' : 'rolled back', missing: why })
  const ids: Probe['id'][] = ['comment', 'body', 'rename', 'behaviour', 'syntax', 'new-file']
  if (!module) return ids.map(id => missing(id, 'no source module is imported by another file'))
  const path = module.file
  const text = read(path)
  const fns = functionsOf(language, path, text)
  const edit = (id: Probe['id'], at: number, remove: number, insert: string): Probe => ({
    id, title: `${id === 'comment' && choice.asked ? 'a comment in the module asked for' : TITLES[id]} (${path})`, expect: id === 'comment' || id === 'body' ? 'kept' : 'rolled back',
    call: { name: 'edit_file', arguments: { path, ...uniqueEdit(text, at, remove, insert) } },
  })
  const probes: Probe[] = []
  const mark = language === 'python' ? '#' : '//'
  const named = fn === undefined ? undefined : fns.find(f => f.name === fn)
  if (fn !== undefined && !named) return ids.map(id => missing(id, `no function \`${fn}\` with a body in ${path}`))
  const first = named ?? fns[0]
  const lineStart = (at: number) => text.lastIndexOf('\n', at - 1) + 1
  probes.push(first
    ? edit('comment', lineStart(first.nameAt), 0, `${mark} dsh try: a comment\n`)
    : edit('comment', text.length, 0, `${text.endsWith('\n') ? '' : '\n'}${mark} dsh try: a comment\n`))

  const noop = language === 'typescript' ? 'void 0' : language === 'go' ? '_ = 0' : '_dsh_try = None'
  probes.push(first ? edit('body', first.bodyAt, 0, bodyLine(language, first, noop)) : missing('body', `no function with a body in ${path}`))

  const imported = (candidate: Fn, files: readonly string[]) => files.some(f => {
    try {
      return new RegExp(`\\b${candidate.name}\\b`).test(read(f))
    } catch {
      return false
    }
  })
  const nonTest = module.importers.filter(f => !module.tests.includes(f))
  const renamed = fns.find(f => f.exported && imported(f, nonTest)) ?? fns.find(f => f.exported && imported(f, module.importers))
  const suffix = language === 'python' ? '_dsh_try' : 'DshTry'
  probes.push(renamed
    ? { ...edit('rename', renamed.nameAt, renamed.name.length, renamed.name + suffix), title: `${TITLES.rename} (\`${renamed.name}\` in ${path})` }
    : missing('rename', module.importers.length ? `no exported function of ${path} is named by its importers` : `nothing imports ${path}`))

  // A function its own test files name; else one named by a test that reaches the module through others (ufo's tests import `src/index.ts`).
  const tested = named ?? fns.find(f => f.exported && imported(f, module.tests)) ?? fns.find(f => f.exported && imported(f, module.reachedBy))
  const fail = language === 'typescript' ? "if (Date.now() > 0) throw new Error('dsh try: a behaviour change')"
    : language === 'go' ? 'if true {\n\t\tpanic("dsh try: a behaviour change")\n\t}'
      : 'if True:\n    raise RuntimeError("dsh try: a behaviour change")'
  probes.push(tested
    ? { ...edit('behaviour', tested.bodyAt, 0, bodyLine(language, tested, fail)), title: `${TITLES.behaviour} (\`${tested.name}\` throws)` }
    : missing('behaviour', module.reachedBy.length ? `no function of ${path} is named by the test files that import it` : `no test file imports ${path}, directly or through other modules`))

  const broken = language === 'typescript' ? 'export const dshTry = (\n' : language === 'go' ? 'func dshTry(\n' : 'def dsh_try(:\n'
  probes.push(edit('syntax', text.length, 0, `${text.endsWith('\n') ? '' : '\n'}${broken}`))

  if (language === 'python') {
    probes.push(missing('new-file', 'the guard runs no Python type-checker'))
  } else {
    const dir = dirname(path)
    const file = language === 'go' ? posix.join(dir, 'dsh_try_probe.go') : posix.join(dir, `dsh-try-probe${path.endsWith('.tsx') ? '.tsx' : '.ts'}`)
    const content = language === 'go'
      ? `package ${/^package\s+(\w+)/m.exec(text)?.[1] ?? basename(dir)}\n\nvar dshTryProbe int = "not a number"\n`
      : "export const dshTryProbe: number = 'not a number'\n"
    probes.push({ id: 'new-file', title: `${TITLES['new-file']} (${file})`, expect: 'rolled back', call: { name: 'write_file', arguments: { path: file, content } } })
  }
  return probes
}

/** The names of the functions with a body in a module's text, in order (what `fn` of {@link deriveProbes} may name). */
export function functionNames(language: Language, path: string, text: string): string[] {
  return functionsOf(language, path, text).map(f => f.name)
}

/** A statement inserted as the first of a body, on its own line with the body's indentation. */
function bodyLine(language: Language, fn: Fn, statement: string): string {
  const lines = statement.split('\n').map((l, i) => (i === 0 ? l : l.replace(/^ {4}/, fn.indent + (language === 'python' ? '    ' : ''))))
  return language === 'python' ? `${fn.indent}${lines.join('\n')}\n` : `\n${fn.indent}${lines.join('\n')}`
}

/** An `edit_file` replacement of `remove` characters at `at` by `insert`, its `old_string` grown until it matches once. */
function uniqueEdit(text: string, at: number, remove: number, insert: string): { old_string: string; new_string: string } {
  for (let k = 8; ; k *= 2) {
    const from = Math.max(0, at - k)
    const to = Math.min(text.length, at + remove + k)
    const old = text.slice(from, to)
    if (text.indexOf(old) === text.lastIndexOf(old) || (from === 0 && to === text.length)) {
      return { old_string: old, new_string: text.slice(from, at) + insert + text.slice(at + remove, to) }
    }
  }
}

function functionsOf(language: Language, path: string, text: string): Fn[] {
  if (language === 'typescript') return tsFunctions(path, text)
  if (language === 'go') return goFunctions(text)
  return pyFunctions(text)
}

/** Top-level functions (declarations, and `const f = (…) => {…}` / `function` expressions) with block bodies. */
function tsFunctions(path: string, text: string): Fn[] {
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, path.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS)
  const out: Fn[] = []
  const exported = (node: ts.Node) => !!ts.getCombinedModifierFlags(node as ts.Declaration) && (ts.getCombinedModifierFlags(node as ts.Declaration) & ts.ModifierFlags.Export) !== 0
  const push = (name: ts.Identifier, body: ts.Node | undefined, isExported: boolean) => {
    if (!body || !ts.isBlock(body)) return
    const statement = body.statements[0]
    const indent = statement ? /^[ \t]*/.exec(text.slice(text.lastIndexOf('\n', statement.getStart(sf)) + 1))![0] : '  '
    out.push({ name: name.text, bodyAt: body.getStart(sf) + 1, indent, nameAt: name.getStart(sf), exported: isExported })
  }
  for (const statement of sf.statements) {
    if (ts.isFunctionDeclaration(statement) && statement.name) push(statement.name, statement.body, exported(statement))
    if (ts.isVariableStatement(statement)) {
      for (const d of statement.declarationList.declarations) {
        const init = d.initializer
        if (ts.isIdentifier(d.name) && init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init))) push(d.name, init.body, exported(statement))
      }
    }
  }
  return out
}

/** Top-level `func Name(…) … {` declarations (gofmt layout: the body opens at the end of the signature's last line). */
function goFunctions(text: string): Fn[] {
  const out: Fn[] = []
  for (const m of text.matchAll(/^func (\w+)(?:\[[^\]]*\])?\([^)]*\)[^{\n]*\{$/gm)) {
    const name = m[1]!
    out.push({ name, bodyAt: m.index! + m[0].length, indent: '\t', nameAt: m.index! + 5, exported: /^[A-Z]/.test(name) })
  }
  return out
}

/** Top-level `def name(…):` whose body starts on the next line and not with a docstring. */
function pyFunctions(text: string): Fn[] {
  const out: Fn[] = []
  for (const m of text.matchAll(/^(?:async )?def (\w+)\([^)]*\)[^:\n]*:[ \t]*\n([ \t]+)(\S)/gm)) {
    if (m[3] === '"' || m[3] === "'") continue
    const name = m[1]!
    const bodyAt = m.index! + m[0].length - m[2]!.length - 1
    out.push({ name, bodyAt, indent: m[2]!, nameAt: m.index! + m[0].indexOf(name), exported: !name.startsWith('_') })
  }
  return out
}
