/**
 * Packages the tests install from the npm registry, as a user's workspace
 * would have them: each pinned set once, cached under
 * `~/.cache/dsh-dstvalid-tests/<key>` (`DSH_TEST_INSTALL_CACHE` to move it),
 * outside the clone as the pinned agent CLIs and harness are, so a fresh clone
 * of the same machine (CI) does not install them again; moved into the cache
 * in one rename so a concurrent installer loses the race harmlessly.
 * `install-fixtures.ts` makes them all at once before a test run (`.ci/run`).
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { runCommand } from 'dsh-common'

/** Where the registry installs of the tests are kept, keyed by what they hold. */
export const installCache = process.env.DSH_TEST_INSTALL_CACHE ?? join(homedir(), '.cache', 'dsh-dstvalid-tests')

/** One npm command (quiet, no audit, no fund), failing with npm's last lines. */
export async function npm(args: string[], cwd: string): Promise<void> {
  const r = await runCommand(['npm', ...args], { cwd, timeoutMs: 300_000, env: { npm_config_loglevel: 'error', npm_config_fund: 'false', npm_config_audit: 'false', npm_config_update_notifier: 'false' } })
  if (r.exitCode !== 0) throw new Error(`npm ${args.join(' ')} failed in ${cwd} (${r.exitCode ?? r.signal}): ${r.output.trim().split('\n').slice(-5).join('\n')}`)
}

/** The vitest releases tested besides the suite's own 3.x: the newest of majors 1, 2 and 4. */
export const VITEST_RELEASES = { 1: '1.6.1', 2: '2.1.9', 4: '4.1.12' } as const

/** The workspace TypeScript installed next to them (the suite's own version). */
export const WORKSPACE_TYPESCRIPT = '5.9.3'

const cacheRoot = installCache
const DONE = '.dsh-installed'

/** `dependencies` installed from the registry once (`npm install --ignore-scripts`); its `node_modules` directory. */
export async function registryInstall(key: string, dependencies: Record<string, string>): Promise<string> {
  const dir = join(cacheRoot, key)
  if (existsSync(join(dir, 'node_modules', DONE))) return join(dir, 'node_modules')
  mkdirSync(cacheRoot, { recursive: true })
  const work = mkdtempSync(join(cacheRoot, 'tmp-'))
  try {
    writeFileSync(join(work, 'package.json'), JSON.stringify({ name: `dsh-cache-${key}`, private: true, dependencies }, null, 2))
    await npm(['install', '--ignore-scripts', '--no-audit', '--no-fund'], work)
    writeFileSync(join(work, 'node_modules', DONE), '')
    rmSync(dir, { recursive: true, force: true })
    try {
      renameSync(work, dir)
    } catch (error) {
      if (!existsSync(join(dir, 'node_modules', DONE))) throw error
    }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
  return join(dir, 'node_modules')
}

/** vitest of one major (with the workspace TypeScript), from the cache. */
export function vitestInstall(major: keyof typeof VITEST_RELEASES): Promise<string> {
  const version = VITEST_RELEASES[major]
  return registryInstall(`vitest-${version}`, { vitest: version, typescript: WORKSPACE_TYPESCRIPT })
}

/** Jest 29 with ts-jest (the pairing most ts-jest projects pin), from the cache. */
export function tsJestInstall(): Promise<string> {
  return registryInstall('ts-jest-29.4.15', { 'jest': '29.7.0', 'ts-jest': '29.4.15', '@types/jest': '29.5.14', 'typescript': WORKSPACE_TYPESCRIPT })
}

/** The create-vite release whose react-ts template the tests use (its template pins `typescript: ~7.0.2`). */
export const CREATE_VITE = '9.3.0'

/**
 * The template, installed as a new user would (`npm install`, untouched),
 * once per create-vite version: packed from the registry, extracted, its
 * dependencies installed, then moved into the cache in one rename (a
 * concurrent installer loses the race harmlessly).
 */
export async function createViteTemplate(): Promise<string> {
  const template = join(cacheRoot, `create-vite-${CREATE_VITE}-react-ts`)
  if (existsSync(join(template, 'node_modules', 'typescript', 'package.json'))) return template
  mkdirSync(cacheRoot, { recursive: true })
  const work = mkdtempSync(join(cacheRoot, 'tmp-'))
  try {
    await npm(['pack', `create-vite@${CREATE_VITE}`, '--pack-destination', work], work)
    const tgz = readdirSync(work).find(f => f.endsWith('.tgz'))!
    const r = await runCommand(['tar', 'xzf', tgz], { cwd: work })
    if (r.exitCode !== 0) throw new Error(`tar failed: ${r.output}`)
    const app = join(work, 'package', 'template-react-ts')
    renameSync(join(app, '_gitignore'), join(app, '.gitignore'))
    await npm(['install', '--ignore-scripts', '--no-audit', '--no-fund'], app)
    try {
      renameSync(app, template)
    } catch (error) {
      if (!existsSync(join(template, 'node_modules', 'typescript'))) throw error
    }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
  return template
}
