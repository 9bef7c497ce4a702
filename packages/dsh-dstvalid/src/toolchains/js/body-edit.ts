/**
 * Whether an edit of a JavaScript or TypeScript module is confined to
 * function bodies, and which functions: decided on the TypeScript syntax
 * tree of the file before and after (parse only). The parse runs where a
 * TypeScript is loaded already: in an idle type-check worker that offered
 * itself ({@link offerParser}: the workspace's own TypeScript, warm there),
 * else in this thread with this package's own TypeScript, loaded on first
 * use (no worker, or it is busy with a check) — one TypeScript per host in
 * the usual case. Everything outside function bodies — imports,
 * exports, top-level statements, module initialisers, class fields,
 * signatures, types — must be token for token the same; comments and
 * whitespace do not count.
 *
 * Functions are named the way V8 names them in its coverage (the names the
 * calls recorder records): a declaration's or named expression's own name,
 * the variable, property, class field or assignment target an anonymous
 * function is given to, `get x` / `set x` for accessors, the class's name
 * for its constructor. A changed function V8 gives no name to is stood for
 * by the nearest enclosing function that has one (it ran whenever the inner
 * one was created).
 */
import type * as TS from 'typescript'

/** The outcome for one file: the names of the changed functions, or why the edit is not body-only. */
export type BodyEdit = { kind: 'body'; functions: string[] } | { kind: 'other'; reason: string }

let loading: Promise<typeof TS> | undefined
function typescript(): Promise<typeof TS> {
  loading ??= import('typescript').then(m => m.default)
  return loading
}

/** One question for the parser; answered by {@link parseWith} wherever TypeScript is. */
export type ParseRequest =
  | { op: 'bodyEdit'; file: string; before: string; after: string }
  | { op: 'commentOnly'; file: string; before: string; after: string }
  | { op: 'predictedNames'; file: string; text: string }

/** A thread that holds a TypeScript and parses for this one: its answer, or undefined when it cannot now (busy, not started, gone). */
export interface ParserHost {
  parse(request: ParseRequest): Promise<{ value: unknown } | undefined>
}

const hosts = new Set<ParserHost>()

/** A type-check worker offers its TypeScript for the parse (while it is alive). */
export function offerParser(host: ParserHost): void {
  hosts.add(host)
}

export function withdrawParser(host: ParserHost): void {
  hosts.delete(host)
}

/** Whether `ts` has every API the parse uses (TypeScript 4.9 on). */
export function canParseWith(ts: typeof TS): boolean {
  return typeof ts.isSatisfiesExpression === 'function' && typeof ts.getShebang === 'function'
}

/** Answer `request` with `ts`, in whatever thread holds it. */
export function parseWith(ts: typeof TS, request: ParseRequest): unknown {
  if (request.op === 'bodyEdit') return bodyEditWith(ts, request.file, request.before, request.after)
  if (request.op === 'commentOnly') return commentOnlyWith(ts, request.file, request.before, request.after)
  return predictedNamesWith(ts, request.file, request.text)
}

async function parsed(request: ParseRequest): Promise<unknown> {
  for (const host of hosts) {
    const answer = await host.parse(request)
    if (answer) return answer.value
  }
  return parseWith(await typescript(), request)
}

/**
 * Load this thread's parser now, in the background (a session starts), so
 * the first judged edit does not wait for it — unless a type-check worker
 * will parse (one offered itself by the time the session's checks started).
 */
export function preloadParser(): void {
  setImmediate(() => {
    if (hosts.size) return
    void typescript().catch(() => {
      // Loaded again (and its error reported) by the first edit that needs it.
      loading = undefined
    })
  })
}

type FunctionNode = TS.FunctionLikeDeclaration & { body: TS.Node }

/** Anonymous-function wrappers V8's naming looks through (and the ones the transform strips). */
function unwrap(ts: typeof TS, node: TS.Node): TS.Node {
  let n = node
  while (n.parent && (ts.isParenthesizedExpression(n.parent) || ts.isAsExpression(n.parent) || ts.isSatisfiesExpression(n.parent) || ts.isTypeAssertionExpression(n.parent) || ts.isNonNullExpression(n.parent))) n = n.parent
  return n
}

/**
 * A function that is a branch of a conditional a variable is initialised with: V8 names it after the variable
 * (fp-ts: `const isDataFirst = typeof arity === 'number' ? (args) => … : arity` runs as \`isDataFirst\`; in a
 * property's value it would be \`object.property\`, not predicted here).
 */
