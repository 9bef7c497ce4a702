import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'

/*
 * Where the workspace's own tools live. A leaf module: profiles and the
 * style tools both need it, and neither may import the other.
 */

/** Resolve a module the way the workspace would (its own node_modules), or undefined. */
export function resolveFromWorkspace(root: string, specifier: string): string | undefined {
  try {
    return createRequire(join(root, 'package.json')).resolve(specifier)
  } catch {
    // Not installed in the workspace.
    return undefined
  }
}

/**
 * Whether a package is installed where Node's own lookup from the workspace
 * finds it (`<dir>/node_modules/<name>` for the workspace and its parents),
 * checked on disk: a resolver hook of the running process (tsx) must not make
 * a package look installed that the workspace's own tools cannot load.
 */
export function installedInWorkspace(root: string, name: string): boolean {
  for (let dir = resolve(root); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'node_modules', name, 'package.json'))) return true
    if (dirname(dir) === dir) return false
  }
}
