import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { type CheckIO } from 'dsh-dstvalid'
import { findImporters, formatImpact } from '../src/impact.ts'
import { GoImpact } from '../src/toolchains/go/impact.ts'
import { PythonImpact, pythonImports } from '../src/toolchains/python/impact.ts'
import { boot, makeWorkspace, readText, STOPPED } from './helpers.ts'

const hasGo = spawnSync('go', ['version']).status === 0

/**
 * The shop fixture plus a re-export and type-only imports. Importers of src/money.ts:
 *   1 hop:  src/cart.ts, src/format.ts (import type), src/index.ts (export * from), tests/money.test.ts
 *   2 hops: src/checkout.ts (via index.ts and cart.ts), src/label.ts (via format.ts: types only),
 *           tests/cart.test.ts, tests/format.test.ts (via format.ts: types only)
 */
const graph = {
  'src/index.ts': `export * from './money.ts'\nexport { total } from './cart.ts'\n`,
  'src/checkout.ts': `import { total } from './index.ts'\nimport type { Line } from './cart.ts'\n\nexport const checkout = (lines: Line[]) => total(lines)\n`,
  'src/label.ts': `import { formatCents } from './format.ts'\n\nexport const label = (amount: number) => \`total: \${formatCents(amount)}\`\n`,
}
const moneyImpact = 'impact: 8 files import src/money.ts (nearest first): src/cart.ts, src/format.ts (type-only), src/index.ts, tests/money.test.ts, '
  + 'src/checkout.ts (2 hops), src/label.ts (2 hops, type-only), tests/cart.test.ts (2 hops), tests/format.test.ts (2 hops, type-only)'
const goodEdit = { path: 'src/money.ts', old_string: 'return a + b', new_string: 'return b + a' }

const silentIO: CheckIO = { record: () => {}, notice: () => {}, timeoutMs: 60_000, maxOutputBytes: 1 << 20 }

describe('change impact from the TypeScript program', () => {
  it('lists transitive importers before the write, nearest first, through re-exports and type-only imports; appended to the result', async () => {
    const root = makeWorkspace('shop', graph)
    const h = await boot(root, { tests: 'off', tsconfig: 'tsconfig.full.json', impact: 'result' })
    const seenAtNotice: string[] = []
    h.ctx.on('dstvalid/notice', n => { if (n.text.startsWith('impact:')) seenAtNotice.push(readText(root, 'src/money.ts')) })
    const before = readText(root, 'src/money.ts')
    const r = await h.exec('edit_file', goodEdit)
    expect(r).toEqual({ content: `edited src/money.ts\n${moneyImpact}` })
    // Announced before the write ran.
    expect(seenAtNotice).toEqual([before])
    expect(h.notices.filter(n => n.text.startsWith('impact:')).map(n => [n.level, n.text])).toEqual([['info', moneyImpact]])
    // A file nothing imports: a notice says so, the result is untouched.
    expect(await h.exec('edit_file', { path: 'src/label.ts', old_string: 'total: ', new_string: 'Total: ' })).toEqual({ content: 'edited src/label.ts' })
    expect(h.notices.map(n => n.text)).toContain('impact: nothing in the workspace imports src/label.ts')
  })

  it('caps the list at impactMax; `notice` leaves the result alone; a rolled-back write carries no impact line', async () => {
    const root = makeWorkspace('shop', graph)
    const noticing = await boot(root, { tests: 'off', tsconfig: 'tsconfig.full.json', impact: 'notice', impactMax: 3 })
    expect(await noticing.exec('edit_file', goodEdit)).toEqual({ content: 'edited src/money.ts' })
    expect(noticing.notices.filter(n => n.text.startsWith('impact:')).map(n => n.text)).toEqual([
      'impact: 8 files import src/money.ts (nearest first): src/cart.ts, src/format.ts (type-only), src/index.ts, … and 5 more',
    ])
    await noticing.fiber.dispose()
    const h = await boot(root, { tests: 'off', tsconfig: 'tsconfig.full.json', impact: 'result', impactMax: 1 })
    const broken = await h.exec('edit_file', { path: 'src/money.ts', old_string: 'return b + a', new_string: 'return "x"' })
    expect(broken.content.split('\n')).toEqual([
      'rolled back: typecheck failed after edit_file on src/money.ts',
      "src/money.ts:5 TS2322 Type 'string' is not assignable to type 'number'.",
      STOPPED,
    ])
  })

  it('costs nothing when off: no graph request, no notice', async () => {
    const root = makeWorkspace('shop', graph)
    const h = await boot(root, { tests: 'off', tsconfig: 'tsconfig.full.json' })
    expect(h.ctx.dstvalid.guardFor(root).options.impact).toEqual([])
    expect(await h.exec('edit_file', goodEdit)).toEqual({ content: 'edited src/money.ts' })
    expect(h.notices.some(n => n.text.startsWith('impact'))).toBe(false)
  })
})

describe('change impact from Go packages and Python imports', () => {
  it.skipIf(!hasGo)('Go: the packages that import the edited file\'s package (go list)', async () => {
    const root = makeWorkspace('gomod')
    const list = await new GoImpact(root).importers({ paths: [], files: ['calc/calc.go'] }, 10, silentIO)
    expect(formatImpact(list!)).toBe('impact: 1 package imports calc (nearest first): report')
    expect(await new GoImpact(root).importers({ paths: [], files: ['README.md'] }, 10, silentIO)).toBeUndefined()
  })

  it('Python: files whose imports reach the edited module, transitively', async () => {
    const root = makeWorkspace('pyproj')
    const list = await new PythonImpact(root).importers({ paths: [], files: ['calc.py'] }, 10, silentIO)
    expect(formatImpact(list!)).toBe('impact: 3 files import calc.py (nearest first): report.py, tests/test_calc.py, tests/test_report.py (2 hops)')
  })

  it('Python import forms: dotted, aliased, relative, package and submodule', () => {
    const known = new Set(['pkg/__init__.py', 'pkg/a.py', 'pkg/sub/__init__.py', 'pkg/sub/b.py', 'top.py', 'pkg/sub/c.py'])
    const edges = (file: string, text: string) => pythonImports(file, text, known).map(e => e.to).sort()
    expect(edges('x.py', 'import pkg.a as alias, top\n')).toEqual(['pkg/a.py', 'top.py'])
    expect(edges('x.py', 'from pkg import a\nfrom pkg.sub import (\n  b,\n  missing,\n)\n')).toEqual(['pkg/a.py', 'pkg/sub/b.py'])
    expect(edges('pkg/sub/c.py', 'from . import b\nfrom ..a import thing\n')).toEqual(['pkg/a.py', 'pkg/sub/b.py'])
    expect(edges('x.py', 'from pkg.sub import helper\n')).toEqual(['pkg/sub/__init__.py'])
  })
})

describe('the import graph walk', () => {
  it('is nearest first, never lists the targets, and marks nodes reached only through types', () => {
    const list = findImporters([
      { from: 'b', to: 'a' }, { from: 'c', to: 'a', typeOnly: true }, { from: 'd', to: 'c' },
      { from: 'd', to: 'b' }, { from: 'a', to: 'd' }, { from: 'e', to: 'c' },
    ], ['a'], 10)
    expect(list.importers).toEqual([
      { file: 'b', distance: 1, typeOnly: false },
      { file: 'c', distance: 1, typeOnly: true },
      { file: 'd', distance: 2, typeOnly: false },
      { file: 'e', distance: 2, typeOnly: true },
    ])
    expect(formatImpact(findImporters([], ['a'], 10))).toBeUndefined()
  })
})
