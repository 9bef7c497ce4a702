import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import ignore, { type Ignore } from 'ignore'
import { compileIgnore, type PathMatcher } from '../internal/ignore.ts'

/**
 * What shell tracking leaves out of the workspace picture: `.git`,
 * `node_modules`, the vault, the configured globs, and whatever the
 * workspace's `.gitignore` files (at any depth) and `.git/info/exclude`
 * ignore, with git's own semantics (a deeper file can re-include, an
 * ignored directory is never entered). A `.gitignore` is read when its
 * directory is first visited; an edited one applies from the next rebuild.
 */
export class IgnoreRules {
  private readonly _fixed: PathMatcher
  private readonly _byDir = new Map<string, Ignore | null>()

  constructor(private readonly root: string, fixed: readonly string[]) {
    this._fixed = compileIgnore(fixed)
    const top = ignore()
    let any = false
    for (const file of ['.gitignore', '.git/info/exclude']) {
      const text = readText(join(root, file))
      if (text !== undefined) {
        top.add(text)
        any = true
      }
    }
    this._byDir.set('', any ? top : null)
  }

  private rulesOf(dir: string): Ignore | null {
    let rules = this._byDir.get(dir)
    if (rules === undefined) {
      const text = readText(join(this.root, dir, '.gitignore'))
      rules = text === undefined ? null : ignore().add(text)
      this._byDir.set(dir, rules)
    }
    return rules
  }

  /**
   * Whether `rel` (posix, workspace-relative, its parent not ignored) is
   * left out. The deepest `.gitignore` with an opinion wins.
   */
  ignores(rel: string, isDir: boolean): boolean {
    if (this._fixed(rel, isDir)) return true
    const parts = rel.split('/')
    for (let depth = parts.length - 1; depth >= 0; depth--) {
      const dir = parts.slice(0, depth).join('/')
      const rules = this.rulesOf(dir)
      if (!rules) continue
      const sub = parts.slice(depth).join('/') + (isDir ? '/' : '')
      const verdict = rules.test(sub)
      if (verdict.ignored) return true
      if (verdict.unignored) return false
    }
    return false
  }

  /** Forget the `.gitignore` of a directory (it changed or vanished). */
  forget(dir: string) {
    this._byDir.delete(dir)
  }
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8')
  } catch {
    // ENOENT/EISDIR/EACCES: no rules from this file.
    return undefined
  }
}
