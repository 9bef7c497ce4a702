/**
 * Realistic TypeScript project layouts, generated small and deterministic,
 * for tests and benchmarks of dsh-dstvalid on the shapes real repositories
 * have (not the single-tsconfig demo):
 *
 * | kind | shape |
 * |---|---|
 * | `vite-app` | a `create-vite` TS template: solution `tsconfig.json` → `tsconfig.app.json` (src, DOM libs, tests beside the code) + `tsconfig.node.json` (vite.config.ts); vitest |
 * | `library` | solution `tsconfig.json` → `tsconfig.build.json` (composite, src) + `tsconfig.spec.json` (test, references build), both `extends` a base; NodeNext `.js` imports; vitest with 3 `test.projects` (`unit`, `node`, and `dom` on `happy-dom`, which is not installed: that project cannot start here) |
 * | `monorepo` | a pnpm workspace of 4 packages (`@mono/core` ← `@mono/model` ← `@mono/service` ← `@mono/app`), per-package `tsconfig.json` extending a root base, no root solution file; `workspace:` dependencies linked as pnpm does (`packages/<p>/node_modules/@mono/<dep>` symlinks), sources as package entries; one root vitest config |
 * | `jest` | a CommonJS project tested with jest + ts-jest (config in `package.json`'s `jest` key, or `jest.config.cjs` with `jestConfig: 'file'`), tests import `@jest/globals` |
 *
 * Every layout comes with ready-made edits (`edit_file` arguments) and new
 * files for the scenarios the guard must judge: a good edit, an export
 * rename that breaks importers, a syntax error in a widely imported file, a
 * behaviour change a test catches, a new file with a type error, a
 * test-first test file; the monorepo adds a broken cross-package import.
 * With `preexisting: true` the copy also has a file with a type error, a
 * failing test (and the library always has its vitest project that cannot
 * start), plus an unrelated good edit and an edit adding a new error.
 *
 * `node_modules` of the root is a symlink to `nodeModules` (default: this
 * repository's, which has typescript, vitest, jest, ts-jest, @jest/globals
 * and @types/node); nothing is downloaded.
 *
 *   tsx packages/dsh-testkit/src/layouts.ts <vite-app|library|monorepo|jest> <dir> [--preexisting]
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export type LayoutKind = 'vite-app' | 'library' | 'monorepo' | 'jest'
export const LAYOUT_KINDS: readonly LayoutKind[] = ['vite-app', 'library', 'monorepo', 'jest']

export interface LayoutOptions {
  /** Directory the root `node_modules` symlink points to (default: this repository's `node_modules`); `false`: no link. */
  nodeModules?: string | false
  /** Add pre-existing problems: a source file with a type error and a failing test. */
  preexisting?: boolean
  /** jest layout: config in `package.json` (default) or in `jest.config.cjs`. */
  jestConfig?: 'package' | 'file'
}

/** Arguments of the workspace `edit_file` tool. */
export interface Edit {
  path: string
  old_string: string
  new_string: string
}

/** Arguments of the workspace `write_file` tool. */
export interface NewFile {
  path: string
  content: string
}

export interface LayoutScenarios {
  /** A body refactor that changes nothing observable. */
  good: Edit
  /** Renames an export of `hub.file` without updating its importers. */
  renameExport: Edit
  /** A syntax error in `hub.file`. */
  syntaxError: Edit
  /** Type-checks, but a test of `behaviour.test` fails. */
  behaviour: Edit
  /** A new source file with a type error. */
  newFileTypeError: NewFile
  /** A new test file for code that does not exist yet (test-first work). */
  testFirst: NewFile
  /** monorepo: an importer in another package uses an export that does not exist. */
  brokenCrossPackageImport?: Edit
}

export interface Layout {
  kind: LayoutKind
  root: string
  /** Every tsconfig file written, workspace-relative. */
  tsconfigs: string[]
  runner: 'vitest' | 'jest'
  /** A widely imported file, one of its exports, and the files that use that export. */
  hub: { file: string; export: string; importers: string[] }
  /** The test that catches `scenarios.behaviour`. */
  behaviour: { test: string; name: string }
  /** Test files (workspace-relative). */
  tests: string[]
  scenarios: LayoutScenarios
  /** With `preexisting`: what is already broken, and two edits to judge against it. */
  preexisting?: {
    /** A source file with a type error. */
    brokenFile: string
    /** A test file with a failing test. */
    failingTest: string
    /** library: the vitest project that cannot start here. */
    deadProject?: string
    /** A good edit elsewhere (must be kept). */
    unrelatedGood: Edit
    /** Adds a new type error elsewhere (must be rolled back). */
    newError: Edit
  }
  /** library: the vitest project that cannot start here (always present). */
  deadProject?: string
}

const here = dirname(fileURLToPath(import.meta.url))
/** This repository's node_modules. */
export const repoNodeModules = join(here, '..', '..', '..', 'node_modules')

const json = (value: unknown) => JSON.stringify(value, null, 2) + '\n'
const lines = (...l: string[]) => l.join('\n') + '\n'

function writeTree(root: string, files: Record<string, string>) {
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true })
    writeFileSync(join(root, rel), text)
  }
}

