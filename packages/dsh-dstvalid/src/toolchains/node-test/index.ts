import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Toolchain } from '../toolchain.ts'
import { NodeTestCheck } from './check.ts'

/** Whether the workspace's `test` script runs Node's own test runner (`node --test …`). */
function usesNodeTest(root: string): boolean {
  try {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts?: Record<string, unknown> }
    const script = pkg.scripts?.test
    return typeof script === 'string' && /(?:^|[\s;&|(])node\s+(?:[^;&|]*\s)?--test(?:\s|$)/.test(script)
  } catch {
    // No package.json, or not JSON: no test script.
    return false
  }
}

/**
 * Node's own test runner, when the workspace's `test` script is
 * `node --test …`: the test files the change's importers reach, run by
 * the running Node through this folder's reporter. Takes the tests (vitest
 * steps aside unless the workspace configures it too).
 */
export const nodeTest: Toolchain = {
  name: 'node-test',
  profile: 'typescript',
  contribute({ root, config, claimed }) {
    if (config.tests === 'off' || !usesNodeTest(root)) return undefined
    claimed.add('tests')
    return { tests: [new NodeTestCheck({ root, mode: config.tests })] }
  },
}
