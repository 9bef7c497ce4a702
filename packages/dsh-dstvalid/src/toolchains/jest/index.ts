import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { resolveFromWorkspace } from '../../workspace-modules.ts'
import type { Toolchain } from '../toolchain.ts'
import { JestCheck } from './check.ts'
import { FsReaders } from '../fs-readers.ts'

/** `[node, <jest>/bin/jest.js]` for the workspace's own Jest, without a package runner. */
function jestCommand(root: string): string[] | undefined {
  const pkg = resolveFromWorkspace(root, 'jest/package.json')
  if (!pkg) return undefined
  const bin = (JSON.parse(readFileSync(pkg, 'utf8')) as { bin?: string | Record<string, string> }).bin
  const rel = typeof bin === 'string' ? bin : bin?.jest
  return rel ? [process.execPath, resolve(dirname(pkg), rel)] : undefined
}

const JEST_CONFIGS = ['jest.config.js', 'jest.config.ts', 'jest.config.mjs', 'jest.config.cjs', 'jest.config.cts', 'jest.config.mts', 'jest.config.json']

/** Whether the workspace configures Jest: a `jest.config.*`, or a `jest` key in package.json. */
function configuresJest(root: string): boolean {
  if (JEST_CONFIGS.some(f => existsSync(join(root, f)))) return true
  try {
    return 'jest' in (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as object)
  } catch {
    // No package.json, or not JSON: nothing configures Jest there.
    return false
  }
}

/**
 * Jest, when the workspace configures it: `jest --findRelatedTests --json`
 * with the workspace's own Jest. Takes the tests (a later JavaScript test
 * runner steps aside unless the workspace configures that one too), even
 * when Jest is not installed (then nothing runs, with a note).
 */
export const jest: Toolchain = {
  name: 'jest',
  profile: 'typescript',
  contribute({ root, config, note, claimed }) {
    if (config.tests === 'off' || !configuresJest(root)) return undefined
    claimed.add('tests')
    const command = jestCommand(root)
    if (!command) {
      note('the workspace configures Jest but jest is not installed in it; its tests are not run')
      return undefined
    }
    return { tests: [new JestCheck({ root, command, mode: config.tests === 'all' ? 'all' : 'related', extraArgs: config.jestArgs,
      fsReaders: new FsReaders(root, new RegExp(config.testFilePattern)) })] }
  },
}
