import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

/** The workspace's own `typescript` package, as installed. */
export interface WorkspaceTypescript {
  /** Directory of the package (`<ws>/node_modules/typescript`). */
  dir: string
  version: string
  major: number
}

/** The `typescript` package Node's lookup from `root` finds, or undefined. */
export function workspaceTypescript(root: string): WorkspaceTypescript | undefined {
  let pkg: string
  try {
    // `typescript/package.json` is exported by every generation (5.x: no exports map; 7.x: listed).
    pkg = createRequire(join(root, 'package.json')).resolve('typescript/package.json')
  } catch {
    // Not installed in the workspace.
    return undefined
  }
  const version = String((JSON.parse(readFileSync(pkg, 'utf8')) as { version?: unknown }).version ?? '')
  const major = Number(/^(\d+)\./.exec(version)?.[1] ?? NaN)
  return Number.isFinite(major) ? { dir: dirname(pkg), version, major } : undefined
}

/**
 * How to start TypeScript 7's native `tsc` of an installed package: the
 * platform package's executable when it is there (no Node wrapper between
 * us and the compiler), else the package's `bin/tsc` through Node.
 */
export function nativeTscCommand(ts: WorkspaceTypescript): string[] {
  const platformPackage = `@typescript/typescript-${process.platform}-${process.arch}/package.json`
  try {
    const pkg = createRequire(join(ts.dir, 'package.json')).resolve(platformPackage)
    const exe = join(dirname(pkg), 'lib', process.platform === 'win32' ? 'tsc.exe' : 'tsc')
    if (existsSync(exe)) return [exe]
  } catch {
    // No platform package resolvable from here: use the package's own launcher.
  }
  return [process.execPath, join(ts.dir, 'bin', 'tsc')]
}