function conditionalVariable(ts: typeof TS, at: TS.Node): string | undefined {
  let n = at
  while (n.parent && ts.isConditionalExpression(n.parent) && (n.parent.whenTrue === n || n.parent.whenFalse === n)) n = unwrap(ts, n.parent)
  if (n === at || !n.parent || !ts.isVariableDeclaration(n.parent) || n.parent.initializer !== n || !ts.isIdentifier(n.parent.name)) return undefined
  return n.parent.name.text
}

function propertyName(ts: typeof TS, name: TS.PropertyName | undefined): string | undefined {
  if (!name) return undefined
  if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name) || ts.isPrivateIdentifier(name)) return name.text
  return undefined
}

/** The name V8 gives a function node, or undefined when it gives none this module can predict. */
function v8Name(ts: typeof TS, fn: FunctionNode): string | undefined {
  if (ts.isFunctionDeclaration(fn)) return fn.name?.text
  if (ts.isMethodDeclaration(fn)) return propertyName(ts, fn.name)
  if (ts.isGetAccessorDeclaration(fn)) return prefixed('get', propertyName(ts, fn.name))
  if (ts.isSetAccessorDeclaration(fn)) return prefixed('set', propertyName(ts, fn.name))
  if (ts.isConstructorDeclaration(fn)) return ts.isClassDeclaration(fn.parent) ? fn.parent.name?.text : undefined
  if (ts.isFunctionExpression(fn) && fn.name) return fn.name.text
  // An anonymous function expression or arrow: named after what it is given to.
  const at = unwrap(ts, fn)
  const parent = at.parent
  if (!parent) return undefined
  if (ts.isConditionalExpression(parent)) return conditionalVariable(ts, at)
  if (ts.isVariableDeclaration(parent) && parent.initializer === at && ts.isIdentifier(parent.name)) return parent.name.text
  // A parameter's or destructuring default (fp-ts: `g = () => true` runs as \`g\`).
  if ((ts.isParameter(parent) || ts.isBindingElement(parent)) && parent.initializer === at && ts.isIdentifier(parent.name)) return parent.name.text
  if ((ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && parent.initializer === at) return propertyName(ts, parent.name)
  if (ts.isBinaryExpression(parent) && parent.right === at && parent.operatorToken.kind === ts.SyntaxKind.EqualsToken) {
    if (ts.isIdentifier(parent.left)) return parent.left.text
    if (ts.isPropertyAccessExpression(parent.left) && /^[\w$.]+$/.test(parent.left.getText())) return parent.left.getText()
  }
  return undefined
}

function prefixed(prefix: string, name: string | undefined): string | undefined {
  return name === undefined ? undefined : `${prefix} ${name}`
}

function isFunctionWithBody(ts: typeof TS, node: TS.Node): node is FunctionNode {
  return (ts.isFunctionDeclaration(node) || ts.isFunctionExpression(node) || ts.isArrowFunction(node) || ts.isMethodDeclaration(node)
    || ts.isConstructorDeclaration(node) || ts.isGetAccessorDeclaration(node) || ts.isSetAccessorDeclaration(node)) && !!node.body
}

/** The functions with a body directly inside `node` (not inside another function's body). */
function functionsIn(ts: typeof TS, node: TS.Node): FunctionNode[] {
  const out: FunctionNode[] = []
  const visit = (n: TS.Node): void => {
    if (isFunctionWithBody(ts, n)) {
      out.push(n)
      // Its parameters and signature are its enclosing code's; a function inside them is too.
      for (const p of n.parameters) visit(p)
      return
    }
    n.forEachChild(visit)
  }
  node.forEachChild(visit)
  return out
}

/**
 * Comments that are not prose: they change what a tool does with the code
 * (the type-checker, the bundler or test runner, coverage, source maps, the
 * shell). Matched on a comment's text; `js` files also count every JSDoc
 * comment with a tag (with `checkJs` their `@type`/`@param`/… are the types).
 */
const DIRECTIVE = new RegExp([
  String.raw`@ts-`, // @ts-ignore, @ts-expect-error, @ts-nocheck, @ts-check
  String.raw`^///\s*<`, // /// <reference …>, <amd-module …>
  String.raw`[#@]\s*source(?:Mapping)?URL`,
  String.raw`[#@]__[A-Z_]+__`, // /*#__PURE__*/, @__NO_SIDE_EFFECTS__, …
  String.raw`@vite-ignore`,
  String.raw`webpack[A-Za-z]*\s*:`, // webpackChunkName: …
  String.raw`@jsx`, // @jsx, @jsxImportSource, @jsxFrag, @jsxRuntime
  String.raw`\b(?:istanbul|c8|v8|node:coverage)\s+(?:ignore|disable|enable|start|stop)`,
  String.raw`@(?:vitest|jest)-environment`,
  String.raw`@internal\b`, // stripInternal leaves it out of declarations
  String.raw`@flow\b`,
  String.raw`\beslint(?:-disable|-enable|-env)?\b`,
].join('|'))

/** Directives that apply to the lines after their own (`next N` lines for coverage ignores). */
const LINE_DIRECTIVE = /@ts-(?:ignore|expect-error)|\b(?:c8|v8)\s+ignore\s+next(?:\s+(\d+))?/

function isDirective(comment: string, js: boolean): boolean {
  return DIRECTIVE.test(comment) || (js && comment.startsWith('/**') && /(?:^|\s)@\w/.test(comment))
}

function isLeaf(ts: typeof TS, sf: TS.SourceFile, n: TS.Node): boolean {
  return n.kind === ts.SyntaxKind.EndOfFileToken || !n.getChildren(sf).length
}

/** The file's leaf tokens in order (JSDoc left out), with the line each starts on. */
function leavesOf(ts: typeof TS, sf: TS.SourceFile): { leaves: TS.Node[]; line: Map<TS.Node, number> } {
  const leaves: TS.Node[] = []
  const line = new Map<TS.Node, number>()
  const visit = (n: TS.Node): void => {
    if (n.kind >= ts.SyntaxKind.FirstJSDocNode && n.kind <= ts.SyntaxKind.LastJSDocNode) return
    if (isLeaf(ts, sf, n)) {
      line.set(n, sf.getLineAndCharacterOfPosition(n.getStart(sf)).line)
      leaves.push(n)
      return
    }
    for (const c of n.getChildren(sf)) visit(c)
  }
  visit(sf)
  return { leaves, line }
}

/**
 * The directive comments before `leaf` (in the trivia between it and the
 * token before it), each as its text; one that governs the lines after its
 * own (`@ts-expect-error`, `c8 ignore next 2`) with the tokens it governs,
 * counted from `leaf` (a reformat that moves code onto or off that line
 * changes what it governs).
 */
function directivesBefore(ts: typeof TS, sf: TS.SourceFile, leaf: TS.Node, file: { leaves: TS.Node[]; line: Map<TS.Node, number>; index: Map<TS.Node, number>; js: boolean }): string[] {
  if (leaf.kind === ts.SyntaxKind.JsxText || leaf.kind === ts.SyntaxKind.JsxTextAllWhiteSpaces) return []
  const out: string[] = []
  const text = sf.text
  // TypeScript splits the trivia at the first line break: the comments before it trail the token before, the rest lead this one.
  const ranges = [...ts.getTrailingCommentRanges(text, leaf.pos) ?? [], ...ts.getLeadingCommentRanges(text, leaf.pos) ?? []]
  for (const range of ranges.filter((r, i) => ranges.findIndex(o => o.pos === r.pos) === i)) {
    const comment = text.slice(range.pos, range.end)
    if (!isDirective(comment, file.js)) continue
    const lineDirective = LINE_DIRECTIVE.exec(comment)
    if (!lineDirective) {
      out.push(comment)
      continue
    }
    const own = sf.getLineAndCharacterOfPosition(range.pos).line
    const lines = sf.getLineStarts()
    let first = own + 1
    let last = own + Number(lineDirective[1] ?? 1)
    if (/@ts-/.test(lineDirective[0])) {
      // TypeScript's rule: the first line after it that is neither blank nor a `//` comment.
      while (first < lines.length && /^\s*(?:\/\/.*)?$/.test(text.slice(lines[first], lines[first + 1] ?? text.length).replace(/\r?\n$/, ''))) first++
      last = first
    }
    const at = file.index.get(leaf) ?? 0
    const governed = file.leaves.flatMap((l, i) => { const n = file.line.get(l)!; return n >= first && n <= last ? [i - at] : [] })
    out.push(`${comment}\u0002${governed.join(',')}`)
  }
  return out
}

/**
 * The tokens of `node` with the shape of its syntax tree (the kind of every
 * node: a line break that changes where a statement ends changes the tree),
 * comments and JSDoc left out except directive comments, each body of
 * `holes` as one marker.
 */
function skeleton(ts: typeof TS, sf: TS.SourceFile, node: TS.Node, holes: ReadonlySet<TS.Node>): string {
  const file = fileOf(ts, sf)
  const out: string[] = []
  const visit = (n: TS.Node): void => {
    if (holes.has(n)) {
      out.push('\u0001body')
      return
    }
    if (n.kind >= ts.SyntaxKind.FirstJSDocNode && n.kind <= ts.SyntaxKind.LastJSDocNode) return
    if (isLeaf(ts, sf, n)) {
      out.push(...directivesBefore(ts, sf, n, file))
      if (n.kind !== ts.SyntaxKind.EndOfFileToken) out.push(n.getText(sf))
      return
    }
    out.push(`\u0003${n.kind}`)
    for (const c of n.getChildren(sf)) visit(c)
    out.push('\u0004')
  }
  visit(node)
  return out.join('\u0000')
}

const files = new WeakMap<TS.SourceFile, { leaves: TS.Node[]; line: Map<TS.Node, number>; index: Map<TS.Node, number>; js: boolean }>()
function fileOf(ts: typeof TS, sf: TS.SourceFile) {
  let file = files.get(sf)
  if (!file) {
    const { leaves, line } = leavesOf(ts, sf)
    file = { leaves, line, index: new Map(leaves.map((l, i) => [l, i])), js: /\.[cm]?jsx?$/.test(sf.fileName) }
    files.set(sf, file)
  }
  return file
}

function bodiesOf(fns: readonly FunctionNode[]): Set<TS.Node> {
  return new Set(fns.map(f => f.body))
}

function parse(ts: typeof TS, file: string, text: string): TS.SourceFile | undefined {
  const kind = /\.[cm]?tsx$|\.jsx$/.test(file) ? ts.ScriptKind.TSX : /\.[cm]?js$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind)
  const diagnostics = (sf as TS.SourceFile & { parseDiagnostics?: readonly unknown[] }).parseDiagnostics
  return diagnostics?.length ? undefined : sf
}

