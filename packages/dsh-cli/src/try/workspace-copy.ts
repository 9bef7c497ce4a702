import { copyFileSync, lstatSync, mkdirSync, readdirSync, readlinkSync, symlinkSync } from 'node:fs'
import { join, relative, sep } from 'node:path'

/** Directories shared with the original by a symlink (installed dependencies: large, and never edited by a probe). */
const LINKED = new Set(['node_modules', '.venv', 'venv'])
/** Directories left out of a copy: version control and the guard's own vault. */
const LEFT_OUT = new Set(['.git', '.dsh'])

/**
 * A throw-away copy of `from` at `to`: every file copied, dependency
 * directories (`node_modules`, a virtualenv) symlinked to the original,
 * `.git` and `.dsh` left out. Returns the number of files copied.
 */
export function copyWorkspace(from: string, to: string): number {
  let files = 0
  const walk = (src: string, dest: string) => {
    mkdirSync(dest, { recursive: true })
    for (const name of readdirSync(src)) {
      const s = join(src, name)
      const d = join(dest, name)
      const st = lstatSync(s)
      if (st.isSymbolicLink()) symlinkSync(readlinkSync(s), d)
      else if (st.isDirectory()) {
        if (LEFT_OUT.has(name)) continue
        if (LINKED.has(name)) symlinkSync(s, d, 'dir')
        else walk(s, d)
      } else if (st.isFile()) {
        copyFileSync(s, d)
        files++
      }
    }
  }
  walk(from, to)
  return files
}

/**
 * What `dir` holds, dependencies and `.git` left out: every file's size and
 * modification time, and every directory, by workspace-relative path. Two
 * equal fingerprints mean nothing was created, deleted or written there.
 */
export function fingerprint(dir: string): Map<string, string> {
  const out = new Map<string, string>()
  const walk = (abs: string) => {
    for (const name of readdirSync(abs)) {
      const p = join(abs, name)
      const st = lstatSync(p)
      const rel = relative(dir, p).split(sep).join('/')
      if (st.isDirectory()) {
        if (LINKED.has(name) || name === '.git') continue
        out.set(`${rel}/`, 'dir')
        walk(p)
      } else {
        out.set(rel, `${st.size}:${st.mtimeMs}`)
      }
    }
  }
  walk(dir)
  return out
}

/** Paths whose entry differs between two fingerprints (created, deleted or changed), sorted. */
export function fingerprintChanges(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): string[] {
  const changed = new Set<string>()
  for (const [p, v] of before) if (after.get(p) !== v) changed.add(p)
  for (const p of after.keys()) if (!before.has(p)) changed.add(p)
  return [...changed].sort()
}
