/**
 * The scripted edits of `pnpm bench efficacy`: what a model typically
 * writes in the layouts of dsh-testkit's layouts.ts and in examples/demo, each
 * labelled bad (must be rolled back) or good (must be kept). Edits of one
 * workspace run in order in one session: good edits are kept and change the
 * workspace, so later edits are written against that state; bad edits are
 * rolled back and change nothing.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Layout, LayoutKind } from 'dsh-testkit'

export type BadKind = 'export-renamed' | 'export-removed' | 'signature' | 'syntax' | 'behaviour' | 'deleted-import' | 'new-file-type-error' | 'cross-package-import'
  | 'internal-signature' | 'unexported-module' | 'fixture-changed' | 'deleted-through-shell' | 'moved-module' | 'hidden-test'
export type GoodKind = 'docs' | 'refactor' | 'rename-all' | 'new-module' | 'new-test' | 'fixture' | 'unused-deleted' | 'removed-test'

/** One tool call, as the model would send it. */
export interface ToolCall {
  tool: 'edit_file' | 'write_file' | 'multi_edit' | 'bash'
  args: Record<string, unknown>
}

export interface CorpusEdit {
  name: string
  verdict: 'bad' | 'good'
  kind: BadKind | GoodKind
  /** The call, computed against the workspace as it is when the edit runs. */
  call: (root: string) => ToolCall
}

export type CorpusWorkspace = LayoutKind | 'demo' | 'setups' | 'go' | 'python'

const edit = (path: string, old_string: string, new_string: string) => (): ToolCall => ({ tool: 'edit_file', args: { path, old_string, new_string } })
const write = (path: string, content: string) => (): ToolCall => ({ tool: 'write_file', args: { path, content } })
const rm = (path: string) => (): ToolCall => ({ tool: 'bash', args: { command: `rm ${path}` } })
const sh = (command: string) => (): ToolCall => ({ tool: 'bash', args: { command } })
/** A rename in every file that uses the name, as one all-or-nothing multi_edit. */
const renameAll = (files: string[], from: string, to: string) => (root: string): ToolCall => ({
  tool: 'multi_edit',
  args: {
    edits: files.map(path => {
      const text = readFileSync(join(root, path), 'utf8')
      return { path, old_string: text, new_string: text.replace(new RegExp(`\\b${from}\\b`, 'g'), to) }
    }),
  },
})
const bad = (name: string, kind: BadKind, call: CorpusEdit['call']): CorpusEdit => ({ name, verdict: 'bad', kind, call })
const good = (name: string, kind: GoodKind, call: CorpusEdit['call']): CorpusEdit => ({ name, verdict: 'good', kind, call })
const fromLayout = (l: Layout, key: 'renameExport' | 'syntaxError' | 'behaviour' | 'good') => edit(l.scenarios[key].path, l.scenarios[key].old_string, l.scenarios[key].new_string)