/** The changed functions among `before`/`after` (paired by position: their enclosing skeletons are equal). */
function changedFunctions(ts: typeof TS, b: TS.SourceFile, a: TS.SourceFile, before: readonly FunctionNode[], after: readonly FunctionNode[], out: FunctionNode[]): void {
  for (let i = 0; i < before.length; i++) {
    const fb = before[i]!
    const fa = after[i]!
    if (skeleton(ts, b, fb.body, new Set()) === skeleton(ts, a, fa.body, new Set())) continue
    const innerB = functionsIn(ts, fb.body)
    const innerA = functionsIn(ts, fa.body)
    if (skeleton(ts, b, fb.body, bodiesOf(innerB)) !== skeleton(ts, a, fa.body, bodiesOf(innerA))) out.push(fb)
    else changedFunctions(ts, b, a, innerB, innerA, out)
  }
}

/** The name V8 reports for `fn`, or for the nearest enclosing function it names. */
function namedFunction(ts: typeof TS, fn: FunctionNode): string | undefined {
  for (let n: TS.Node | undefined = fn; n; n = n.parent) {
    if (isFunctionWithBody(ts, n)) {
      const name = v8Name(ts, n)
      if (name) return name
    }
  }
  return undefined
}

/**
 * Compare a module before and after an edit. `file` picks the syntax
 * (`.tsx`/`.jsx` with JSX). Not body-only: a parse error on either side, a
 * token changed outside every function body, or a changed function without
 * a name V8 reports (say, a callback at the top level of the module).
 */
