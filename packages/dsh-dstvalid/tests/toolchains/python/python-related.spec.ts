import { spawnSync } from 'node:child_process'
import { mkdirSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { findPython, PytestCheck } from '../../../src/toolchains/python/check.ts'
import { readPytestConfig, sourceRoots } from '../../../src/toolchains/python/pytest-config.ts'
import { boot, makeWorkspace, readText, runs, type Harness } from '../../helpers.ts'

const hasPytest = spawnSync('python3', ['-m', 'pytest', '--version']).status === 0
if (!hasPytest) console.warn('python-related.spec: skipped — `python3 -m pytest` is not available')

/** The test files the last pytest run in the workspace was given (after `--junitxml=…`); an accepted-state run is in a copy of it. */
function lastTargets(harness: Harness): string[] {
  const argv = runs(harness.session).filter(r => r.check === 'test' && r.cwd === harness.root).at(-1)!.argv
  return argv.slice(argv.findIndex(a => a.startsWith('--junitxml=')) + 1)
}

describe('pytest: what a change affects, as pytest and Python see the project', () => {
  // Fixture `pypkg`: src/ layout (pythonpath), testpaths = tests, python_files = check_*.py,
  // norecursedirs = legacy, a package __init__ re-exporting a submodule, a conftest under tests/sub.
  it('reads the project\'s pytest config and import roots', () => {
    const root = makeWorkspace('pypkg')
    const config = readPytestConfig(root)
    expect(config).toEqual({ file: 'pyproject.toml', rootdir: '.', testpaths: ['tests'], pythonFiles: ['check_*.py'], norecursedirs: ['legacy'], pythonpath: ['src'] })
    expect(sourceRoots(root, config)).toEqual(['.', 'src'])
    const check = new PytestCheck(root, 'related')
    // Outside testpaths (scripts/) and under norecursedirs (tests/legacy) is never collected.
    expect(check.testFiles()).toEqual(['tests/check_calc.py', 'tests/check_fmt.py', 'tests/check_label.py', 'tests/sub/check_fixture.py'])
    // `from shop import calc`; through fmt/__init__ → money → calc (two hops); the package's __init__ reaches everything under it.
    expect(check.relatedTests(['src/shop/calc.py'])).toEqual(['tests/check_calc.py', 'tests/check_fmt.py', 'tests/check_label.py'])
    expect(check.relatedTests(['src/shop/fmt/__init__.py'])).toEqual(['tests/check_fmt.py', 'tests/check_label.py'])
    expect(check.relatedTests(['src/shop/__init__.py'])).toEqual(['tests/check_calc.py', 'tests/check_fmt.py', 'tests/check_label.py'])
    expect(check.relatedTests(['tests/sub/conftest.py'])).toEqual(['tests/sub/check_fixture.py'])
  })

  it.skipIf(!hasPytest)('a norecursedirs entry with a `/` (marshmallow\'s `tests/mypy_test_cases`) is matched against the path, as pytest does', () => {
    const root = makeWorkspace('', {
      'pyproject.toml': '[tool.pytest.ini_options]\nnorecursedirs = ".git docs tests/mypy_cases"\n',
      'tests/test_a.py': 'def test_a():\n    pass\n',
      'tests/mypy_cases/test_typing.py': 'x: int = "not run by pytest"\n',
      'docs/test_docs.py': 'def test_docs():\n    pass\n',
    })
    const collected = spawnSync('python3', ['-m', 'pytest', '--collect-only', '-q', '-p', 'no:cacheprovider'], { cwd: root, encoding: 'utf8' }).stdout
    expect(collected.split('\n').filter(l => l.includes('::'))).toEqual(['tests/test_a.py::test_a'])
    expect(new PytestCheck(root, 'related').testFiles()).toEqual(['tests/test_a.py'])
  })

  it.skipIf(!hasPytest)('rolls back breaks reached through `from pkg import mod`, an __init__.py, two hops, and a conftest.py', async () => {
    const root = makeWorkspace('pypkg')
    // No flaky re-runs: each rollback costs one targeted run here, not two.
    const h = await boot(root, { testArgs: [], confirmFlaky: false })

    const renamed = await h.exec('edit_file', { path: 'src/shop/calc.py', old_string: 'def add(', new_string: 'def plus(' })
    expect(renamed.content).toBe("rolled back: test failed after edit_file on src/shop/calc.py\ntests/check_calc.py FAIL test_add — AttributeError: module 'shop.calc' has no attribute 'add'")
    expect(lastTargets(h)).toEqual(['tests/check_calc.py', 'tests/check_fmt.py', 'tests/check_label.py'])
    expect(readText(root, 'src/shop/calc.py')).toContain('def add(')

    // Two hops: money.cents calls calc.discount.
    const twoHops = await h.exec('edit_file', { path: 'src/shop/calc.py', old_string: '+ 50) // 100', new_string: '+ 50) // 10' })
    expect(twoHops.content.split('\n')[0]).toBe('rolled back: test failed after edit_file on src/shop/calc.py')
    expect(twoHops.content).toContain('tests/check_fmt.py FAIL test_cents — AssertionError')

    // A package's __init__.py: every test file that stopped loading is listed, with the cause.
    const init = await h.exec('edit_file', { path: 'src/shop/fmt/__init__.py', old_string: 'import cents', new_string: 'import cent' })
    expect(init.content).toBe([
      'rolled back: test failed after edit_file on src/shop/fmt/__init__.py',
      "tests/check_fmt.py FAIL test file failed to load: ImportError: cannot import name 'cent' from 'shop.fmt.money' (src/shop/fmt/money.py)",
      "tests/check_label.py FAIL test file failed to load: ImportError: cannot import name 'cent' from 'shop.fmt.money' (src/shop/fmt/money.py)",
    ].join('\n'))

    const conftest = await h.exec('edit_file', { path: 'tests/sub/conftest.py', old_string: 'return 100', new_string: 'return 10' })
    expect(conftest.content.split('\n')[0]).toBe('rolled back: test failed after edit_file on tests/sub/conftest.py')
    expect(conftest.content).toContain('tests/sub/check_fixture.py FAIL test_amount — assert 10 == 100')
    // Its directory, as a plain pytest collects it (a conftest's collect_ignore applies to what pytest finds there).
    expect(lastTargets(h)).toEqual(['tests/sub'])

    // A conftest.py that does not load stops pytest before any report: the test files under it are named, with the cause.
    const unloadable = await h.exec('edit_file', { path: 'tests/sub/conftest.py', old_string: 'import pytest\n', new_string: 'import pytest\nimport nosuchmodule\n' })
    expect(unloadable.content).toBe("rolled back: test failed after edit_file on tests/sub/conftest.py\ntests/sub/check_fixture.py FAIL test file failed to load: tests/sub/conftest.py: ModuleNotFoundError: No module named 'nosuchmodule'")

    // The log says what each command found: the compile run that found nothing passed.
    expect(runs(h.session).filter(r => r.check === 'compile').every(r => r.outcome === 'pass')).toBe(true)
  }, 120_000)

  it.skipIf(!hasPytest)('a syntax error is a compile run that failed (verify/run outcome is what the command found)', async () => {
    const root = makeWorkspace('pypkg')
    const h = await boot(root, { testArgs: [] })
    const syntax = await h.exec('edit_file', { path: 'src/shop/calc.py', old_string: 'return a + b', new_string: 'return a +' })
    expect(syntax.content).toBe('rolled back: compile failed after edit_file on src/shop/calc.py\nsrc/shop/calc.py:2 SyntaxError invalid syntax')
    const compiles = runs(h.session).filter(r => r.check === 'compile')
    // No re-check after the byte-identical rollback (ADR 0019).
    expect(compiles.map(r => [r.exitCode, r.outcome])).toEqual([[0, 'pass'], [1, 'fail']])
    expect(h.session.ofType('verify/verdict').map(e => [e.data.check, e.data.outcome])).toEqual([['compile', 'rolled-back']])
  })
})

describe('the Python interpreter', () => {
  it('is the configured one, else the workspace virtualenv, else an active VIRTUAL_ENV, else python3', () => {
    const root = makeWorkspace('pypkg')
    expect(findPython(root, '', {})).toEqual({ command: 'python3', source: 'python3 on PATH (no virtualenv in the workspace; set Config python to choose)' })
    const venv = makeWorkspace('pypkg')
    mkdirSync(join(venv, 'env', 'bin'), { recursive: true })
    symlinkSync('/bin/true', join(venv, 'env', 'bin', 'python'))
    expect(findPython(root, '', { VIRTUAL_ENV: join(venv, 'env') })).toEqual({ command: join(venv, 'env', 'bin', 'python'), source: 'the active VIRTUAL_ENV' })
    mkdirSync(join(root, '.venv', 'bin'), { recursive: true })
    symlinkSync('/bin/true', join(root, '.venv', 'bin', 'python'))
    expect(findPython(root, '', { VIRTUAL_ENV: join(venv, 'env') })).toEqual({ command: join(root, '.venv', 'bin', 'python'), source: "the project's virtualenv .venv" })
    expect(findPython(root, '/usr/bin/python3.11', {})).toEqual({ command: '/usr/bin/python3.11', source: 'Config python' })
  })

  it.skipIf(!hasPytest)('the first notice says which interpreter runs, and it is the one that runs', async () => {
    const root = makeWorkspace('pypkg')
    const real = spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).stdout.trim()
    mkdirSync(join(root, '.venv', 'bin'), { recursive: true })
    symlinkSync(real, join(root, '.venv', 'bin', 'python'))
    const h = await boot(root, { testArgs: [], tests: 'off' })
    expect(await h.exec('edit_file', { path: 'src/shop/calc.py', old_string: 'def add(', new_string: 'def plus(' })).toEqual({ content: 'edited src/shop/calc.py' })
    // The baseline's first step announces itself; the next notice names the interpreter.
    expect(h.notices[0]!.text).toBe('measuring the baseline state: compiling…')
    expect(h.notices[1]!.text).toBe(`python: running ${join(h.ctx.dstvalid.guardFor(root).options.root, '.venv', 'bin', 'python')} (the project's virtualenv .venv)`)
    expect(runs(h.session).every(r => r.argv[0] === join(h!.ctx.dstvalid.guardFor(root).options.root, '.venv', 'bin', 'python'))).toBe(true)
  })
})
