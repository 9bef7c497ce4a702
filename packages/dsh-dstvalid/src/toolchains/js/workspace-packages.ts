/**
 * Which tsconfig projects a workspace has, as `tsc -b` and the workspace's
 * package manager see them: the configured tsconfig and everything its
 * `references` reach (transitively — a solution file `{"files": [],
 * "references": [...]}` is a project with no program of its own), plus the
 * tsconfig of every pnpm / npm / yarn workspace package whose files that
 * graph does not cover (a workspace without a root solution file).
 * Plain file-system reads only (no TypeScript): the worker parses the configs.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { NOT_PROJECT_DIRS } from 'dsh-common'

/** `packages:` globs of a `pnpm-workspace.yaml` (the simple block-list form every pnpm workspace uses). */
function parsePnpmWorkspace(text: string): string[] {
  const out: string[] = []
  let inPackages = false
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/\s+#.*$/, '')
    if (/^packages\s*:/.test(line)) {
      inPackages = true
      // Flow form: packages: ['a/*', 'b']
      const flow = /\[(.*)\]/.exec(line)
      if (flow) {
        out.push(...flow[1]!.split(',').map(s => s.trim().replace(/^['"]|['"]$/g, '')).filter(Boolean))
        inPackages = false
      }
      continue
    }
    if (!inPackages) continue
    const item = /^\s+-\s*(.+?)\s*$/.exec(line)
    if (item) out.push(item[1]!.replace(/^['"]|['"]$/g, ''))
    else if (/^\S/.test(line)) inPackages = false
  }
  return out
}

/** Workspace package globs of `root`: pnpm-workspace.yaml, else package.json `workspaces` (array or `{ packages }`). */
function workspaceGlobs(root: string): string[] {
  const pnpm = join(root, 'pnpm-workspace.yaml')
  if (existsSync(pnpm)) return parsePnpmWorkspace(readFileSync(pnpm, 'utf8'))
  try {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { workspaces?: string[] | { packages?: string[] } }
    const ws = Array.isArray(pkg.workspaces) ? pkg.workspaces : pkg.workspaces?.packages
    return Array.isArray(ws) ? ws.filter((w): w is string => typeof w === 'string') : []
  } catch {
    // No package.json, or not JSON: not a workspace.
    return []
  }
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory()
  } catch {
    // Gone or unreadable.
    return false
  }
}

function segmentRegex(segment: string): RegExp {
  return new RegExp(`^${segment.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`)
}

/** Directories matching one glob (`*` one level, `**` any depth up to 5), relative to root. */
function expand(root: string, glob: string): string[] {
  const segments = glob.replace(/^\.\//, '').replace(/\/+$/, '').split('/').filter(Boolean)
  let dirs = ['']
  for (const segment of segments) {
    const next: string[] = []
    for (const dir of dirs) {
      if (segment === '**') {
        const walk = (d: string, depth: number) => {
          next.push(d)
          if (depth >= 5) return
          for (const e of readdirSafe(join(root, d))) if (!NOT_PROJECT_DIRS.has(e) && !e.startsWith('.') && isDir(join(root, d, e))) walk(d ? `${d}/${e}` : e, depth + 1)
        }
        walk(dir, 0)
      } else if (/[*?]/.test(segment)) {
        const re = segmentRegex(segment)
        for (const e of readdirSafe(join(root, dir))) if (!NOT_PROJECT_DIRS.has(e) && re.test(e) && isDir(join(root, dir, e))) next.push(dir ? `${dir}/${e}` : e)
      } else if (isDir(join(root, dir, segment))) {
        next.push(dir ? `${dir}/${segment}` : segment)
      }
    }
    dirs = [...new Set(next)]
  }
  return dirs
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir).sort()
  } catch {
    // Unreadable: nothing in it.
    return []
  }
}

/** Absolute directories of the workspace's packages (those with a package.json), in glob order; `!` globs exclude. */
export function workspacePackageDirs(root: string): string[] {
  const globs = workspaceGlobs(root)
  const excluded = new Set(globs.filter(g => g.startsWith('!')).flatMap(g => expand(root, g.slice(1))))
  const out: string[] = []
  for (const g of globs) {
    if (g.startsWith('!')) continue
    for (const d of expand(root, g)) if (d && !excluded.has(d) && existsSync(join(root, d, 'package.json'))) out.push(resolve(root, d))
  }
  return [...new Set(out)]
}

/** Whether the workspace has any tsconfig to check: the configured one, or one in a workspace package. */
export function hasTsProjects(root: string, configPath: string): boolean {
  return existsSync(configPath) || workspacePackageDirs(root).some(d => existsSync(join(d, 'tsconfig.json')))
}
