import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { boot, makeWorkspace, readText, runs } from '../../helpers.ts'

const hasPytest = spawnSync('python3', ['-m', 'pytest', '--version']).status === 0
if (!hasPytest) console.warn('python-profile.spec: skipped — `python3 -m pytest` is not available')

describe.skipIf(!hasPytest)('Python profile (pyproject.toml → compile, pytest)', () => {
  it('keeps a good edit; rolls back a syntax error and a test break; runs only the tests that import the change', async () => {
    const root = makeWorkspace('pyproj')
    const h = await boot(root, { testArgs: [] })
    expect(await h.exec('edit_file', { path: 'report.py', old_string: 'def total(a, b):', new_string: 'def total(a, b):\n    """Formats a sum."""' })).toEqual({ content: 'edited report.py' })
    const related = runs(h.session).filter(r => r.check === 'test').at(-1)!
    expect(related.argv.at(-1)).toBe('tests/test_report.py')

    const syntax = await h.exec('edit_file', { path: 'calc.py', old_string: 'return a + b', new_string: 'return a +' })
    expect(syntax.content).toBe('rolled back: compile failed after edit_file on calc.py\ncalc.py:2 SyntaxError invalid syntax')
    expect(readText(root, 'calc.py')).toContain('return a + b')

    const broken = await h.exec('edit_file', { path: 'calc.py', old_string: '+ 50) // 100', new_string: '+ 50) // 10' })
    expect(broken.content.split('\n')).toEqual([
      'rolled back: test failed after edit_file on calc.py',
      expect.stringMatching(/^tests\/test_calc\.py FAIL test_discount — assert 8996 == 899\b/),
    ])
  }, 120_000)
})
