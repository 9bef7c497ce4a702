import { describe, expect, it } from 'vitest'
import { boot, breakDiscount, discountTestFails, expectRolledBack, makeWorkspace, runs } from '../../helpers.ts'
import { vitestInstall } from '../../registry-installs.ts'

/** Installing a vitest from the registry on a fresh clone takes a while. */
const INSTALL_MS = 600_000

describe.each([1, 2, 4] as const)('vitest %i, installed from the registry (the shop workspace)', major => {
  it('rolls back a write that breaks a related test, keeps a good one, each test named with its line', async () => {
    const modules = await vitestInstall(major)
    const h = await boot(makeWorkspace('shop', {}, { nodeModules: modules }))
    await h.ready()

    await expectRolledBack(h, 'edit_file', breakDiscount, 'rolled back: test failed after edit_file on src/money.ts', discountTestFails)
    expect(await h.exec('edit_file', { path: 'src/money.ts', old_string: 'Math.round(amount * (1 - percent / 100))', new_string: 'Math.round((amount * (100 - percent)) / 100)' }))
      .toEqual({ content: 'edited src/money.ts' })
    // A new module no test imports: nothing to run (vitest 1 and 2 write no report then), kept and verified.
    expect(await h.exec('write_file', { path: 'src/tax.ts', content: 'export const rate = 0.2\n' })).toEqual({ content: 'created src/tax.ts (24 bytes)' })
    expect(h.results.map(r => [r.check, r.outcome])).toEqual([['typecheck', 'pass'], ['test', 'rolled-back'], ['typecheck', 'pass'], ['test', 'pass'], ['typecheck', 'pass'], ['test', 'pass']])

    const tests = runs(h.session).filter(r => r.check === 'test')
    // vitest 1 and 2: the CLI (their Node API is not the warm runner's), without the options they reject;
    // vitest 4: the warm runner, as for 3.
    const warm = major >= 3
    expect(tests.every(r => r.argv.at(-1) === '(warm)')).toBe(warm)
    if (!warm) expect(tests.filter(r => r.argv.includes('--includeTaskLocation'))).toEqual([])
    // The accepted state of src/money.ts's tests, the related run, the failing test alone (no re-check after
    // the byte-identical rollback, ADR 0019), the good write's related run (its accepted state is current already), the new module's.
    expect(tests.map(r => r.outcome)).toEqual(['pass', 'fail', 'fail', 'pass', 'pass'])
  }, INSTALL_MS)
})

/** A browser-like environment without a DOM: modules load as vite serves them to a browser (jsdom's and happy-dom's way). */
const WEB_ENV = "export default { name: 'web', transformMode: 'web', viteEnvironment: 'client', setup() { return { teardown() {} } } }\n"

// The warm runner (vitest 3 and 4). vitest 1 and 2 (the CLI) load setup files past vite's `server.fs` checks.
describe.each([3, 4] as const)('vitest %i, tests in a browser-like environment (jsdom, happy-dom)', major => {
  const modules = () => major === 3 ? Promise.resolve(undefined) : vitestInstall(major)
  it('judges the tests: vite serves dsh\'s own setup files to them (it refused, every test file failed before and after, and a breaking write was kept)', async () => {
    const h = await boot(makeWorkspace('shop', { 'web-env.mjs': WEB_ENV, 'vitest.config.mjs': "export default { test: { environment: './web-env.mjs' } }\n" }, { nodeModules: await modules() }))
    await h.ready()
    await expectRolledBack(h, 'edit_file', breakDiscount, 'rolled back: test failed after edit_file on src/money.ts', discountTestFails)
    expect(h.results.map(r => [r.check, r.outcome])).toEqual([['typecheck', 'pass'], ['test', 'rolled-back']])
  }, INSTALL_MS)

  it('a run in which vitest could not load dsh\'s own setup file judges nothing: the write is kept, not verified, and says why', async () => {
    // The workspace denies the recorder by name: it fails to load in every test file.
    const config = "export default { server: { fs: { deny: ['**/reads-recorder.mjs'] } }, test: { environment: './web-env.mjs' } }\n"
    const h = await boot(makeWorkspace('shop', { 'web-env.mjs': WEB_ENV, 'vitest.config.mjs': config }, { nodeModules: await modules() }))
    await h.ready()
    const r = await h.exec('edit_file', breakDiscount)
    expect(r.content).toMatch(/^edited src\/money\.ts\nwarning: not verified: vitest could not load dsh's own setup file in tests\/\w+\.test\.ts \(.*reads-recorder\.mjs.*\): the tests were not judged$/)
  }, INSTALL_MS)
})
