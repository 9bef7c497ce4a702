import { existsSync, mkdirSync, rmSync, unlinkSync } from 'node:fs'
import { isAbsolute, join, resolve } from 'node:path'
import { randomBytes } from 'node:crypto'
import { copyFileKeepingTimes, isInside, runCommand, toPosixRelative } from 'dsh-common'
import { SnapshotError } from './errors.ts'
import type { RestoreOutcome } from './types.ts'
import type { CaptureEntry } from './types.ts'

/**
 * `shell: 'git'` — a snapshot of a git workspace's working tree before a
 * shell command, taken without touching the user's repository: a private
 * copy of the index (so unchanged files are not re-hashed), new objects in
 * a private object directory under the vault (the repository's own objects
 * are read through `GIT_ALTERNATE_OBJECT_DIRECTORIES`), no ref, no HEAD,
 * no stash. Ignored files (per .gitignore) are outside the snapshot.
 */
export type TreeEntry = Extract<CaptureEntry, { kind: 'tree' }>

interface GitEnv {
  [key: string]: string
}

async function git(root: string, args: string[], env: GitEnv = {}): Promise<string> {
  const r = await runCommand(['git', '-c', 'core.quotePath=false', '-c', 'gc.auto=0', ...args], {
    cwd: root, timeoutMs: 120_000, maxOutputBytes: 64 << 20, env: { GIT_OPTIONAL_LOCKS: '0', GIT_TERMINAL_PROMPT: '0', ...env },
  })
  if (r.exitCode !== 0) {
    const why = r.spawnError ?? (r.stderr.trim().split('\n')[0] || `exit ${r.exitCode ?? r.signal}`)
    throw new SnapshotError('git', `git ${args[0]} failed: ${why}`)
  }
  return r.stdout
}

/** The repository's own object directory and index, when `root` is the top of a git work tree. */
async function gitLayout(root: string): Promise<{ objects: string; index: string } | undefined> {
  if (!existsSync(join(root, '.git'))) return undefined
  let out: string
  try {
    out = await git(root, ['rev-parse', '--show-toplevel', '--git-path', 'objects', '--git-path', 'index'])
  } catch (error) {
    if (error instanceof SnapshotError) return undefined
    throw error
  }
  const [top, objects, index] = out.trim().split('\n')
  if (!top || !objects || !index || resolve(top) !== resolve(root)) return undefined
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(root, p))
  return { objects: abs(objects), index: abs(index) }
}

function envFor(store: string, index: string, repoObjects: string, fsync: boolean): GitEnv {
  return {
    GIT_INDEX_FILE: index,
    GIT_OBJECT_DIRECTORY: join(store, 'objects'),
    GIT_ALTERNATE_OBJECT_DIRECTORIES: repoObjects,
    ...(fsync ? { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.fsync', GIT_CONFIG_VALUE_0: 'loose-object,index' } : {}),
  }
}

/** The vault, when it is inside the work tree and not already ignored (naming an ignored path makes `git add` fail). */
async function excludes(root: string, vault: string): Promise<string[]> {
  if (!isInside(root, vault) || resolve(root) === resolve(vault)) return []
  const rel = toPosixRelative(root, vault)
  const r = await runCommand(['git', 'check-ignore', '-q', rel], { cwd: root, timeoutMs: 30_000 })
  return r.exitCode === 0 ? [] : [rel]
}

async function writeTree(root: string, env: GitEnv, exclude: readonly string[]): Promise<string> {
  await git(root, ['add', '-A', '--', '.', ...exclude.map(e => `:(exclude)${e}`)], env)
  return (await git(root, ['write-tree'], env)).trim()
}

/**
 * Snapshot the working tree of the git workspace at `root` into `store`
 * (a directory under the vault, owned by one journal).
 * @throws SnapshotError `git` when git fails; undefined when `root` is not a git work tree top.
 */
export async function snapshotTree(root: string, vault: string, store: string, fsync: boolean): Promise<TreeEntry | undefined> {
  const layout = await gitLayout(root)
  if (!layout) return undefined
  mkdirSync(join(store, 'objects'), { recursive: true })
  const index = join(store, `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}.index`)
  // Start from the user's index (read-only copy): only changed files get hashed.
  if (existsSync(layout.index)) copyFileKeepingTimes(layout.index, index)
  const exclude = await excludes(root, vault)
  try {
    const tree = await writeTree(root, envFor(store, index, layout.objects, fsync), exclude)
    return { kind: 'tree', path: '.', tree, index, objects: layout.objects, exclude }
  } catch (error) {
    rmSync(index, { force: true })
    throw error
  }
}

/**
 * Put the working tree back as the snapshot had it: files changed or
 * deleted since are checked out from the snapshot's index, files added
 * since are deleted. Ignored files are left alone. Never throws: failures
 * are reported in `failed` under the path `.`.
 */
export async function restoreTree(root: string, entry: TreeEntry, options: { fsync: boolean }): Promise<RestoreOutcome> {
  const out: RestoreOutcome = { restored: [], deleted: [], failed: [] }
  const store = resolve(entry.index, '..')
  const now = join(store, `now-${randomBytes(4).toString('hex')}.index`)
  try {
    copyFileKeepingTimes(entry.index, now)
    const current = await writeTree(root, envFor(store, now, entry.objects, options.fsync), entry.exclude)
    const diff = await git(root, ['diff-tree', '-r', '-z', '--no-renames', entry.tree, current], envFor(store, now, entry.objects, false))
    const fields = diff.split('\0').filter(Boolean)
    const back: string[] = []
    for (let i = 0; i + 1 < fields.length; i += 2) {
      const status = fields[i]!.split(' ').pop()!
      const path = fields[i + 1]!
      if (status === 'A') {
        try {
          unlinkSync(join(root, path))
          out.deleted.push(path)
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOENT') out.failed.push({ path, error: (error as Error).message })
        }
      } else {
        back.push(path)
      }
    }
    if (back.length) {
      await checkoutPaths(root, back, envFor(store, entry.index, entry.objects, false))
      out.restored.push(...back)
    }
  } catch (error) {
    out.failed.push({ path: '.', error: (error as Error).message })
  } finally {
    rmSync(now, { force: true })
  }
  return out
}

async function checkoutPaths(root: string, paths: string[], env: GitEnv) {
  const r = await runCommand(['git', 'checkout-index', '-f', '-z', '--stdin'], {
    cwd: root, timeoutMs: 120_000, input: paths.join('\0') + '\0', env: { GIT_OPTIONAL_LOCKS: '0', ...env },
  })
  if (r.exitCode !== 0) throw new SnapshotError('git', `git checkout-index failed: ${r.stderr.trim().split('\n')[0] || `exit ${r.exitCode}`}`)
}

/** Remove a journal's private git store. */
export function removeTreeStore(store: string) {
  rmSync(store, { recursive: true, force: true })
}