export async function bodyEdit(file: string, before: string, after: string): Promise<BodyEdit> {
  return await parsed({ op: 'bodyEdit', file, before, after }) as BodyEdit
}

function bodyEditWith(ts: typeof TS, file: string, before: string, after: string): BodyEdit {
  const b = parse(ts, file, before)
  const a = parse(ts, file, after)
  if (!b || !a) return { kind: 'other', reason: `${file} does not parse` }
  const topB = functionsIn(ts, b)
  const topA = functionsIn(ts, a)
  if (skeleton(ts, b, b, bodiesOf(topB)) !== skeleton(ts, a, a, bodiesOf(topA))) return { kind: 'other', reason: `${file}: code outside function bodies changed` }
  const changed: FunctionNode[] = []
  changedFunctions(ts, b, a, topB, topA, changed)
  const names = new Set<string>()
  for (const fn of changed) {
    const name = namedFunction(ts, fn)
    if (name === undefined) return { kind: 'other', reason: `${file}: a function without a name changed at line ${b.getLineAndCharacterOfPosition(fn.getStart(b)).line + 1}` }
    names.add(name)
  }
  return { kind: 'body', functions: [...names] }
}

/**
 * Whether an edit of a JavaScript or TypeScript module changed nothing but
 * comments and whitespace, so that no check of the code can change its
 * outcome (no test, no type): `true`, or why not (a sentence naming the
 * file). The syntax trees before and after must be the same node for node
 * and token for token (a line break that moves where a statement ends — a
 * `return` before its value — is a change), and directive comments count as
 * code: `@ts-expect-error`/`@ts-ignore` (with the tokens on the line they
 * govern), `/// <reference>`, `//# sourceMappingURL`, `/*#__PURE__*\/`,
 * `/* @vite-ignore *\/`, webpack magic comments, `@jsx` pragmas,
 * `istanbul`/`c8`/`v8`/`node:coverage` ignores, `@vitest-environment`,
 * `@internal`, `eslint-…`, and in `.js`/`.jsx`/`.mjs`/`.cjs` files every
 * JSDoc comment with a tag (the types under `checkJs`); a changed `#!` line
 * too. A file either side cannot parse is not comment-only. `file` picks
 * the syntax, as for {@link bodyEdit}.
 */
