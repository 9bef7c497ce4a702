/**
 * A test that passed in the accepted state and no longer runs after a write
 * (no longer collected, or skipped) is a regression, unless the write
 * removed or renamed it on purpose: then it is kept with a warning. The
 * accepted result is measured only for what is suspect after the write,
 * on the accepted content (`go test -overlay`, a copy for pytest).
 */
import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { boot, expectRolledBack, makeWorkspace, readText, runs, testRuns } from './helpers.ts'

const hasGo = spawnSync('go', ['version']).status === 0
const hasPytest = spawnSync('python3', ['-m', 'pytest', '--version']).status === 0
if (!hasGo) console.warn('vanished-tests.spec: Go cases skipped — `go` is not on PATH')
if (!hasPytest) console.warn('vanished-tests.spec: pytest cases skipped — `python3 -m pytest` is not available')

describe.skipIf(!hasGo)('Go: tests hidden by the write are regressions; tests it removed are a warning', () => {
  it('a build tag added to a passing test file, as the first write of the session, is rolled back', async () => {
    const root = makeWorkspace('gomod')
    const h = await boot(root, { testArgs: [] })
    await expectRolledBack(h, 'edit_file', { path: 'calc/calc_test.go', old_string: 'package calc', new_string: '//go:build slowtests\n\npackage calc' },
      'rolled back: test failed after edit_file on calc/calc_test.go',
      'calc GONE 2 tests that passed no longer run (not collected, or skipped): TestAdd, TestDiscount')
    // The after-state first; the accepted content of the package served to the compiler, never written.
    expect(testRuns(h)).toEqual([
      ['go test -json -vet=off ./calc ./report', 'pass'],
      ['go test -json -overlay -vet=off ./calc', 'pass'],
    ])
  })

  it('a t.Skip added to a passing test is rolled back; a test the write deletes is kept with a warning', async () => {
    const root = makeWorkspace('gomod')
    const h = await boot(root, { testArgs: [] })
    await expectRolledBack(h, 'edit_file', { path: 'calc/calc_test.go', old_string: 'func TestDiscount(t *testing.T) {', new_string: 'func TestDiscount(t *testing.T) {\n\tt.Skip("later")' },
      'rolled back: test failed after edit_file on calc/calc_test.go',
      'calc GONE 1 test that passed no longer runs (not collected, or skipped): TestDiscount')

    const text = readText(root, 'calc/calc_test.go')
    const removeAdd = text.slice(text.indexOf('func TestAdd'), text.indexOf('func TestDiscount'))
    const removed = await h.exec('edit_file', { path: 'calc/calc_test.go', old_string: removeAdd, new_string: '' })
    expect(removed.content).toBe([
      'edited calc/calc_test.go',
      'warning: kept, but tests that passed no longer run (test): was removing them intended?',
      'calc GONE 1 test that passed was removed or renamed by this write: TestAdd',
    ].join('\n'))
    expect(readText(root, 'calc/calc_test.go')).not.toContain('TestAdd')
    // Gone from the accepted state with the write: the next write is judged without it.
    expect(await h.exec('edit_file', { path: 'calc/calc.go', old_string: 'return a + b', new_string: 'return b + a' })).toEqual({ content: 'edited calc/calc.go' })
  })
})

describe.skipIf(!hasPytest)('pytest: tests hidden by the write are regressions; tests it removed are a warning', () => {
  it('a new conftest.py whose collect_ignore_glob hides the test files is rolled back', async () => {
    const root = makeWorkspace('pyproj')
    const h = await boot(root, { testArgs: [], confirmFlaky: false })
    await expectRolledBack(h, 'write_file', { path: 'tests/conftest.py', content: 'collect_ignore_glob = ["test_*.py"]\n' },
      'rolled back: test failed after write_file on tests/conftest.py',
      'tests/test_calc.py GONE 2 tests that passed no longer run (not collected, or skipped): test_add, test_discount',
      'tests/test_report.py GONE 1 test that passed no longer runs (not collected, or skipped): test_total')
    // pytest is given the conftest's directory, as a plain run collects it; then the accepted content, in a copy.
    const [after, accepted] = runs(h.session).filter(r => r.check === 'test')
    expect(after!.argv.at(-1)).toBe('tests')
    expect(after!.cwd).toBe(root)
    expect(accepted!.argv.slice(-2)).toEqual(['tests/test_calc.py', 'tests/test_report.py'])
    expect(accepted!.cwd).not.toBe(root)
  })

  it('a skip mark on a passing test is rolled back; a test the write deletes is kept with a warning', async () => {
    const root = makeWorkspace('pyproj')
    const h = await boot(root, { testArgs: [], confirmFlaky: false })
    await expectRolledBack(h, 'edit_file', { path: 'tests/test_calc.py', old_string: 'def test_discount', new_string: 'import pytest\n\n\n@pytest.mark.skip\ndef test_discount' },
      'rolled back: test failed after edit_file on tests/test_calc.py',
      'tests/test_calc.py GONE 1 test that passed no longer runs (not collected, or skipped): test_discount')

    const removed = await h.exec('edit_file', { path: 'tests/test_calc.py', old_string: 'def test_add():\n    assert add(150, 275) == 425\n', new_string: '' })
    expect(removed.content).toBe([
      'edited tests/test_calc.py',
      'warning: kept, but tests that passed no longer run (test): was removing them intended?',
      'tests/test_calc.py GONE 1 test that passed was removed or renamed by this write: test_add',
    ].join('\n'))
    // A test file the write deletes: its tests were removed on purpose too.
    const deleted = await h.exec('bash', { command: 'rm tests/test_report.py' })
    expect(deleted.content).toContain('warning: kept, but tests that passed no longer run (test): was removing them intended?')
  })
})

