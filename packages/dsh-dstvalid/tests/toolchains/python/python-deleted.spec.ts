/**
 * Python modules deleted or moved through the shell are judged by what
 * imported them: real `rm` / `mv` through the bash tool, the real
 * dsh-snapshot (shell tracking) and real pytest, on a package whose
 * `__init__.py` imports its submodules (`from . import stock`,
 * `from .pricing import price`) and a subpackage (`inventory.report`).
 */
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { boot, makeWorkspace, runs, toolError, type Harness } from '../../helpers.ts'

const hasPytest = spawnSync('python3', ['-m', 'pytest', '--version']).status === 0
if (!hasPytest) console.warn('python-deleted.spec: skipped — `python3 -m pytest` is not available')

/** The test files the last pytest run was given (after `--junitxml=…`). */
function lastTargets(h: Harness): string[] {
  const argv = runs(h.session).filter(r => r.check === 'test').at(-1)!.argv
  return argv.slice(argv.findIndex(a => a.startsWith('--junitxml=')) + 1)
}

const files = (root: string, dir: string) => readdirSync(join(root, dir)).filter(f => f !== '__pycache__').sort()

describe('Python modules deleted or moved through the shell', () => {
  it.skipIf(!hasPytest)('are rolled back when the tests of what imported them no longer load; an unimported module deleted, and a harmless call, are kept', async () => {
    const root = makeWorkspace('pydel')
    // No flaky re-runs: each rollback costs one targeted run here, not two.
    const h = await boot(root, { testArgs: [], confirmFlaky: false }, { snapshot: { real: { fsync: 'off' } } })

    // A module `__init__.py` imports (`from .pricing import price`): every test file importing the package stops loading.
    expect(await h.exec('bash', { command: 'rm src/inventory/pricing.py' })).toMatchObject(toolError(
      'rolled back: test failed after bash on src/inventory/pricing.py',
      "tests/test_pricing.py FAIL test file failed to load: ModuleNotFoundError: No module named 'inventory.pricing'",
      "tests/test_report.py FAIL test file failed to load: ModuleNotFoundError: No module named 'inventory.pricing'",
      "tests/test_stock.py FAIL test file failed to load: ModuleNotFoundError: No module named 'inventory.pricing'",
    ))
    expect(lastTargets(h)).toEqual(['tests/test_pricing.py', 'tests/test_report.py', 'tests/test_stock.py'])
    expect(files(root, 'src/inventory')).toEqual(['__init__.py', 'pricing.py', 'report', 'stock.py', 'unused.py'])

    // Moved (renamed) away from what `from . import stock` names.
    expect(await h.exec('bash', { command: 'mv src/inventory/stock.py src/inventory/stocks.py' })).toMatchObject(toolError(
      'rolled back: test failed after bash on src/inventory/stock.py, src/inventory/stocks.py',
      ...['pricing', 'report', 'stock'].map(t => `tests/test_${t}.py FAIL test file failed to load: ImportError: cannot import name 'stock' from partially initialized module 'inventory' (most likely due to a circular import) (src/inventory/__init__.py)`),
    ))
    expect(files(root, 'src/inventory')).toEqual(['__init__.py', 'pricing.py', 'report', 'stock.py', 'unused.py'])

    // A package deleted whole: only a test imports it (`from inventory.report import line`).
    expect(await h.exec('bash', { command: 'rm -rf src/inventory/report' })).toMatchObject(toolError(
      'rolled back: test failed after bash on src/inventory/report/__init__.py, src/inventory/report/lines.py',
      "tests/test_report.py FAIL test file failed to load: ModuleNotFoundError: No module named 'inventory.report'",
    ))
    expect(lastTargets(h)).toEqual(['tests/test_report.py'])
    expect(files(root, 'src/inventory/report')).toEqual(['__init__.py', 'lines.py'])

    // Nothing imports unused.py: nothing to run, and the deletion is kept.
    const testRuns = runs(h.session).filter(r => r.check === 'test').length
    expect(await h.exec('bash', { command: 'rm src/inventory/unused.py' })).toMatchObject({ content: '[exit code 0]', isError: false })
    expect(runs(h.session).filter(r => r.check === 'test').length).toBe(testRuns)
    expect(existsSync(join(root, 'src/inventory/unused.py'))).toBe(false)

    expect(await h.exec('bash', { command: 'echo hi > notes.txt' })).toMatchObject({ content: '[exit code 0]', isError: false })
    expect(existsSync(join(root, 'notes.txt'))).toBe(true)
  }, 120_000)
})
