import { existsSync, readFileSync, realpathSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'

/** The DeepSeek Harness installation running this process. */
export interface HarnessInstall {
  /** `@deepseek-ai/dsh`'s version. */
  version: string
  /** Its package directory. */
  root: string
}

/**
 * Find the harness from its launcher (`process.argv[1]`, the `dsh` bin,
 * possibly a symlink): the nearest package.json named `@deepseek-ai/dsh`
 * above it. `undefined` when this process was not started by that launcher.
 */
export function findHarness(launcher: string | undefined = process.argv[1]): HarnessInstall | undefined {
  if (!launcher || !existsSync(launcher)) return undefined
  let dir = dirname(realpathSync(launcher))
  for (;;) {
    const file = join(dir, 'package.json')
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string }
      if (pkg.name === '@deepseek-ai/dsh' && typeof pkg.version === 'string') return { version: pkg.version, root: dir }
    }
    const up = dirname(dir)
    if (up === dir) return undefined
    dir = up
  }
}

/**
 * Import one of the harness's own packages as the harness resolves it, so the
 * host shares its module instances (its scope keys, its message constructors)
 * instead of loading second copies from this repository.
 */
export async function importFromHarness<T>(harness: HarnessInstall, specifier: string): Promise<T> {
  const path = createRequire(join(harness.root, 'package.json')).resolve(specifier)
  return await import(pathToFileURL(path).href) as T
}

/** The one line a harness version this host does not know gets. */
export function unknownHarnessLine(found: HarnessInstall | undefined, known: readonly string[]): string {
  const what = found ? `DeepSeek Harness ${found.version}` : 'a process not started by the DeepSeek Harness launcher'
  return `dsh-host-deepseek: ${what} is not a harness this host knows (known: ${known.join(', ')}); no suite plugin loaded`
}
