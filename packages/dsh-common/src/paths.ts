import { realpathSync } from 'node:fs'
import { dirname, isAbsolute, relative, resolve, sep, basename, join } from 'node:path'

/** Error raised when a path would leave its workspace. `code` is stable. */
export class PathEscapeError extends Error {
  readonly code = 'PATH_ESCAPE'
  constructor(readonly requested: string, readonly root: string) {
    super(`path "${requested}" is outside the workspace ${root}`)
  }
}

/** True when `child` is `root` or lies below it (both absolute, normalised). */
export function isInside(root: string, child: string): boolean {
  const rel = relative(root, child)
  return rel === '' || (!rel.startsWith('..' + sep) && rel !== '..' && !isAbsolute(rel))
}

/**
 * Resolve `p` (relative to `root`, or absolute) to a real absolute path inside
 * `root`, following symlinks of every existing ancestor. A path that does not
 * exist yet is resolved through its nearest existing ancestor, so a write
 * through a symlinked directory pointing out of the workspace is refused.
 * @throws PathEscapeError when the resolved path is outside `root`.
 */
export function resolveInside(root: string, p: string): string {
  const realRoot = realpathSync(root)
  const abs = resolve(realRoot, p)
  if (!isInside(realRoot, abs) && !isInside(resolve(root), abs)) throw new PathEscapeError(p, realRoot)
  const real = realpathNearest(abs)
  if (!isInside(realRoot, real)) throw new PathEscapeError(p, realRoot)
  return real
}

/** The real path of `abs`, or of its nearest existing ancestor joined with the rest. */
export function realpathNearest(abs: string): string {
  const rest: string[] = []
  let cur = abs
  for (;;) {
    try {
      const real = realpathSync(cur)
      return rest.length ? join(real, ...rest.reverse()) : real
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      const parent = dirname(cur)
      if (parent === cur) return abs
      rest.push(basename(cur))
      cur = parent
    }
  }
}

/** `abs` relative to `root`, with forward slashes (for messages and keys). */
export function toPosixRelative(root: string, abs: string): string {
  return relative(root, abs).split(sep).join('/')
}