function viteApp(l: Layout): CorpusEdit[] {
  return [
    good('money: doc comment', 'docs', edit('src/lib/money.ts', '/** Amounts are integer cents. */', '/** Amounts are integer cents; never floats. */')),
    bad('rename formatCents (3 importers)', 'export-renamed', fromLayout(l, 'renameExport')),
    good('cart: subtotal as a loop', 'refactor', fromLayout(l, 'good')),
    bad('addCents takes a third argument', 'signature', edit('src/lib/money.ts', 'export function addCents(a: Cents, b: Cents): Cents {\n  return a + b', 'export function addCents(a: Cents, b: Cents, c: Cents): Cents {\n  return a + b + c')),
    good('money: abs without Math.abs', 'refactor', edit('src/lib/money.ts', '  const abs = Math.abs(amount)', '  const abs = amount < 0 ? -amount : amount')),
    bad('syntax error in money.ts', 'syntax', fromLayout(l, 'syntaxError')),
    good('receipt: lines as a loop', 'refactor', edit('src/lib/receipt.ts', '  const out = lines.map(line => `${line.sku} x${line.quantity}`)', '  const out: string[] = []\n  for (const line of lines) out.push(`${line.sku} x${line.quantity}`)')),
    bad('percentOf floors', 'behaviour', fromLayout(l, 'behaviour')),
    good('rename receiptLines → formatReceipt everywhere', 'rename-all', renameAll(['src/lib/receipt.ts', 'src/components/cart-view.ts', 'src/lib/receipt.test.ts'], 'receiptLines', 'formatReceipt')),
    bad('discount adds instead of subtracting', 'behaviour', edit('src/lib/cart.ts', '  return total - percentOf(total, percent)', '  return total + percentOf(total, percent)')),
    good('new module tax.ts', 'new-module', write('src/lib/tax.ts', "import type { Cents } from './money'\n\n/** VAT at 20 %, rounded to the cent. */\nexport function taxOf(amount: Cents): Cents {\n  return Math.round(amount * 0.2)\n}\n")),
    bad('delete receipt.ts (imported by cart-view)', 'deleted-import', rm('src/lib/receipt.ts')),
    good('test for tax.ts', 'new-test', write('src/lib/tax.test.ts', "import { describe, expect, it } from 'vitest'\nimport { taxOf } from './tax'\n\ndescribe('tax', () => {\n  it('takes 20 %', () => expect(taxOf(1005)).toBe(201))\n})\n")),
    bad('new file with a type error', 'new-file-type-error', write(l.scenarios.newFileTypeError.path, l.scenarios.newFileTypeError.content)),
    good('cart-view: doc comment', 'docs', edit('src/components/cart-view.ts', 'export function renderCart(', '/** Render the cart as a list, with the total as the tooltip. */\nexport function renderCart(')),
    bad('percentOf no longer exported (cart uses it)', 'export-removed', edit('src/lib/money.ts', 'export function percentOf(', 'function percentOf(')),
  ]
}

function library(l: Layout): CorpusEdit[] {
  return [
    good('tokens: doc comment', 'docs', edit('src/tokens.ts', '/** Split an arithmetic expression into tokens; throws on an unknown character. */', '/**\n * Split an arithmetic expression into tokens.\n * @throws SyntaxError on an unknown character.\n */')),
    bad('rename tokenize (src and test importers)', 'export-renamed', fromLayout(l, 'renameExport')),
    good('printer: printTokens as a loop', 'refactor', fromLayout(l, 'good')),
    bad('parse takes a required flag', 'signature', edit('src/parser.ts', 'export function parse(input: string): Node {', 'export function parse(input: string, strict: boolean): Node {')),
    good('evaluate: both operands at once', 'refactor', edit('src/evaluate.ts', '  const l = evaluateNode(node.left)\n  const r = evaluateNode(node.right)', '  const [l, r] = [evaluateNode(node.left), evaluateNode(node.right)]')),
    bad('syntax error in tokens.ts', 'syntax', fromLayout(l, 'syntaxError')),
    good('rename evaluateNode → evalNode everywhere', 'rename-all', renameAll(['src/evaluate.ts', 'src/index.ts'], 'evaluateNode', 'evalNode')),
    bad('* loses its precedence', 'behaviour', fromLayout(l, 'behaviour')),
    good('new module simplify.ts', 'new-module', write('src/simplify.ts', "import { evaluate } from './evaluate.js'\n\n/** The value of a constant expression, as text. */\nexport function simplify(input: string): string {\n  return String(evaluate(input))\n}\n")),
    bad('delete ast.ts (type-imported by four files)', 'deleted-import', rm('src/ast.ts')),
    good('test for simplify.ts', 'new-test', write('test/unit/simplify.test.ts', "import { describe, expect, it } from 'vitest'\nimport { simplify } from '../../src/simplify.js'\n\ndescribe('simplify', () => {\n  it('folds constants', () => expect(simplify('1 + 2 * 3')).toBe('7'))\n})\n")),
    bad('new file with a type error', 'new-file-type-error', write(l.scenarios.newFileTypeError.path, l.scenarios.newFileTypeError.content)),
    good('ast: doc comment', 'docs', edit('src/ast.ts', 'export type Node =', '/** The syntax tree of an expression. */\nexport type Node =')),
    bad('tokenize skips the character after a space', 'behaviour', edit('src/tokens.ts', "    if (c === ' ') { i++; continue }", "    if (c === ' ') { i += 2; continue }")),
  ]
}