/** A layout's files (workspace-relative path → text), its facts, and the directory links pnpm would make. */
interface Generated {
  files: Record<string, string>
  layout: Omit<Layout, 'root'>
  links?: { from: string; to: string }[]
}

interface Problems {
  broken: NewFile
  failing: NewFile
  newError: Edit
}

/**
 * Add the pre-existing problems (`preexisting: true`): a source file with a
 * type error and a failing test, written with the layout's files, and the
 * two edits judged against them.
 */
function addPreexisting(files: Record<string, string>, layout: Omit<Layout, 'root'>, problems: Problems) {
  files[problems.broken.path] = problems.broken.content
  files[problems.failing.path] = problems.failing.content
  layout.tests = [...layout.tests, problems.failing.path].sort()
  layout.preexisting = {
    brokenFile: problems.broken.path,
    failingTest: problems.failing.path,
    ...(layout.deadProject ? { deadProject: layout.deadProject } : {}),
    unrelatedGood: layout.scenarios.good,
    newError: problems.newError,
  }
}

/** Link `<root>/<from>` to `<root>/<to>` with a relative symlink, as pnpm links workspace packages. */
function linkDir(root: string, from: string, to: string) {
  const abs = join(root, from)
  mkdirSync(dirname(abs), { recursive: true })
  symlinkSync(relative(dirname(abs), join(root, to)), abs, 'dir')
}

// ---------------------------------------------------------------- money (shared by vite-app and jest)

const money = lines(
  '/** Amounts are integer cents. */',
  'export type Cents = number',
  '',
  '/** `1234` → `12.34 EUR`. */',
  "export function formatCents(amount: Cents, currency = 'EUR'): string {",
  "  const sign = amount < 0 ? '-' : ''",
  '  const abs = Math.abs(amount)',
  "  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')} ${currency}`",
  '}',
  '',
  'export function addCents(a: Cents, b: Cents): Cents {',
  '  return a + b',
  '}',
  '',
  '/** `percent` % of `amount`, rounded to the nearest cent. */',
  'export function percentOf(amount: Cents, percent: number): Cents {',
  '  return Math.round((amount * percent) / 100)',
  '}',
)

const cart = (ext: string) => lines(
  `import { addCents, percentOf, type Cents } from './money${ext}'`,
  '',
  'export interface Line {',
  '  sku: string',
  '  unit: Cents',
  '  quantity: number',
  '}',
  '',
  'export function lineTotal(line: Line): Cents {',
  '  return line.unit * line.quantity',
  '}',
  '',
  'export function subtotal(lines: readonly Line[]): Cents {',
  '  return lines.reduce((sum, line) => addCents(sum, lineTotal(line)), 0)',
  '}',
  '',
  'export function discounted(lines: readonly Line[], percent: number): Cents {',
  '  const total = subtotal(lines)',
  '  return total - percentOf(total, percent)',
  '}',
)

const receipt = (ext: string) => lines(
  `import { subtotal, type Line } from './cart${ext}'`,
  `import { formatCents } from './money${ext}'`,
  '',
  'export function receiptLines(lines: readonly Line[]): string[] {',
  '  const out = lines.map(line => `${line.sku} x${line.quantity}`)',
  '  out.push(`total ${formatCents(subtotal(lines))}`)',
  '  return out',
  '}',
)

/** A test file: its imports, then one `describe` named `suite` holding `tests` (lines, indented by the describe). */
const testFile = (runner: 'vitest' | '@jest/globals', imports: string[], suite: string, ...tests: string[]) =>
  lines(`import { describe, expect, it } from '${runner}'`, ...imports, '', `describe('${suite}', () => {`, ...tests.map(t => `  ${t}`), '})')

const moneyTest = (runner: 'vitest' | '@jest/globals', from: string) => testFile(runner, [`import { addCents, formatCents, percentOf } from '${from}'`], 'money',
  "it('formats cents', () => expect(formatCents(1234)).toBe('12.34 EUR'))",
  "it('formats negative amounts', () => expect(formatCents(-5)).toBe('-0.05 EUR'))",
  "it('adds', () => expect(addCents(1, 2)).toBe(3))",
  "it('rounds a percentage to the nearest cent', () => expect(percentOf(999, 10)).toBe(100))",
)

const cartTest = (runner: 'vitest' | '@jest/globals', from: string) => lines(
  `import { describe, expect, it } from '${runner}'`,
  `import { discounted, subtotal } from '${from}'`,
  '',
  "const lines = [{ sku: 'a', unit: 250, quantity: 2 }, { sku: 'b', unit: 100, quantity: 1 }]",
  '',
  "describe('cart', () => {",
  "  it('sums lines', () => expect(subtotal(lines)).toBe(600))",
  "  it('applies a discount', () => expect(discounted(lines, 10)).toBe(540))",
  '})',
)

const receiptTest = (runner: 'vitest' | '@jest/globals', from: string) => testFile(runner, [`import { receiptLines } from '${from}'`], 'receipt',
  "it('lists lines and the total', () => expect(receiptLines([{ sku: 'a', unit: 250, quantity: 2 }])).toEqual(['a x2', 'total 5.00 EUR']))",
)

