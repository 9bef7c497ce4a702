import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { onPath } from '../../modes/style-tool.ts'
import type { Toolchain } from '../toolchain.ts'
import { findPython, PythonAnnouncer, PythonCompileCheck, PytestCheck } from './check.ts'
import { PythonImpact } from './impact.ts'
import { RuffTool } from './ruff.ts'

/** Python: a compile of the changed files, pytest (its own config, the import closure of the changed modules), the import graph as change impact, ruff. */
export const python: Toolchain = {
  name: 'python',
  profile: 'python',
  detect: root => ['pyproject.toml', 'setup.py', 'setup.cfg', 'pytest.ini'].some(f => existsSync(join(root, f))),
  styleTools: [{
    name: 'ruff',
    configFiles: ['ruff.toml', '.ruff.toml'],
    configuredIn: read => /^\[tool\.ruff\b/m.test(read('pyproject.toml')),
    locate: root => {
      const ruff = ['.venv/bin/ruff', 'venv/bin/ruff'].map(p => resolve(root, p)).find(p => existsSync(p)) ?? onPath('ruff')
      return ruff ? new RuffTool(root, ruff) : 'ruff is configured but not installed (no .venv/bin/ruff, none on PATH); style does not run it'
    },
  }],
  contribute({ root, config, note }) {
    // One announcer: the first Python check to run says which interpreter it is.
    const python = new PythonAnnouncer(findPython(root, config.python))
    const tests = config.tests !== 'off' ? [new PytestCheck(root, config.tests, config.testArgs, python)] : []
    if (config.coverage.threshold > 0) note('coverage is not measured for Python (vitest and go test only)')
    return { checks: [new PythonCompileCheck(root, python)], impact: [new PythonImpact(root)], tests }
  },
}
