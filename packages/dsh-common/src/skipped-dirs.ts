/**
 * Directories no scan of a workspace enters: version control, the dsh
 * vault, installed dependencies and caches. They never hold the project's
 * own files, whatever the toolchain.
 */
export const NOT_PROJECT_DIRS: ReadonlySet<string> = new Set([
  '.git', '.hg', '.svn', '.dsh', 'node_modules', 'vendor', '.venv', 'venv', 'site-packages', '__pycache__',
])

/**
 * {@link NOT_PROJECT_DIRS} and build output: what a scan for sources (or for
 * changes to them) skips. Not for scans where such a name can be the
 * project's own directory (a workspace package called `build`).
 */
export const NOT_SOURCE_DIRS: ReadonlySet<string> = new Set([...NOT_PROJECT_DIRS, 'dist', 'build', 'out', 'coverage', 'target'])