function monorepo(l: Layout): CorpusEdit[] {
  return [
    good('core ids: doc comment', 'docs', edit('packages/core/src/ids.ts', '/** `prefix-000n`: stable, sortable ids. */', '/** `prefix-000n`: stable ids that sort as text. */')),
    bad('rename makeId (importers in 3 packages)', 'export-renamed', fromLayout(l, 'renameExport')),
    good('service: byOwner as a loop', 'refactor', fromLayout(l, 'good')),
    bad('createOrder takes the owner first', 'signature', edit('packages/model/src/order.ts', 'export function createOrder(n: number, owner: User, items: string[] = []): Order {', 'export function createOrder(owner: User, n: number, items: string[] = []): Order {')),
    good('core text: slugify in two steps', 'refactor', edit('packages/core/src/text.ts', "  return text.trim().toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '')", "  const lower = text.trim().toLowerCase()\n  return lower.replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '')")),
    bad('syntax error in core ids.ts', 'syntax', fromLayout(l, 'syntaxError')),
    good('rename parseId → splitId across core and service', 'rename-all', renameAll(['packages/core/src/ids.ts', 'packages/core/src/index.ts', 'packages/core/test/ids.test.ts', 'packages/service/src/orders.ts'], 'parseId', 'splitId')),
    bad('slugify keeps capitals', 'behaviour', fromLayout(l, 'behaviour')),
    good('new module in model: invoice-lines.ts', 'new-module', write('packages/model/src/invoice-lines.ts', "import type { Order } from './order'\n\nexport function invoiceLines(order: Order): string[] {\n  return order.items.map((item, i) => `${i + 1}. ${item}`)\n}\n")),
    bad('app imports a Ledger that service does not export', 'cross-package-import', edit(l.scenarios.brokenCrossPackageImport!.path, l.scenarios.brokenCrossPackageImport!.old_string, l.scenarios.brokenCrossPackageImport!.new_string)),
    good('test for invoice-lines.ts', 'new-test', write('packages/model/test/invoice-lines.test.ts', "import { describe, expect, it } from 'vitest'\nimport { createOrder } from '../src/order'\nimport { invoiceLines } from '../src/invoice-lines'\nimport { createUser } from '../src/user'\n\ndescribe('invoice lines', () => {\n  it('numbers the items', () => expect(invoiceLines(createOrder(1, createUser(1, 'Ada'), ['tea', 'cake']))).toEqual(['1. tea', '2. cake']))\n})\n")),
    bad('delete model user.ts (imported by order.ts and the index)', 'deleted-import', rm('packages/model/src/user.ts')),
    good('app report: doc comment', 'docs', edit('packages/app/src/report.ts', 'export function report(', '/** One line about the book, for the status page. */\nexport function report(')),
    bad('new file with a type error', 'new-file-type-error', write(l.scenarios.newFileTypeError.path, l.scenarios.newFileTypeError.content)),
    good('core ids: makeId in two steps', 'refactor', edit('packages/core/src/ids.ts', "  return `${prefix}-${String(n).padStart(4, '0')}`", "  const digits = String(n).padStart(4, '0')\n  return `${prefix}-${digits}`")),
    bad('core stops re-exporting slugify (model uses it)', 'export-removed', edit('packages/core/src/index.ts', "export { slugify } from './text'\n", '')),
  ]
}

