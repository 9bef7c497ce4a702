/**
 * A judged shell call costs what a write of the same files costs: nothing
 * of the suite is measured before it; after it, its related tests run, and
 * only those that fail are measured on the content from before it (the
 * snapshot's pre-images, served to the runner or mounted in a namespace).
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { boot, discountTestFails, makeWorkspace, readText, testRuns } from './helpers.ts'

const snapshot = { snapshot: { real: { fsync: 'off' as const } } }

/** `sed` making the discount round up: tests/money.test.ts fails. */
const breakDiscount = "sed -i 's/Math.round(amount/Math.ceil(amount/' src/money.ts"

// Each test boots a type-checker and vitest: minutes on a loaded machine.
describe('a judged shell call measures no whole suite before it runs', { timeout: 600_000 }, () => {
  it('the warm runner: the related tests after the call, then the failing file on the content before, served', async () => {
    const root = makeWorkspace()
    const h = await boot(root, { tsconfig: 'tsconfig.full.json' }, snapshot)
    const before = readText(root, 'src/money.ts')
    const r = await h.exec('bash', { command: breakDiscount })
    expect(r).toEqual({ isError: true, exitCode: 0, content: `rolled back: test failed after bash on src/money.ts\n${discountTestFails}` })
    expect(readText(root, 'src/money.ts')).toBe(before)
    expect(testRuns(h)).toEqual([
      ['vitest related src/money.ts --run (warm)', 'fail'],
      ['vitest run tests/money.test.ts (the content before the write) (warm)', 'pass'],
      ['vitest run tests/money.test.ts -t ^(money applies a percentage discount)$ (warm)', 'fail'],
    ])
    // A call whose tests pass runs them once.
    expect(await h.exec('bash', { command: "sed -i 's/return a + b/return b + a/' src/money.ts" })).toEqual({ content: '[exit code 0]', exitCode: 0, isError: false })
    expect(testRuns(h).slice(3)).toEqual([['vitest related src/money.ts --run (warm)', 'pass']])
  })

  it('the vitest CLI: the failing file measured in a mount namespace; a file the call created hidden there', async () => {
    const root = makeWorkspace('shop', {
      // A test that lists src/: every module but index.ts must be named there.
      'tests/exports.test.ts': [
        "import { readdirSync, readFileSync } from 'node:fs'",
        "import { expect, it } from 'vitest'",
        "it('exports every module', () => {",
        "  const index = readFileSync('src/index.ts', 'utf8')",
        "  for (const f of readdirSync('src')) if (f !== 'index.ts') expect(index).toContain(f.replace(/\\.ts$/, ''))",
        '})',
        '',
      ].join('\n'),
      'src/index.ts': "export * from './cart'\nexport * from './format'\nexport * from './greeting'\nexport * from './money'\n",
    })
    const h = await boot(root, { tsconfig: 'tsconfig.full.json', warmTests: false }, snapshot)
    const r = await h.exec('bash', { command: "printf 'export const rate = 0.2\\n' > src/tax.ts" })
    expect(r.isError).toBe(true)
    expect(r.content.split('\n')[0]).toBe('rolled back: test failed after bash on src/tax.ts')
    expect(existsSync(join(root, 'src/tax.ts'))).toBe(false)
    // The CLI's argv, from the subcommand on (the reporter's options left out).
    const runs = testRuns(h).map(([argv, outcome]) => [argv!.replace(/^.*vitest\.mjs /, '').split(' --')[0]!, ...argv!.match(/\(the content before.*\)$/) ?? [], outcome])
    // No whole-suite run before the call: the related tests (and the listing test) after it, the failing one on the content before.
    expect(runs).toEqual([
      ['related src/tax.ts tests/exports.test.ts', 'fail'],
      ['run tests/exports.test.ts', '(the content before the write, in a mount namespace)', 'pass'],
      ['run tests/exports.test.ts -t ^(exports every module)$', 'fail'],
    ])
  })

  it('the vitest CLI: a file the call deleted is put back for the run on the content before, in a mount namespace', async () => {
    const root = makeWorkspace('shop', {
      'tests/data.txt': 'cents\n',
      'tests/data.test.ts': "import { readFileSync } from 'node:fs'\nimport { expect, it } from 'vitest'\n\nit('reads its data', () => expect(readFileSync('tests/data.txt', 'utf8')).toBe('cents\\n'))\n",
    })
    const h = await boot(root, { tsconfig: 'tsconfig.full.json', warmTests: false }, snapshot)
    const r = await h.exec('bash', { command: 'rm tests/data.txt' })
    expect(r.content.split('\n')[0]).toBe('rolled back: test failed after bash on tests/data.txt')
    expect(readText(root, 'tests/data.txt')).toBe('cents\n')
    const runs = testRuns(h).map(([argv, outcome]) => [argv!.replace(/^.*vitest\.mjs /, '').split(' --')[0]!, ...argv!.match(/\(the content before.*\)$/) ?? [], outcome])
    expect(runs).toEqual([
      ['related tests/data.txt tests/data.test.ts', 'fail'],
      ['run tests/data.test.ts', '(the content before the write, in a mount namespace)', 'pass'],
      ['run tests/data.test.ts -t ^(reads its data)$', 'fail'],
    ])
  })
})