export async function commentOnly(file: string, before: string, after: string): Promise<true | string> {
  if (!/\.[cm]?[jt]sx?$/.test(file)) return `${file} is not a JavaScript or TypeScript module`
  if (before === after) return true
  return await parsed({ op: 'commentOnly', file, before, after }) as true | string
}

function commentOnlyWith(ts: typeof TS, file: string, before: string, after: string): true | string {
  const b = parse(ts, file, before)
  const a = parse(ts, file, after)
  if (!b || !a) return `${file} does not parse`
  if (ts.getShebang(before) !== ts.getShebang(after)) return `${file}: its #! line changed`
  if (skeleton(ts, b, b, new Set()) === skeleton(ts, a, a, new Set())) return true
  // Why not: the first token, or directive comment before it, that differs.
  const fb = fileOf(ts, b)
  const fa = fileOf(ts, a)
  for (let i = 0; i < Math.min(fb.leaves.length, fa.leaves.length); i++) {
    const [x, y] = [fb.leaves[i]!, fa.leaves[i]!]
    const line = a.getLineAndCharacterOfPosition(y.getStart(a)).line + 1
    if (directivesBefore(ts, b, x, fb).join('\u0000') !== directivesBefore(ts, a, y, fa).join('\u0000')) return `${file}: a directive comment changed before line ${line}`
    if (x.getText(b) !== y.getText(a)) return `${file}: code changed at line ${line}`
  }
  return fb.leaves.length === fa.leaves.length ? `${file}: a line break changes how the code parses` : `${file}: code changed at its end`
}

/**
 * Every name V8 may report for a function of this module, as this file
 * predicts them, plus what V8 names on its own (the module's code, class
 * member initialisers) and what vite's SSR transform adds to a module with
 * exports: up to vite 6 (vitest 1 to 3) an accessor per export, `get(){ return
 * name }`, which every use of the export runs. A recorded name outside this
 * set means the prediction is wrong for this file (a transform renamed
 * something): its map is not used.
 */
export async function predictedNames(file: string, text: string): Promise<Set<string> | undefined> {
  return await parsed({ op: 'predictedNames', file, text }) as Set<string> | undefined
}

function predictedNamesWith(ts: typeof TS, file: string, text: string): Set<string> | undefined {
  const sf = parse(ts, file, text)
  if (!sf) return undefined
  const names = new Set(['', '<instance_members_initializer>', '<static_members_initializer>', '<static_initializer>'])
  const visit = (n: TS.Node): void => {
    if (isFunctionWithBody(ts, n)) {
      const name = v8Name(ts, n)
      if (name) names.add(name)
    }
    if (ts.isClassDeclaration(n) && n.name) names.add(n.name.text)
    n.forEachChild(visit)
  }
  visit(sf)
  const exported = (n: TS.Statement) => ts.isExportDeclaration(n) || ts.isExportAssignment(n) || (ts.canHaveModifiers(n) && !!ts.getModifiers(n)?.some(m => m.kind === ts.SyntaxKind.ExportKeyword))
  if (sf.statements.some(exported)) names.add('get')
  return names
}