function jest(l: Layout): CorpusEdit[] {
  return [
    good('money: doc comment', 'docs', edit('src/money.ts', '/** Amounts are integer cents. */', '/** Amounts are integer cents; never floats. */')),
    bad('rename formatCents', 'export-renamed', fromLayout(l, 'renameExport')),
    good('cart: subtotal as a loop', 'refactor', fromLayout(l, 'good')),
    bad('syntax error in money.ts', 'syntax', fromLayout(l, 'syntaxError')),
    good('receipt: lines as a loop', 'refactor', edit('src/receipt.ts', '  const out = lines.map(line => `${line.sku} x${line.quantity}`)', '  const out: string[] = []\n  for (const line of lines) out.push(`${line.sku} x${line.quantity}`)')),
    bad('percentOf floors', 'behaviour', fromLayout(l, 'behaviour')),
    good('rename receiptLines → formatReceipt everywhere', 'rename-all', renameAll(['src/receipt.ts', 'test/receipt.test.ts'], 'receiptLines', 'formatReceipt')),
    bad('discount adds instead of subtracting', 'behaviour', edit('src/cart.ts', '  return total - percentOf(total, percent)', '  return total + percentOf(total, percent)')),
    good('new module tax.ts', 'new-module', write('src/tax.ts', "import type { Cents } from './money'\n\n/** VAT at 20 %, rounded to the cent. */\nexport function taxOf(amount: Cents): Cents {\n  return Math.round(amount * 0.2)\n}\n")),
    bad('delete cart.ts (imported by receipt and the index)', 'deleted-import', rm('src/cart.ts')),
    good('test for tax.ts', 'new-test', write('test/tax.test.ts', "import { describe, expect, it } from '@jest/globals'\nimport { taxOf } from '../src/tax'\n\ndescribe('tax', () => {\n  it('takes 20 %', () => expect(taxOf(1005)).toBe(201))\n})\n")),
    bad('new file with a type error', 'new-file-type-error', write(l.scenarios.newFileTypeError.path, l.scenarios.newFileTypeError.content)),
  ]
}

function demo(): CorpusEdit[] {
  return [
    good('money: doc comment', 'docs', edit('src/money.ts', '/** Amounts are integer cents. */', '/** Amounts are integer cents (no floats). */')),
    bad('add takes a string', 'signature', edit('src/money.ts', 'export function add(a: Cents, b: Cents): Cents {', 'export function add(a: Cents, b: string): Cents {')),
    good('cart: subtotal as a loop', 'refactor', edit('src/cart.ts', '  return lines.reduce((sum, line) => add(sum, line.price * line.qty), 0)', '  let sum: Cents = 0\n  for (const line of lines) sum = add(sum, line.price * line.qty)\n  return sum')),
    bad('discount rounds up', 'behaviour', edit('src/money.ts', 'return Math.round(amount * (1 - percent / 100))', 'return Math.ceil(amount * (1 - percent / 100))')),
    good('new module count.ts', 'new-module', write('src/count.ts', "import type { Line } from './cart.ts'\n\nexport function itemCount(lines: Line[]): number {\n  return lines.reduce((n, line) => n + line.qty, 0)\n}\n")),
    bad('formatCents no longer exported (the broken legacy.ts uses it)', 'export-removed', edit('src/format.ts', 'export function formatCents(', 'function formatCents(')),
    good('test for count.ts', 'new-test', write('tests/count.test.ts', "import { expect, it } from 'vitest'\nimport { itemCount } from '../src/count.ts'\n\nit('counts items across lines', () => expect(itemCount([{ sku: 'a', price: 1, qty: 2 }, { sku: 'b', price: 1, qty: 3 }])).toBe(5))\n")),
    bad('syntax error in cart.ts', 'syntax', edit('src/cart.ts', '  return applyDiscount(subtotal(lines), discountPercent)', '  return applyDiscount(subtotal(lines), discountPercent')),
    bad('rm -rf src through the shell (only tests import what is left)', 'deleted-through-shell', sh('rm -rf src; ls')),
    bad('cart.ts moved to lib/ (only its test imports it)', 'moved-module', sh('mkdir -p lib && mv src/cart.ts lib/cart.ts')),
  ]
}