function moneyScenarios(src: string, ext: string, testDir: string, runner: 'vitest' | '@jest/globals'): LayoutScenarios {
  return {
    good: {
      path: `${src}/cart.ts`,
      old_string: '  return lines.reduce((sum, line) => addCents(sum, lineTotal(line)), 0)',
      new_string: '  let sum: Cents = 0\n  for (const line of lines) sum = addCents(sum, lineTotal(line))\n  return sum',
    },
    renameExport: { path: `${src}/money.ts`, old_string: 'export function formatCents(', new_string: 'export function formatMoney(' },
    syntaxError: { path: `${src}/money.ts`, old_string: '  return a + b\n', new_string: '  return a +\n' },
    behaviour: { path: `${src}/money.ts`, old_string: 'return Math.round((amount * percent) / 100)', new_string: 'return Math.floor((amount * percent) / 100)' },
    newFileTypeError: { path: `${src}/shipping.ts`, content: lines("import type { Cents } from './money" + ext + "'", '', "export const FLAT_RATE: Cents = 'free'") },
    testFirst: {
      path: `${testDir}/tax.test.ts`,
      content: testFile(runner, [`import { taxOf } from '${relativeImport(testDir, `${src}/tax`, ext)}'`], 'tax', "it('takes 20 %', () => expect(taxOf(1000)).toBe(200))"),
    },
  }
}

function relativeImport(fromDir: string, toFile: string, ext: string): string {
  const r = relative(fromDir, toFile).split('\\').join('/')
  return (r.startsWith('.') ? r : `./${r}`) + ext
}

/** The shop's sources in `src` and their tests in `testDir`. */
function shopFiles(src: string, testDir: string, runner: 'vitest' | '@jest/globals'): Record<string, string> {
  const from = (name: string) => relativeImport(testDir, `${src}/${name}`, '')
  return {
    [`${src}/money.ts`]: money,
    [`${src}/cart.ts`]: cart(''),
    [`${src}/receipt.ts`]: receipt(''),
    [`${testDir}/money.test.ts`]: moneyTest(runner, from('money')),
    [`${testDir}/cart.test.ts`]: cartTest(runner, from('cart')),
    [`${testDir}/receipt.test.ts`]: receiptTest(runner, from('receipt')),
  }
}

/** The shop's pre-existing problems: a fee typed as a string, a test still expecting the old rounding. */
function shopProblems(src: string, testDir: string, runner: 'vitest' | '@jest/globals'): Problems {
  return {
    broken: { path: `${src}/legacy.ts`, content: lines("import type { Cents } from './money'", '', '/** Left broken by an earlier change. */', "export const LEGACY_FEE: Cents = '0.50'") },
    failing: {
      path: `${testDir}/legacy.test.ts`,
      content: testFile(runner, [`import { addCents } from '${relativeImport(testDir, `${src}/money`, '')}'`], 'legacy', "it('still expects the old rounding', () => expect(addCents(1, 1)).toBe(3))"),
    },
    newError: { path: `${src}/receipt.ts`, old_string: '  return out\n', new_string: '  const count: number = out.length.toString()\n  return count ? out : []\n' },
  }
}

// ---------------------------------------------------------------- (a) vite-app

function viteApp(): Generated {
  const files: Record<string, string> = {
    'package.json': json({ name: 'vite-app', private: true, version: '0.0.0', type: 'module', scripts: { build: 'tsc -b && vite build', test: 'vitest run' } }),
    'tsconfig.json': json({ files: [], references: [{ path: './tsconfig.app.json' }, { path: './tsconfig.node.json' }] }),
    'tsconfig.app.json': json({
      compilerOptions: {
        tsBuildInfoFile: './node_modules/.tmp/tsconfig.app.tsbuildinfo',
        target: 'ES2022', useDefineForClassFields: true, lib: ['ES2022', 'DOM', 'DOM.Iterable'], module: 'ESNext', types: [],
        skipLibCheck: true, moduleResolution: 'bundler', allowImportingTsExtensions: true, verbatimModuleSyntax: true,
        moduleDetection: 'force', noEmit: true, strict: true, noUnusedLocals: true, noUnusedParameters: true,
        noFallthroughCasesInSwitch: true,
      },
      include: ['src'],
    }),
    'tsconfig.node.json': json({
      compilerOptions: {
        tsBuildInfoFile: './node_modules/.tmp/tsconfig.node.tsbuildinfo',
        target: 'ES2023', lib: ['ES2023'], module: 'ESNext', types: ['node'], skipLibCheck: true,
        moduleResolution: 'bundler', allowImportingTsExtensions: true, verbatimModuleSyntax: true, moduleDetection: 'force',
        noEmit: true, strict: true, noUnusedLocals: true, noUnusedParameters: true,
      },
      include: ['vite.config.ts'],
    }),
    'vite.config.ts': lines(
      "import { defineConfig } from 'vitest/config'",
      '',
      '// https://vite.dev/config/',
      "export default defineConfig({ test: { include: ['src/**/*.test.ts'] } })",
    ),
    'index.html': lines('<!doctype html>', '<html lang="en">', '  <body>', '    <div id="app"></div>', '    <script type="module" src="/src/main.ts"></script>', '  </body>', '</html>'),
    ...shopFiles('src/lib', 'src/lib', 'vitest'),
    'src/components/cart-view.ts': lines(
      "import type { Line } from '../lib/cart'",
      "import { formatCents } from '../lib/money'",
      "import { receiptLines } from '../lib/receipt'",
      '',
      'export function renderCart(el: HTMLElement, lines: readonly Line[]): void {',
      "  const list = document.createElement('ul')",
      '  for (const text of receiptLines(lines)) {',
      "    const item = document.createElement('li')",
      '    item.textContent = text',
      '    list.append(item)',
      '  }',
      '  el.replaceChildren(list)',
      "  el.title = formatCents(lines.reduce((sum, line) => sum + line.unit * line.quantity, 0))",
      '}',
    ),
    'src/main.ts': lines(
      "import { renderCart } from './components/cart-view'",
      '',
      "const app = document.querySelector<HTMLDivElement>('#app')",
      "if (app) renderCart(app, [{ sku: 'tea', unit: 450, quantity: 2 }])",
    ),
  }
  const layout: Omit<Layout, 'root'> = {
    kind: 'vite-app',
    tsconfigs: ['tsconfig.json', 'tsconfig.app.json', 'tsconfig.node.json'],
    runner: 'vitest',
    hub: { file: 'src/lib/money.ts', export: 'formatCents', importers: ['src/lib/receipt.ts', 'src/components/cart-view.ts', 'src/lib/money.test.ts'] },
    behaviour: { test: 'src/lib/money.test.ts', name: 'money > rounds a percentage to the nearest cent' },
    tests: ['src/lib/cart.test.ts', 'src/lib/money.test.ts', 'src/lib/receipt.test.ts'],
    scenarios: moneyScenarios('src/lib', '', 'src/lib', 'vitest'),
  }
  return { files, layout }
}

