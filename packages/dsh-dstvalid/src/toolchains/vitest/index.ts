import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { installedInWorkspace, resolveFromWorkspace } from '../../workspace-modules.ts'
import type { Toolchain } from '../toolchain.ts'
import { VitestCheck } from './check.ts'
import { WarmVitestCheck } from './warm.ts'
import { TestMap } from './test-map.ts'
import { FsReaders } from '../fs-readers.ts'

/** `[node, <vitest.mjs>]` for the workspace's own vitest, without a package runner. */
export function vitestCommand(root: string): string[] | undefined {
  const pkg = resolveFromWorkspace(root, 'vitest/package.json')
  if (pkg) {
    const bin = (JSON.parse(readFileSync(pkg, 'utf8')) as { bin?: string | Record<string, string> }).bin
    const rel = typeof bin === 'string' ? bin : bin?.vitest
    if (rel) return [process.execPath, resolve(dirname(pkg), rel)]
  }
  const shim = join(root, 'node_modules', '.bin', 'vitest')
  return existsSync(shim) ? [shim] : undefined
}

/** The version of the workspace's own vitest (undefined: not installed, or no readable version). */
function vitestVersion(root: string): string | undefined {
  const pkg = resolveFromWorkspace(root, 'vitest/package.json')
  if (!pkg) return undefined
  try {
    return (JSON.parse(readFileSync(pkg, 'utf8')) as { version?: string }).version
  } catch {
    // An unreadable package.json: the version is unknown (the CLI is given the newest options).
    return undefined
  }
}

/** The first vitest major whose Node API the warm runner speaks (`createVitest` with `runTestSpecifications`, `invalidateFile`, …). */
const WARM_VITEST_MAJOR = 3

const VITEST_CONFIGS = ['vitest.config', 'vitest.workspace',
  'vitest.projects'].flatMap(base => ['ts', 'mts', 'cts', 'js', 'mjs', 'cjs', 'json'].map(ext => `${base}.${ext}`))

/** Whether the workspace configures vitest itself (a vitest config or workspace file). */
function configuresVitest(root: string): boolean {
  return VITEST_CONFIGS.some(f => existsSync(join(root, f)))
}

/**
 * Vitest, the default JavaScript test runner: the warm runner (the
 * workspace's `vitest/node` in a child process) or the CLI through this
 * folder's reporter, v8 coverage for the coverage mode. When an earlier
 * runner took the tests (Jest), runs only if the workspace configures
 * vitest too.
 */
export const vitest: Toolchain = {
  name: 'vitest',
  profile: 'typescript',
  contribute({ root, config, vault, note, claimed }) {
    if (config.tests === 'off' || (claimed.has('tests') && !configuresVitest(root))) return undefined
    const coverage = config.coverage.threshold > 0
    const command = vitestCommand(root)
    const covered = coverage && !!command && installedInWorkspace(root, '@vitest/coverage-v8')
    if (coverage && command && !covered) note('@vitest/coverage-v8 is not installed in the workspace; coverage is not measured')
    if (!command) {
      if (existsSync(join(root, 'package.json'))) note('vitest is not installed in the workspace; tests are not run')
      return undefined
    }
    claimed.add('tests')
    const version = vitestVersion(root)
    const major = version === undefined ? undefined : Number.parseInt(version, 10)
    // vitest 1 and 2: the CLI, said once (their Node API is not the warm runner's).
    const older = major !== undefined && major < WARM_VITEST_MAJOR
    if (config.warmTests && older) note(`vitest ${version}: tests run through its CLI (the warm test runner needs the Node API of vitest ${WARM_VITEST_MAJOR} or later)`)
    const vitestNode = config.warmTests && !covered && !older ? resolveFromWorkspace(root, 'vitest/node') : undefined
    // One map per workspace, kept by whichever runs the tests: the warm runner, or the CLI without it (not the coverage mode's).
    const testMap = config.testSelection === 'functions' && !covered ? new TestMap(vault ? join(resolve(vault), 'test-map',
      'vitest.json') : undefined) : undefined
    // The warm runner records what tests read; the CLI relates tests only by imports, so its readers are chosen by their source.
    const fsReaders = vitestNode ? undefined : new FsReaders(root, new RegExp(config.testFilePattern))
    const tests = new VitestCheck({ root, command, mode: config.tests, extraArgs: config.testArgs, coverage: covered, testFile: new RegExp(config.testFilePattern),
      ...(fsReaders ? { fsReaders } : {}), ...(major === undefined || Number.isNaN(major) ? {} : { major }), ...(testMap && !vitestNode ? { testMap } : {}) })
    const run = vitestNode ? new WarmVitestCheck({ root, vitestNode, mode: config.tests, extraArgs: config.testArgs, cli: tests,
      maxRssMb: config.warmTestsMaxRssMb, ...(vault ? { vault } : {}), ...(testMap ? { testMap } : {}) }) : tests
    return { tests: [run], ...(covered ? { coverage: tests } : {}) }
  },
}