const CORPORA: Record<LayoutKind, (l: Layout) => CorpusEdit[]> = { 'vite-app': viteApp, library, monorepo, jest }

/** The edits for a generated layout (generated with `generateLayout`). */
export function layoutCorpus(l: Layout): CorpusEdit[] {
  return CORPORA[l.kind](l)
}

/** The edits for a copy of examples/demo/workspace. */
export function demoCorpus(): CorpusEdit[] {
  return demo()
}

/**
 * The setups workspace (issue 29): what real projects have that the layouts
 * do not — `stripInternal` with an `@internal` helper used across modules, a
 * test that lists `src/` and fails for a module `src/index.ts` does not
 * export (no import relates it to a new file), a test that reads a JSON
 * fixture. Vitest (the suite's own) and TypeScript from the repository.
 */
export function setupsFiles(): Record<string, string> {
  const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`
  return {
    'package.json': json({ name: 'setups', private: true, type: 'module' }),
    'tsconfig.json': json({
      compilerOptions: { target: 'ES2022', module: 'ESNext', moduleResolution: 'bundler', strict: true, declaration: true, stripInternal: true, noEmit: true, skipLibCheck: true, types: ['node'] },
      include: ['src', 'tests'],
    }),
    '.gitignore': 'node_modules\n.dsh\n',
    'src/internal.ts': '/** @internal Scales an amount of cents. */\nexport function scale(amount: number): number {\n  return amount * 2\n}\n',
    'src/price.ts': "import { scale } from './internal'\n\nexport function doublePrice(cents: number): number {\n  return scale(cents)\n}\n",
    'src/stock.ts': "import { scale } from './internal'\n\nexport function reorderLevel(sold: number): number {\n  return scale(sold) + 1\n}\n",
    'src/tax.ts': 'export function taxOf(cents: number, percent: number): number {\n  return Math.round((cents * percent) / 100)\n}\n',
    'src/index.ts': "export * from './price'\nexport * from './stock'\nexport * from './tax'\n",
    'tests/exports.test.ts': [
      "import { readdirSync, readFileSync } from 'node:fs'",
      "import { expect, it } from 'vitest'",
      '',
      "const src = new URL('../src/', import.meta.url)",
      "it('exports every public module from src/index.ts', () => {",
      "  const index = readFileSync(new URL('index.ts', src), 'utf8')",
      "  const modules = readdirSync(src).filter(f => f !== 'index.ts' && !f.startsWith('internal'))",
      "  expect(modules.filter(f => !index.includes(`./${f.replace(/\\.ts$/, '')}'`))).toEqual([])",
      '})',
      '',
    ].join('\n'),
    'tests/fixtures/rates.json': json({ vat: 20 }),
    'tests/tax.test.ts': [
      "import { readFileSync } from 'node:fs'",
      "import { expect, it } from 'vitest'",
      "import { taxOf } from '../src/tax'",
      '',
      "it('taxes at the fixture rate', () => {",
      "  const rates = JSON.parse(readFileSync(new URL('./fixtures/rates.json', import.meta.url), 'utf8')) as { vat: number }",
      '  expect(taxOf(1000, rates.vat)).toBe(200)',
      '})',
      '',
    ].join('\n'),
    'tests/price.test.ts': "import { expect, it } from 'vitest'\nimport { doublePrice, reorderLevel } from '../src/index'\n\nit('doubles', () => expect(doublePrice(21)).toBe(42))\nit('reorders', () => expect(reorderLevel(3)).toBe(7))\n",
  }
}

