import { describe, expect, it } from 'vitest'
import { boot, expectRolledBack, makeWorkspace, runs, type Harness } from '../helpers.ts'
import { tsJestInstall, vitestInstall } from '../registry-installs.ts'

/** Installing a runner from the registry on a fresh clone takes a while. */
const INSTALL_MS = 600_000

/** Every module of src/ but the internal ones (`_*.ts`) must be exported from src/index.ts: a test that lists a directory. */
const listingTest = (imports: string, dir: string) => `${imports}
const src = ${dir}
it('exports every public module from src/index.ts', () => {
  const index = readFileSync(join(src, 'index.ts'), 'utf8')
  for (const f of readdirSync(src)) {
    if (f === 'index.ts' || f.startsWith('_')) continue
    expect(index).toContain("'./" + f.replace(/\\.ts$/, '') + "'")
  }
})
`

const LISTING_FAILS = 'rolled back: test failed after write_file on src/tax.ts\ntests/exports.test.ts'

/** The test commands of the session that ran the listing test. */
const listingRuns = (h: Harness) => runs(h.session).filter(r => r.check === 'test' && r.argv.some(a => a.endsWith('exports.test.ts')))

/** `failure`: how the runner words the listing test's failure, after `tests/exports.test.ts`. */
async function listingVerdicts(h: Harness, failure: string): Promise<void> {
  await h.ready()
  // A new module the listing test rejects (not exported): no import reaches it, only the listing does.
  const r = await h.exec('write_file', { path: 'src/tax.ts', content: 'export const rate = 0.2\n' })
  expect(r).toEqual({ isError: true, content: `${LISTING_FAILS}${failure}` })
  await expectRolledBack(h, 'write_file', { path: 'src/tax.ts', content: 'export const rate = 0.2\n' }, r.content)
  // One it accepts (internal): kept, and the listing test ran on it.
  const before = listingRuns(h).length
  expect(await h.exec('write_file', { path: 'src/_rate.ts', content: 'export const rate = 0.2\n' })).toEqual({ content: 'created src/_rate.ts (24 bytes)' })
  expect(listingRuns(h).length).toBeGreaterThan(before)
  expect(listingRuns(h).at(-1)?.outcome).toBe('pass')
}

describe('a test that lists a directory is run for a file created in it, where the runner relates tests only by imports', () => {
  it('vitest 1 (its CLI)', async () => {
    const modules = await vitestInstall(1)
    const h = await boot(makeWorkspace('shop', {
      'src/index.ts': "export * from './cart'\nexport * from './format'\nexport * from './greeting'\nexport * from './money'\n",
      'tests/exports.test.ts': listingTest("import { readdirSync, readFileSync } from 'node:fs'\nimport { fileURLToPath } from 'node:url'\nimport { join } from 'node:path'\nimport { expect, it } from 'vitest'", "fileURLToPath(new URL('../src', import.meta.url))"),
    }, { nodeModules: modules }))
    await listingVerdicts(h, ":6 FAIL exports every public module from src/index.ts — AssertionError: expected 'export * from \\'./cart\\'\\nexport * fr…' to contain '\\'./tax\\''")
  }, INSTALL_MS)

  it('Jest (with ts-jest)', async () => {
    const modules = await tsJestInstall()
    const json = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`
    const h = await boot(makeWorkspace('', {
      'package.json': json({ name: 'tsj', private: true, jest: { preset: 'ts-jest', testEnvironment: 'node' } }),
      'tsconfig.json': json({ compilerOptions: { strict: true, esModuleInterop: true, skipLibCheck: true, types: ['jest', 'node'] }, include: ['src', 'tests'] }),
      'src/add.ts': 'export function add(a: number, b: number): number {\n  return a + b\n}\n',
      'src/index.ts': "export * from './add'\n",
      'tests/add.test.ts': "import { add } from '../src/add'\n\ntest('adds', () => {\n  expect(add(1, 2)).toBe(3)\n})\n",
      'tests/exports.test.ts': listingTest("import { readdirSync, readFileSync } from 'fs'\nimport { join } from 'path'", "join(__dirname, '../src')"),
    }, { nodeModules: modules }))
    await listingVerdicts(h, ':4 FAIL exports every public module from src/index.ts — Error: expect(received).toContain(expected) // indexOf')
  }, INSTALL_MS)
})
