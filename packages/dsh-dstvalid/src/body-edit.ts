/**
 * Whether an edit of a JavaScript or TypeScript module is confined to
 * function bodies, and which functions: decided on the TypeScript syntax
 * tree of the file before and after (this package's own TypeScript, parse
 * only; loaded on first use). Everything outside function bodies — imports,
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

/** Load the parser now, in the background (a session starts), so the first judged edit does not wait for it. */
export function preloadParser(): void {
  void typescript().catch(() => {
    // Loaded again (and its error reported) by the first edit that needs it.
    loading = undefined
  })
}

type FunctionNode = TS.FunctionLikeDeclaration & { body: TS.Node }

/** Anonymous-function wrappers V8's naming looks through (and the ones the transform strips). */
function unwrap(ts: typeof TS, node: TS.Node): TS.Node {
  let n = node
  while (n.parent && (ts.isParenthesizedExpression(n.parent) || ts.isAsExpression(n.parent) || ts.isSatisfiesExpression(n.parent) || ts.isTypeAssertionExpression(n.parent) || ts.isNonNullExpression(n.parent))) n = n.parent
  return n
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
  if (ts.isVariableDeclaration(parent) && parent.initializer === at && ts.isIdentifier(parent.name)) return parent.name.text
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

/** The tokens of `node` (comments and JSDoc left out), each body of `holes` as one marker. */
function skeleton(ts: typeof TS, sf: TS.SourceFile, node: TS.Node, holes: ReadonlySet<TS.Node>): string {
  const out: string[] = []
  const visit = (n: TS.Node): void => {
    if (holes.has(n)) {
      out.push('\u0001body')
      return
    }
    if (n.kind >= ts.SyntaxKind.FirstJSDocNode && n.kind <= ts.SyntaxKind.LastJSDocNode) return
    const children = n.getChildren(sf)
    if (!children.length) {
      if (n.kind !== ts.SyntaxKind.EndOfFileToken) out.push(n.getText(sf))
      return
    }
    for (const c of children) visit(c)
  }
  visit(node)
  return out.join('\u0000')
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
  const ts = await typescript()
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
 * Every name V8 may report for a function of this module, as this file
 * predicts them, plus what V8 names on its own (the module's code, class
 * member initialisers). A recorded name outside this set means the
 * prediction is wrong for this file (a transform renamed something): its
 * map is not used.
 */
export async function predictedNames(file: string, text: string): Promise<Set<string> | undefined> {
  const ts = await typescript()
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
  return names
}