// ---------------------------------------------------------------- (b) library

function library(): Generated {
  const files: Record<string, string> = {
    'package.json': json({
      name: 'tiny-expr', version: '1.0.0', type: 'module',
      exports: { '.': { types: './dist/index.d.ts', import: './dist/index.js' } },
      scripts: { build: 'tsc -b tsconfig.build.json', test: 'vitest run', typecheck: 'tsc -b' },
    }),
    'tsconfig.json': json({ files: [], references: [{ path: './tsconfig.build.json' }, { path: './tsconfig.spec.json' }] }),
    'tsconfig.base.json': json({
      compilerOptions: {
        target: 'ES2022', lib: ['ES2022'], module: 'NodeNext', moduleResolution: 'NodeNext', strict: true,
        exactOptionalPropertyTypes: true, noImplicitOverride: true, skipLibCheck: true, types: [],
      },
    }),
    'tsconfig.build.json': json({
      extends: './tsconfig.base.json',
      compilerOptions: { composite: true, declaration: true, rootDir: 'src', outDir: 'dist', tsBuildInfoFile: 'dist/.tsbuildinfo' },
      include: ['src'],
    }),
    'tsconfig.spec.json': json({
      extends: './tsconfig.base.json',
      compilerOptions: { composite: true, rootDir: '.', outDir: 'dist-spec', tsBuildInfoFile: 'dist-spec/.tsbuildinfo', types: ['node'] },
      include: ['test', 'vitest.config.ts'],
      references: [{ path: './tsconfig.build.json' }],
    }),
    'vitest.config.ts': lines(
      "import { defineConfig } from 'vitest/config'",
      '',
      'export default defineConfig({',
      '  test: {',
      '    projects: [',
      "      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },",
      "      { test: { name: 'node', include: ['test/node/**/*.test.ts'], environment: 'node' } },",
      "      // happy-dom is not installed here: this project cannot start on this machine.",
      "      { test: { name: 'dom', include: ['test/dom/**/*.test.ts'], environment: 'happy-dom' } },",
      '    ],',
      '  },',
      '})',
    ),
    'src/tokens.ts': lines(
      "export type TokenKind = 'number' | 'op' | 'paren'",
      '',
      'export interface Token {',
      '  kind: TokenKind',
      '  text: string',
      '  at: number',
      '}',
      '',
      '/** Split an arithmetic expression into tokens; throws on an unknown character. */',
      'export function tokenize(input: string): Token[] {',
      '  const out: Token[] = []',
      '  let i = 0',
      '  while (i < input.length) {',
      '    const c = input[i]!',
      "    if (c === ' ') { i++; continue }",
      '    if (/[0-9]/.test(c)) {',
      '      let j = i',
      '      while (j < input.length && /[0-9.]/.test(input[j]!)) j++',
      "      out.push({ kind: 'number', text: input.slice(i, j), at: i })",
      '      i = j',
      "    } else if ('+-*/'.includes(c)) {",
      "      out.push({ kind: 'op', text: c, at: i++ })",
      "    } else if (c === '(' || c === ')') {",
      "      out.push({ kind: 'paren', text: c, at: i++ })",
      '    } else {',
      '      throw new SyntaxError(`unexpected ${c} at ${i}`)',
      '    }',
      '  }',
      '  return out',
      '}',
    ),
    'src/ast.ts': lines(
      'export type Node =',
      "  | { type: 'num'; value: number }",
      "  | { type: 'bin'; op: '+' | '-' | '*' | '/'; left: Node; right: Node }",
    ),
    'src/parser.ts': lines(
      "import type { Node } from './ast.js'",
      "import { tokenize, type Token } from './tokens.js'",
      '',
      '/** Parse with the usual precedence: `*` `/` before `+` `-`, left-associative. */',
      'export function parse(input: string): Node {',
      '  const tokens = tokenize(input)',
      '  let pos = 0',
      '  const peek = (): Token | undefined => tokens[pos]',
      '  const primary = (): Node => {',
      '    const t = tokens[pos++]',
      "    if (!t) throw new SyntaxError('unexpected end')",
      "    if (t.kind === 'number') return { type: 'num', value: Number(t.text) }",
      "    if (t.text === '(') {",
      '      const inner = sum()',
      '      pos++',
      '      return inner',
      '    }',
      '    throw new SyntaxError(`unexpected ${t.text} at ${t.at}`)',
      '  }',
      '  const product = (): Node => {',
      '    let left = primary()',
      "    while (peek()?.text === '*' || peek()?.text === '/') {",
      "      const op = tokens[pos++]!.text as '*' | '/'",
      "      left = { type: 'bin', op, left, right: primary() }",
      '    }',
      '    return left',
      '  }',
      '  const sum = (): Node => {',
      '    let left = product()',
      "    while (peek()?.text === '+' || peek()?.text === '-') {",
      "      const op = tokens[pos++]!.text as '+' | '-'",
      "      left = { type: 'bin', op, left, right: product() }",
      '    }',
      '    return left',
      '  }',
      '  return sum()',
      '}',
    ),
    'src/evaluate.ts': lines(
      "import type { Node } from './ast.js'",
      "import { parse } from './parser.js'",
      '',
      'export function evaluateNode(node: Node): number {',
      "  if (node.type === 'num') return node.value",
      '  const l = evaluateNode(node.left)',
      '  const r = evaluateNode(node.right)',
      '  switch (node.op) {',
      "    case '+': return l + r",
      "    case '-': return l - r",
      "    case '*': return l * r",
      "    case '/': return l / r",
      '  }',
      '}',
      '',
      'export function evaluate(input: string): number {',
      '  return evaluateNode(parse(input))',
      '}',
    ),
    'src/printer.ts': lines(
      "import type { Node } from './ast.js'",
      "import type { Token } from './tokens.js'",
      '',
      'export function print(node: Node): string {',
      "  if (node.type === 'num') return String(node.value)",
      '  return `(${print(node.left)} ${node.op} ${print(node.right)})`',
      '}',
      '',
      'export function printTokens(tokens: readonly Token[]): string {',
      "  return tokens.map(t => t.text).join(' ')",
      '}',
    ),
    'src/index.ts': lines(
      "export { tokenize, type Token, type TokenKind } from './tokens.js'",
      "export { parse } from './parser.js'",
      "export { evaluate, evaluateNode } from './evaluate.js'",
      "export { print, printTokens } from './printer.js'",
      "export type { Node } from './ast.js'",
    ),
    'test/unit/tokens.test.ts': testFile('vitest', ["import { tokenize } from '../../src/tokens.js'"], 'tokenize', "it('splits numbers and operators', () => expect(tokenize('1 + 23').map(t => t.text)).toEqual(['1', '+', '23']))", "it('rejects unknown characters', () => expect(() => tokenize('1 % 2')).toThrow('unexpected % at 2'))"),
    'test/unit/parser.test.ts': testFile('vitest', ["import { parse } from '../../src/parser.js'", "import { print } from '../../src/printer.js'"], 'parse', "it('binds * tighter than +', () => expect(print(parse('1 + 2 * 3'))).toBe('(1 + (2 * 3))'))", "it('is left-associative', () => expect(print(parse('8 - 2 - 1'))).toBe('((8 - 2) - 1)'))"),
    'test/node/evaluate.test.ts': testFile('vitest', ["import { evaluate } from '../../src/index.js'"], 'evaluate', "it('computes with precedence', () => expect(evaluate('2 + 3 * 4')).toBe(14))", "it('honours parentheses', () => expect(evaluate('(2 + 3) * 4')).toBe(20))"),
    'test/dom/printer.test.ts': testFile('vitest', ["import { printTokens } from '../../src/printer.js'", "import { tokenize } from '../../src/tokens.js'"], 'printTokens', "it('joins token texts', () => expect(printTokens(tokenize('1+2'))).toBe('1 + 2'))"),
  }
  const layout: Omit<Layout, 'root'> = {
    kind: 'library',
    tsconfigs: ['tsconfig.json', 'tsconfig.base.json', 'tsconfig.build.json', 'tsconfig.spec.json'],
    runner: 'vitest',
    hub: { file: 'src/tokens.ts', export: 'tokenize', importers: ['src/parser.ts', 'src/index.ts', 'test/unit/tokens.test.ts', 'test/dom/printer.test.ts'] },
    behaviour: { test: 'test/unit/parser.test.ts', name: 'parse > binds * tighter than +' },
    tests: ['test/dom/printer.test.ts', 'test/node/evaluate.test.ts', 'test/unit/parser.test.ts', 'test/unit/tokens.test.ts'],
    deadProject: 'dom',
    scenarios: {
      good: {
        path: 'src/printer.ts',
        old_string: "  return tokens.map(t => t.text).join(' ')",
        new_string: "  let out = ''\n  for (const t of tokens) out += (out ? ' ' : '') + t.text\n  return out",
      },
      renameExport: { path: 'src/tokens.ts', old_string: 'export function tokenize(', new_string: 'export function lex(' },
      syntaxError: { path: 'src/tokens.ts', old_string: '  return out\n}', new_string: '  return out\n' },
      behaviour: { path: 'src/parser.ts', old_string: "    while (peek()?.text === '*' || peek()?.text === '/') {", new_string: "    while (peek()?.text === '/') {" },
      newFileTypeError: { path: 'src/format.ts', content: lines("import type { Token } from './tokens.js'", '', "export const EMPTY: Token = { kind: 'word', text: '', at: 0 }") },
      testFirst: {
        path: 'test/unit/simplify.test.ts',
        content: testFile('vitest', ["import { simplify } from '../../src/simplify.js'"], 'simplify', "it('folds constants', () => expect(simplify('1 + 2')).toBe('3'))"),
      },
    },
  }
  return { files, layout }
}

