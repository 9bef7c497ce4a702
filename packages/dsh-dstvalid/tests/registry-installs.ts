/**
 * Packages the tests install from the npm registry, as a user's workspace
 * would have them: each pinned set once, cached under the repository's
 * `node_modules/.cache/dsh-dstvalid/<key>` (a fresh clone installs it on its
 * first run), moved into the cache in one rename so a concurrent installer
 * loses the race harmlessly.
 */
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { repoNodeModules } from './helpers.ts'
import { npm } from './ts7-workspaces.ts'

/** The vitest releases tested besides the suite's own 3.x: the newest of majors 1, 2 and 4. */
export const VITEST_RELEASES = { 1: '1.6.1', 2: '2.1.9', 4: '4.1.12' } as const

/** The workspace TypeScript installed next to them (the suite's own version). */
export const WORKSPACE_TYPESCRIPT = '5.9.3'

const cacheRoot = join(repoNodeModules, '.cache', 'dsh-dstvalid')
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