/** The edits for the setups workspace ({@link setupsFiles}). */
export function setupsCorpus(): CorpusEdit[] {
  return [
    good('internal: doc comment', 'docs', edit('src/internal.ts', '/** @internal Scales an amount of cents. */', '/** @internal Scales an amount of cents by two. */')),
    bad('@internal scale takes a required factor (stripInternal; 2 importers)', 'internal-signature', edit('src/internal.ts', 'export function scale(amount: number): number {\n  return amount * 2', 'export function scale(amount: number, factor: number): number {\n  return amount * factor')),
    bad('new module src/discount.ts, not exported (a test lists src/)', 'unexported-module', write('src/discount.ts', 'export function discount(cents: number): number {\n  return Math.round(cents * 0.9)\n}\n')),
    good('new module src/discount.ts, exported from the index (one shell call)', 'new-module', () => ({
      tool: 'bash',
      args: { command: "printf 'export function discount(cents: number): number {\\n  return Math.round(cents * 0.9)\\n}\\n' > src/discount.ts && printf \"export * from './discount'\\n\" >> src/index.ts" },
    })),
    bad('the VAT fixture says 25 %', 'fixture-changed', write('tests/fixtures/rates.json', '{\n  "vat": 25\n}\n')),
    good('the rates fixture gains a reduced rate', 'fixture', write('tests/fixtures/rates.json', '{\n  "vat": 20,\n  "reduced": 5\n}\n')),
  ]
}

/**
 * A Python package as real ones are laid out (issue 28 item 2): `src/`
 * layout, an `__init__.py` importing its submodules (`from . import stock`,
 * `from .pricing import price`), a subpackage, pytest tests importing the
 * package. Python and pytest from the machine (`python3 -m pytest`).
 */
export function pythonPackageFiles(): Record<string, string> {
  return {
    'pyproject.toml': '[project]\nname = "inventory"\nversion = "0.1.0"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\npythonpath = ["src"]\n',
    '.gitignore': '__pycache__\n.dsh\n',
    'src/inventory/__init__.py': '"""Stock and prices."""\nfrom . import stock\nfrom .pricing import price\n\n__all__ = ["price", "stock"]\n',
    'src/inventory/stock.py': 'def level(sold, bought):\n    return bought - sold\n',
    'src/inventory/pricing.py': 'def price(cents, percent=0):\n    return (cents * (100 - percent) + 50) // 100\n',
    'src/inventory/legacy.py': 'def old_level(sold, bought):\n    return bought - sold\n',
    'src/inventory/report/__init__.py': 'from .lines import line\n',
    'src/inventory/report/lines.py': 'from inventory.pricing import price\n\n\ndef line(sku, cents):\n    return f"{sku}: {price(cents)}"\n',
    'tests/test_stock.py': 'from inventory import stock\n\n\ndef test_level():\n    assert stock.level(3, 10) == 7\n\n\ndef test_empty():\n    assert stock.level(0, 0) == 0\n',
    'tests/test_pricing.py': 'from inventory import price\n\n\ndef test_price():\n    assert price(1000, 10) == 900\n\n\ndef test_rounds():\n    assert price(999, 10) == 899\n',
    'tests/test_report.py': 'from inventory.report import line\n\n\ndef test_line():\n    assert line("A1", 250) == "A1: 250"\n',
  }
}