// ---------------------------------------------------------------- (c) monorepo

const MONO = ['core', 'model', 'service', 'app'] as const
const MONO_DEPS: Record<(typeof MONO)[number], (typeof MONO)[number][]> = { core: [], model: ['core'], service: ['core', 'model'], app: ['service', 'core'] }

function monorepo(): Generated {
  const files: Record<string, string> = {
    'package.json': json({ name: 'mono', private: true, type: 'module', scripts: { test: 'vitest run', typecheck: 'pnpm -r exec tsc --noEmit' } }),
    'pnpm-workspace.yaml': lines('packages:', "  - 'packages/*'"),
    'tsconfig.base.json': json({
      compilerOptions: {
        target: 'ES2022', lib: ['ES2022'], module: 'ESNext', moduleResolution: 'bundler', strict: true, noEmit: true,
        skipLibCheck: true, verbatimModuleSyntax: true, isolatedModules: true, types: [],
      },
    }),
    'vitest.config.ts': lines("import { defineConfig } from 'vitest/config'", '', "export default defineConfig({ test: { include: ['packages/*/test/**/*.test.ts'] } })"),
  }
  for (const p of MONO) {
    const deps = Object.fromEntries(MONO_DEPS[p].map(d => [`@mono/${d}`, 'workspace:*']))
    files[`packages/${p}/package.json`] = json({ name: `@mono/${p}`, version: '0.0.0', private: true, type: 'module', exports: { '.': './src/index.ts' }, dependencies: deps })
    files[`packages/${p}/tsconfig.json`] = json({ extends: '../../tsconfig.base.json', include: ['src', 'test'] })
  }
  Object.assign(files, {
    'packages/core/src/ids.ts': lines(
      '/** `prefix-000n`: stable, sortable ids. */',
      'export function makeId(prefix: string, n: number): string {',
      "  return `${prefix}-${String(n).padStart(4, '0')}`",
      '}',
      '',
      'export function parseId(id: string): { prefix: string; n: number } {',
      "  const at = id.lastIndexOf('-')",
      '  return { prefix: id.slice(0, at), n: Number(id.slice(at + 1)) }',
      '}',
    ),
    'packages/core/src/text.ts': lines(
      'export function slugify(text: string): string {',
      "  return text.trim().toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '')",
      '}',
    ),
    'packages/core/src/index.ts': lines("export { makeId, parseId } from './ids'", "export { slugify } from './text'"),
    'packages/core/test/ids.test.ts': testFile('vitest', ["import { makeId, parseId } from '../src/ids'"], 'ids',
      "it('pads the number', () => expect(makeId('u', 7)).toBe('u-0007'))",
      "it('parses back', () => expect(parseId('order-line-0012')).toEqual({ prefix: 'order-line', n: 12 }))",
    ),
    'packages/model/src/user.ts': lines(
      "import { makeId, slugify } from '@mono/core'",
      '',
      'export interface User {',
      '  id: string',
      '  name: string',
      '  handle: string',
      '}',
      '',
      'export function createUser(n: number, name: string): User {',
      "  return { id: makeId('user', n), name, handle: slugify(name) }",
      '}',
    ),
    'packages/model/src/order.ts': lines(
      "import { makeId } from '@mono/core'",
      "import type { User } from './user'",
      '',
      'export interface Order {',
      '  id: string',
      '  owner: User',
      '  items: string[]',
      '}',
      '',
      'export function createOrder(n: number, owner: User, items: string[] = []): Order {',
      "  return { id: makeId('order', n), owner, items: [...items] }",
      '}',
    ),
    'packages/model/src/index.ts': lines("export { createUser, type User } from './user'", "export { createOrder, type Order } from './order'"),
    'packages/model/test/user.test.ts': testFile('vitest', ["import { createUser } from '../src/user'"], 'user',
      "it('gets an id and a handle', () => expect(createUser(3, ' Ada Lovelace ')).toEqual({ id: 'user-0003', name: ' Ada Lovelace ', handle: 'ada-lovelace' }))",
    ),
    'packages/service/src/orders.ts': lines(
      "import { parseId } from '@mono/core'",
      "import { createOrder, type Order, type User } from '@mono/model'",
      '',
      'export class OrderBook {',
      '  private readonly orders: Order[] = []',
      '  place(owner: User, items: string[]): Order {',
      '    const order = createOrder(this.orders.length + 1, owner, items)',
      '    this.orders.push(order)',
      '    return order',
      '  }',
      '  byOwner(owner: User): Order[] {',
      '    return this.orders.filter(o => o.owner.id === owner.id)',
      '  }',
      '  lastNumber(): number {',
      '    const last = this.orders.at(-1)',
      '    return last ? parseId(last.id).n : 0',
      '  }',
      '}',
    ),
    'packages/service/src/index.ts': lines("export { OrderBook } from './orders'"),
    'packages/service/test/orders.test.ts': testFile('vitest', ["import { createUser } from '@mono/model'", "import { OrderBook } from '../src/orders'"], 'order book',
      "it('numbers orders', () => {",
      '  const book = new OrderBook()',
      "  const ada = createUser(1, 'Ada')",
      "  book.place(ada, ['tea'])",
      "  expect(book.place(ada, ['cake']).id).toBe('order-0002')",
      '  expect(book.lastNumber()).toBe(2)',
      '  expect(book.byOwner(ada)).toHaveLength(2)',
      '})',
    ),
    'packages/app/src/report.ts': lines(
      "import { makeId } from '@mono/core'",
      "import { OrderBook } from '@mono/service'",
      '',
      'export function report(book: OrderBook): string {',
      "  return `${makeId('report', book.lastNumber())}: ${book.lastNumber()} orders`",
      '}',
    ),
    'packages/app/src/index.ts': lines("export { report } from './report'"),
    'packages/app/test/report.test.ts': testFile('vitest', ["import { OrderBook } from '@mono/service'", "import { report } from '../src/report'"], 'report',
      "it('summarises an empty book', () => expect(report(new OrderBook())).toBe('report-0000: 0 orders'))",
    ),
  })
  const layout: Omit<Layout, 'root'> = {
    kind: 'monorepo',
    tsconfigs: ['tsconfig.base.json', ...MONO.map(p => `packages/${p}/tsconfig.json`)],
    runner: 'vitest',
    hub: { file: 'packages/core/src/ids.ts', export: 'makeId', importers: ['packages/core/src/index.ts', 'packages/core/test/ids.test.ts', 'packages/model/src/user.ts', 'packages/model/src/order.ts', 'packages/app/src/report.ts'] },
    behaviour: { test: 'packages/model/test/user.test.ts', name: 'user > gets an id and a handle' },
    tests: ['packages/app/test/report.test.ts', 'packages/core/test/ids.test.ts', 'packages/model/test/user.test.ts', 'packages/service/test/orders.test.ts'],
    scenarios: {
      good: {
        path: 'packages/service/src/orders.ts',
        old_string: '    return this.orders.filter(o => o.owner.id === owner.id)',
        new_string: '    const mine: Order[] = []\n    for (const o of this.orders) if (o.owner.id === owner.id) mine.push(o)\n    return mine',
      },
      renameExport: { path: 'packages/core/src/ids.ts', old_string: 'export function makeId(', new_string: 'export function createId(' },
      syntaxError: { path: 'packages/core/src/ids.ts', old_string: "  const at = id.lastIndexOf('-')", new_string: "  const at = id.lastIndexOf('-'" },
      behaviour: { path: 'packages/core/src/text.ts', old_string: 'text.trim().toLowerCase()', new_string: 'text.trim()' },
      newFileTypeError: { path: 'packages/model/src/invoice.ts', content: lines("import type { Order } from './order'", '', 'export function invoiceTotal(order: Order): number {', '  return order.items', '}') },
      testFirst: {
        path: 'packages/service/test/refunds.test.ts',
        content: testFile('vitest', ["import { refund } from '../src/refunds'"], 'refunds', "it('refunds an order', () => expect(refund('order-0001')).toBe(true))"),
      },
      brokenCrossPackageImport: { path: 'packages/app/src/report.ts', old_string: "import { OrderBook } from '@mono/service'", new_string: "import { OrderBook, Ledger } from '@mono/service'\n\nexport const ledger = new Ledger()" },
    },
  }
  // pnpm links each workspace dependency into the dependent's own node_modules.
  const links = MONO.flatMap(p => MONO_DEPS[p].map(d => ({ from: `packages/${p}/node_modules/@mono/${d}`, to: `packages/${d}` })))
  return { files, layout, links }
}

