import ignore from 'ignore'

/**
 * Whether a directory capture skips a workspace-relative POSIX path.
 * `isDir` lets directory-only patterns (`build/`) apply.
 */
export type PathMatcher = (relPosix: string, isDir: boolean) => boolean

/**
 * Names a directory capture skips unless configured otherwise: caches and
 * indexes that tools rebuild on their own (the `exclude` Config default).
 */
export const DEFAULT_EXCLUDES: readonly string[] = ['.codegraph', '.cache', '.turbo', '.pytest_cache', '.mypy_cache', '.ruff_cache', '__pycache__']

/**
 * One matcher for gitignore patterns, with gitignore's own semantics (the
 * `ignore` package, pinned: patterns are journalled and re-read on
 * rollback): `*`, `?`, `**`, `[…]`, `!` negation, a trailing `/` for
 * directories only, a leading or inner `/` anchoring at the workspace root.
 * `always` are literal paths (the vault) skipped whatever the patterns say.
 */
export function compileIgnore(patterns: readonly string[], always: readonly string[] = []): PathMatcher {
  const ig = ignore().add(patterns.filter(p => p.trim()))
  return (rel, isDir) => {
    for (const a of always) if (rel === a || rel.startsWith(`${a}/`)) return true
    return ig.ignores(isDir ? `${rel}/` : rel)
  }
}