/** The edits for the Python package ({@link pythonPackageFiles}). */
export function pythonCorpus(): CorpusEdit[] {
  return [
    good('pricing: docstring', 'docs', edit('src/inventory/pricing.py', 'def price(cents, percent=0):\n', 'def price(cents, percent=0):\n    """The price after a percentage discount, rounded to the cent."""\n')),
    bad('Python module deleted through the shell (pricing.py, imported by __init__.py)', 'deleted-through-shell', sh('rm src/inventory/pricing.py')),
    good('stock: level in two steps', 'refactor', edit('src/inventory/stock.py', '    return bought - sold', '    remaining = bought - sold\n    return remaining')),
    bad('Python module moved (stock.py → stocks.py; `from . import stock`)', 'moved-module', sh('mv src/inventory/stock.py src/inventory/stocks.py')),
    good('unimported legacy.py deleted through the shell', 'unused-deleted', sh('rm src/inventory/legacy.py')),
    bad('Python package deleted whole (inventory/report)', 'deleted-through-shell', sh('rm -rf src/inventory/report')),
    good('report/lines.py moved to line.py, its importer updated (one shell call)', 'rename-all', sh("mv src/inventory/report/lines.py src/inventory/report/line.py && sed -i 's/from .lines import/from .line import/' src/inventory/report/__init__.py")),
    bad('price adds the discount', 'behaviour', edit('src/inventory/pricing.py', '(100 - percent)', '(100 + percent)')),
    good('new module tax.py and its test (one shell call)', 'new-module', sh("printf 'def tax(cents):\\n    return (cents * 20 + 50) // 100\\n' > src/inventory/tax.py && printf 'from inventory.tax import tax\\n\\n\\ndef test_tax():\\n    assert tax(1005) == 201\\n' > tests/test_tax.py")),
    bad('tests hidden by conftest collect_ignore_glob', 'hidden-test', write('tests/conftest.py', 'collect_ignore_glob = ["test_*.py"]\n')),
    good('test_empty removed on purpose (a warning)', 'removed-test', edit('tests/test_stock.py', '\n\ndef test_empty():\n    assert stock.level(0, 0) == 0\n', '\n')),
  ]
}

/**
 * A small Go module (issue 28 item 3): a package with two tests and a
 * package importing it with one. `go` from the machine.
 */
export function goModuleFiles(): Record<string, string> {
  return {
    'go.mod': 'module example.com/till\n\ngo 1.19\n',
    '.gitignore': '.dsh\n',
    'money/money.go': '// Package money does cent arithmetic.\npackage money\n\n// Add returns a + b.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n\n// Percent returns p percent of a, rounded down.\nfunc Percent(a, p int) int {\n\treturn a * p / 100\n}\n',
    'money/money_test.go': 'package money\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal("Add")\n\t}\n}\n\nfunc TestPercent(t *testing.T) {\n\tif Percent(200, 15) != 30 {\n\t\tt.Fatal("Percent")\n\t}\n}\n',
    'till/till.go': '// Package till totals a sale.\npackage till\n\nimport "example.com/till/money"\n\n// Total adds the lines.\nfunc Total(lines ...int) int {\n\tsum := 0\n\tfor _, l := range lines {\n\t\tsum = money.Add(sum, l)\n\t}\n\treturn sum\n}\n',
    'till/till_test.go': 'package till\n\nimport "testing"\n\nfunc TestTotal(t *testing.T) {\n\tif Total(1, 2, 3) != 6 {\n\t\tt.Fatal("Total")\n\t}\n}\n',
  }
}

/** The edits for the Go module ({@link goModuleFiles}). */
export function goCorpus(): CorpusEdit[] {
  return [
    good('money: doc comment', 'docs', edit('money/money.go', '// Add returns a + b.', '// Add returns the sum of a and b.')),
    bad('test hidden by a Go build tag', 'hidden-test', edit('money/money_test.go', 'package money', '//go:build slowtests\n\npackage money')),
    bad('Percent rounds up', 'behaviour', edit('money/money.go', 'return a * p / 100', 'return (a*p + 199) / 100')),
    bad('Add renamed (till calls it)', 'export-renamed', edit('money/money.go', 'func Add(', 'func Plus(')),
    good('TestPercent removed on purpose (a warning)', 'removed-test', (root: string) => {
      const text = readFileSync(join(root, 'money/money_test.go'), 'utf8')
      return { tool: 'edit_file', args: { path: 'money/money_test.go', old_string: text.slice(text.indexOf('\nfunc TestPercent')), new_string: '' } }
    }),
  ]
}