// ---------------------------------------------------------------- (d) jest

function jestProject(options: LayoutOptions): Generated {
  const jestConfig = { preset: 'ts-jest', testEnvironment: 'node', roots: ['<rootDir>/test'] }
  const files: Record<string, string> = {
    'package.json': json({ name: 'jest-shop', version: '1.0.0', private: true, scripts: { test: 'jest' }, ...(options.jestConfig === 'file' ? {} : { jest: jestConfig }) }),
    'tsconfig.json': json({
      compilerOptions: {
        target: 'ES2022', lib: ['ES2022'], module: 'commonjs', moduleResolution: 'node10', strict: true, esModuleInterop: true,
        isolatedModules: true, skipLibCheck: true, noEmit: true, types: ['node'],
      },
      include: ['src', 'test'],
    }),
    ...shopFiles('src', 'test', '@jest/globals'),
    'src/index.ts': lines("export * from './money'", "export * from './cart'", "export * from './receipt'"),
  }
  if (options.jestConfig === 'file') files['jest.config.cjs'] = `/** @type {import('jest').Config} */\nmodule.exports = ${JSON.stringify(jestConfig, null, 2)}\n`
  const layout: Omit<Layout, 'root'> = {
    kind: 'jest',
    tsconfigs: ['tsconfig.json'],
    runner: 'jest',
    hub: { file: 'src/money.ts', export: 'formatCents', importers: ['src/receipt.ts', 'src/index.ts', 'test/money.test.ts'] },
    behaviour: { test: 'test/money.test.ts', name: 'money rounds a percentage to the nearest cent' },
    tests: ['test/cart.test.ts', 'test/money.test.ts', 'test/receipt.test.ts'],
    scenarios: moneyScenarios('src', '', 'test', '@jest/globals'),
  }
  return { files, layout }
}