// The warm vitest runner: a type-checker and a runner boot; minutes on a loaded machine.
describe('vitest: the same comparison, fed by the warm runner', { timeout: 600_000 }, () => {
  it('an it.skip added to a passing test is rolled back (its accepted result measured on served content); a test the write removes is kept with a warning', async () => {
    const root = makeWorkspace()
    const h = await boot(root, { tsconfig: 'tsconfig.full.json' })
    // Nothing of this spec is skipped: `it.skip` below is the text the agent's edit writes into the workspace's
    // test file, the hiding this spec asserts is rolled back.
    await expectRolledBack(h, 'edit_file', { path: 'tests/money.test.ts', old_string: "it('applies a percentage discount'", new_string: "it.skip('applies a percentage discount'" },
      'rolled back: test failed after edit_file on tests/money.test.ts',
      'tests/money.test.ts GONE 1 test that passed no longer runs (not collected, or skipped): money > applies a percentage discount')
    expect(runs(h.session).filter(r => r.check === 'test').map(r => r.argv.join(' '))).toEqual([
      'vitest related tests/money.test.ts --run (warm)',
      'vitest run tests/money.test.ts (the content before the write) (warm)',
    ])
    // A test file excluded by a new vitest config: the config is not served, so the accepted state of every test is measured before it.
    await expectRolledBack(h, 'write_file', { path: 'vitest.config.ts', content: "import { defineConfig } from 'vitest/config'\n\nexport default defineConfig({ test: { exclude: ['tests/money.test.ts', '**/node_modules/**'] } })\n" },
      'rolled back: test failed after write_file on vitest.config.ts',
      'tests/money.test.ts GONE 2 tests that passed no longer run (not collected, or skipped): money > adds cents, money > applies a percentage discount')
    const removed = await h.exec('edit_file', { path: 'tests/money.test.ts', old_string: "  it('adds cents', () => expect(add(150, 275)).toBe(425))\n", new_string: '' })
    expect(removed.content).toBe([
      'edited tests/money.test.ts',
      'warning: kept, but tests that passed no longer run (test): was removing them intended?',
      'tests/money.test.ts GONE 1 test that passed was removed or renamed by this write: money > adds cents',
    ].join('\n'))
  })
})

// fast-check's `test.prop` names a test after the seed it drew (`… (with seed=-1843592893)`): a new id every run.
describe('vitest: a test whose name carries a number drawn at run time is the same test on every run', { timeout: 600_000 }, () => {
  it('a harmless write is kept (the old id is not "gone"); a write that breaks it is rolled back (neither a new test nor flaky)', async () => {
    const root = makeWorkspace('shop', {
      'src/twice.ts': 'export function twice(n: number): number {\n  return n * 2\n}\n',
      'tests/twice.test.ts': [
        "import { expect, it } from 'vitest'",
        "import { twice } from '../src/twice.ts'",
        '',
        'const seed = Math.floor(Math.random() * 2 ** 31)',
        'it(`doubles (with seed=${seed})`, () => expect(twice(seed)).toBe(seed + seed))',
        '',
      ].join('\n'),
    })
    const h = await boot(root, { tsconfig: 'tsconfig.full.json' })
    expect(await h.exec('edit_file', { path: 'src/twice.ts', old_string: 'n * 2', new_string: '2 * n' })).toEqual({ content: 'edited src/twice.ts' })
    // Another seed, another id: the test that passed still runs.
    expect(await h.exec('edit_file', { path: 'src/twice.ts', old_string: '2 * n', new_string: 'n + n' })).toEqual({ content: 'edited src/twice.ts' })
    const broken = await h.exec('edit_file', { path: 'src/twice.ts', old_string: 'n + n', new_string: 'n + n + 1' })
    expect(broken.isError).toBe(true)
    expect(broken.content).toMatch(/^rolled back: test failed after edit_file on src\/twice\.ts\ntests\/twice\.test\.ts:5 FAIL doubles \(with seed=\d+\) — AssertionError: expected \d+ to be \d+/)
    expect(readText(root, 'src/twice.ts')).toContain('return n + n\n')
  })
})