/** What `preexisting: true` adds to each layout: a source file with a type error, a failing test, and an edit that adds a new error. */
const PROBLEMS: Record<LayoutKind, Problems> = {
  'vite-app': shopProblems('src/lib', 'src/lib', 'vitest'),
  library: {
    broken: { path: 'src/legacy.ts', content: lines("import type { Token } from './tokens.js'", '', '/** Left broken by an earlier change. */', "export const LEGACY: Token = { kind: 'number', text: 1, at: 0 }") },
    failing: { path: 'test/unit/legacy.test.ts', content: testFile('vitest', ["import { evaluate } from '../../src/evaluate.js'"], 'legacy', "it('still expects integer division', () => expect(evaluate('7 / 2')).toBe(3))") },
    newError: { path: 'src/evaluate.ts', old_string: '  return evaluateNode(parse(input))', new_string: '  const tree: string = parse(input)\n  return evaluateNode(tree)' },
  },
  monorepo: {
    broken: { path: 'packages/model/src/legacy.ts', content: lines("import type { User } from './user'", '', '/** Left broken by an earlier change. */', "export const GUEST: User = { id: 0, name: 'guest', handle: 'guest' }") },
    failing: { path: 'packages/core/test/text.test.ts', content: testFile('vitest', ["import { slugify } from '../src/text'"], 'text', "it('still expects underscores', () => expect(slugify('a b')).toBe('a_b'))") },
    newError: { path: 'packages/app/src/report.ts', old_string: '  return `${makeId(', new_string: '  const n: string = book.lastNumber()\n  void n\n  return `${makeId(' },
  },
  jest: shopProblems('src', 'test', '@jest/globals'),
}

const GENERATORS: Record<LayoutKind, (options: LayoutOptions) => Generated> = {
  'vite-app': viteApp,
  library,
  monorepo,
  jest: jestProject,
}

/**
 * Write a layout into `dir` (created; must be empty or absent) and link its
 * `node_modules`. Same kind and options, same bytes.
 *
 * @example
 * const layout = generateLayout('vite-app', mkdtempSync(join(tmpdir(), 'app-')))
 * await h.exec('edit_file', layout.scenarios.renameExport) // → rolled back
 */
export function generateLayout(kind: LayoutKind, dir: string, options: LayoutOptions = {}): Layout {
  const generate = GENERATORS[kind]
  if (!generate) throw new Error(`unknown layout ${JSON.stringify(kind)} (have: ${LAYOUT_KINDS.join(', ')})`)
  const root = resolve(dir)
  mkdirSync(root, { recursive: true })
  const { files, layout, links = [] } = generate(options)
  if (options.preexisting) addPreexisting(files, layout, PROBLEMS[kind])
  writeTree(root, files)
  for (const { from, to } of links) linkDir(root, from, to)
  writeFileSync(join(root, '.gitignore'), 'node_modules\ndist\ndist-spec\ncoverage\n.dsh\n')
  const nodeModules = options.nodeModules ?? repoNodeModules
  if (nodeModules !== false) symlinkSync(nodeModules, join(root, 'node_modules'), 'dir')
  return { root, ...layout }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2)
  const [kind, dir] = args.filter(a => !a.startsWith('--'))
  if (!kind || !dir || !(LAYOUT_KINDS as readonly string[]).includes(kind)) {
    console.error(`usage: tsx packages/dsh-testkit/src/layouts.ts <${LAYOUT_KINDS.join('|')}> <dir> [--preexisting] [--jest-config-file]`)
    process.exit(2)
  }
  const layout = generateLayout(kind as LayoutKind, dir, { preexisting: args.includes('--preexisting'), jestConfig: args.includes('--jest-config-file') ? 'file' : 'package' })
  console.log(`generated ${layout.kind} in ${layout.root} (tsconfigs: ${layout.tsconfigs.join(', ')}; tests: ${layout.tests.length} files, ${layout.runner})`)
}
