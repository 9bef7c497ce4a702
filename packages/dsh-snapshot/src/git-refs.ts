import { existsSync, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs'
import { dirname, isAbsolute, join, resolve } from 'node:path'
import { createHash, randomBytes } from 'node:crypto'
import { copyFileKeepingTimes, runCommand } from 'dsh-common'
import type { CaptureEntry } from './types.ts'

/**
 * A shell call's git state before it runs: where HEAD points, every ref's
 * value, and the index (a hard link to the index file, which git only ever
 * replaces by rename, so the link keeps its earlier bytes for free). Read
 * straight from the repository's files, no git process: a shell call pays
 * a few small reads. Restored through git (`update-ref`, `symbolic-ref`)
 * only when a call is rolled back.
 */
export type RefsEntry = Extract<CaptureEntry, { kind: 'refs' }>

interface GitDirs {
  /** The work tree's own git directory (HEAD, index). */
  gitDir: string
  /** Where refs and packed-refs live (the same, except in a linked worktree). */
  commonDir: string
}

/** The git directories of the repository `root` is in (its own `.git`, a `.git` file of a linked worktree, or an ancestor's). */
function findGitDirs(root: string): GitDirs | undefined {
  for (let dir = resolve(root); ; dir = dirname(dir)) {
    const dotGit = join(dir, '.git')
    let gitDir: string | undefined
    try {
      const st = statSync(dotGit)
      if (st.isDirectory()) gitDir = dotGit
      else if (st.isFile()) {
        const m = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(dotGit, 'utf8'))
        if (m) gitDir = isAbsolute(m[1]!) ? m[1]! : resolve(dir, m[1]!)
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return undefined
    }
    if (gitDir) {
      if (!existsSync(join(gitDir, 'HEAD'))) return undefined
      let commonDir = gitDir
      try {
        const c = readFileSync(join(gitDir, 'commondir'), 'utf8').trim()
        commonDir = isAbsolute(c) ? c : resolve(gitDir, c)
      } catch {
        // No commondir file: not a linked worktree.
      }
      return { gitDir, commonDir }
    }
    if (dirname(dir) === dir) return undefined
  }
}

/** Loose refs per directory, by the directory's stat: a shell call reads only the directories that changed. */
const looseCache = new Map<string, { key: string; files: [string, string][]; dirs: string[] }>()

/** Every ref of the repository: packed ones, overridden by loose ones. Values as the files hold them (an object id, or `ref: …`). */
function readRefs(commonDir: string): Record<string, string> {
  const refs: Record<string, string> = {}
  let packed = ''
  try {
    packed = readFileSync(join(commonDir, 'packed-refs'), 'utf8')
  } catch {
    // No packed-refs file: every ref is loose.
  }
  for (const line of packed.split('\n')) {
    if (!line || line.startsWith('#') || line.startsWith('^')) continue
    const space = line.indexOf(' ')
    if (space > 0) refs[line.slice(space + 1)] = line.slice(0, space)
  }
  const visit = (dir: string, prefix: string) => {
    let st
    try {
      st = statSync(dir, { bigint: true })
    } catch {
      // Gone meanwhile (a concurrent pack-refs): what packed-refs said stands.
      return
    }
    // A ref is written by renaming a lock file into its directory, so a directory whose stat is unchanged (and not too recent to tell) holds the same refs.
    const key = `${st.ino}:${st.mtimeNs}:${st.ctimeNs}`
    const cached = looseCache.get(dir)
    const fresh = Date.now() - Number(st.mtimeNs / 1_000_000n) < 2000
    if (cached && cached.key === key && !fresh) {
      for (const [rel, value] of cached.files) refs[rel] = value
      for (const sub of cached.dirs) visit(join(dir, sub), `${prefix}/${sub}`)
      return
    }
    let names: string[]
    try {
      names = readdirSync(dir)
    } catch {
      return
    }
    const files: [string, string][] = []
    const dirs: string[] = []
    for (const name of names) {
      const abs = join(dir, name)
      const rel = `${prefix}/${name}`
      let entry
      try {
        entry = lstatSync(abs)
      } catch {
        continue
      }
      if (entry.isDirectory()) {
        dirs.push(name)
        visit(abs, rel)
      } else if (entry.isFile() && !name.endsWith('.lock')) {
        try {
          const value = readFileSync(abs, 'utf8').trim()
          if (value) {
            refs[rel] = value
            files.push([rel, value])
          }
        } catch {
          // Removed between listing and reading: it is gone.
        }
      }
    }
    looseCache.set(dir, { key, files, dirs })
  }
  visit(join(commonDir, 'refs'), 'refs')
  return refs
}

/**
 * Record the git state of the repository `root` is in; the index is hard
 * linked to `<store>/<n>.index` (copied when the vault is on another file
 * system). Undefined when `root` is in no git repository.
 */
export function captureRefs(root: string, store: string): RefsEntry | undefined {
  const dirs = findGitDirs(root)
  if (!dirs) return undefined
  const { head, refs } = readGitState(dirs)
  if (!head) return undefined
  const entry: RefsEntry = { kind: 'refs', path: '.git', gitDir: dirs.gitDir, commonDir: dirs.commonDir, head, refs }
  const index = join(dirs.gitDir, 'index')
  let ino: number
  try {
    ino = statSync(index).ino
  } catch {
    return entry
  }
  mkdirSync(store, { recursive: true })
  const link = join(store, `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}.index`)
  try {
    linkSync(index, link)
  } catch {
    copyFileKeepingTimes(index, link)
    ino = -1
  }
  return { ...entry, index: { link, ino } }
}

/** Drop what a refs capture holds outside the journal (its index link). */
export function releaseRefs(entry: RefsEntry) {
  if (entry.index) rmSync(entry.index.link, { force: true })
}

function shortRef(name: string): string {
  if (name.startsWith('refs/heads/')) return name.slice('refs/heads/'.length)
  if (name.startsWith('refs/tags/')) return `tag ${name.slice('refs/tags/'.length)}`
  if (name === 'refs/stash') return 'stash'
  return name
}

function shortValue(value: string | undefined): string {
  if (value === undefined) return 'nothing'
  return value.startsWith('ref: ') ? shortRef(value.slice(5)) : value.slice(0, 7)
}

/** The repository's HEAD and refs as they are now. */
export function readGitState(entry: Pick<RefsEntry, 'gitDir' | 'commonDir'>): { head: string; refs: Record<string, string> } {
  let head = ''
  try {
    head = readFileSync(join(entry.gitDir, 'HEAD'), 'utf8').trim()
  } catch {
    // HEAD removed: restored below like any moved ref.
  }
  const refs = readRefs(entry.commonDir)
  // The branch HEAD is on is read whatever the cache says (a hand-written ref file keeps its directory's stat).
  if (head.startsWith('ref: refs/')) {
    try {
      const value = readFileSync(join(entry.commonDir, head.slice(5)), 'utf8').trim()
      if (value) refs[head.slice(5)] = value
    } catch {
      // Not loose: packed-refs holds it, or the branch is unborn.
    }
  }
  return { head, refs }
}

/** What putting the git state back did: lines for the model, and failures. */
export interface RefsOutcome {
  /** `main back to 1a2b3c4 (from 9f8e7d6)`, `HEAD back to main`, `index restored`… */
  done: string[]
  failed: { path: string; error: string }[]
}

async function git(root: string, args: string[], input?: string): Promise<string | undefined> {
  const r = await runCommand(['git', ...args], { cwd: root, timeoutMs: 60_000, env: { GIT_TERMINAL_PROMPT: '0' }, ...(input !== undefined ? { input } : {}) })
  if (r.exitCode === 0) return undefined
  return r.spawnError ?? (r.stderr.trim().split('\n')[0] || `exit ${r.exitCode ?? r.signal}`)
}

/**
 * Put HEAD, the refs and the index back as the capture had them. A ref the
 * call created is deleted, except a new `refs/stash` (deleting it would
 * drop the stash; it is kept and said). Commits the call made stay
 * reachable through the reflog. Never throws.
 */
export async function restoreRefs(root: string, entry: RefsEntry, reason: string): Promise<RefsOutcome> {
  const out: RefsOutcome = { done: [], failed: [] }
  const now = readGitState(entry)
  const message = `dsh: rolled back (${reason.slice(0, 200)})`
  const lines: string[] = []
  for (const name of [...new Set([...Object.keys(entry.refs), ...Object.keys(now.refs)])].sort()) {
    const b = entry.refs[name]
    const n = now.refs[name]
    if (b === n) continue
    if (b?.startsWith('ref: ') || n?.startsWith('ref: ')) {
      out.failed.push({ path: name, error: 'a symbolic ref changed; not put back' })
      continue
    }
    if (b === undefined) {
      if (name === 'refs/stash') {
        out.done.push(`kept the new stash entry (git stash list)`)
        continue
      }
      lines.push(`delete ${name} ${n}`)
      out.done.push(`removed ${shortRef(name)} (was ${shortValue(n)})`)
    } else {
      lines.push(n === undefined ? `create ${name} ${b}` : `update ${name} ${b} ${n}`)
      out.done.push(n === undefined ? `recreated ${shortRef(name)} at ${shortValue(b)}` : `${shortRef(name)} back to ${shortValue(b)} (from ${shortValue(n)})`)
    }
  }
  if (lines.length) {
    const error = await git(root, ['update-ref', '-m', message, '--stdin'], lines.join('\n') + '\n')
    if (error) {
      out.failed.push({ path: '.git', error: `git update-ref: ${error}` })
      out.done.length = 0
    }
  }
  if (entry.head && now.head !== entry.head) {
    const error = entry.head.startsWith('ref: ')
      ? await git(root, ['symbolic-ref', '-m', message, 'HEAD', entry.head.slice(5)])
      : await git(root, ['update-ref', '--no-deref', '-m', message, 'HEAD', entry.head])
    if (error) out.failed.push({ path: 'HEAD', error })
    else out.done.push(`HEAD back to ${shortValue(entry.head)} (from ${shortValue(now.head)})`)
  }
  const index = restoreIndex(entry)
  if (index === 'restored') out.done.push('index restored')
  else if (index) out.failed.push({ path: '.git/index', error: index })
  return out
}

/** The index file back as captured: 'restored', undefined (it was never replaced), or why not. */
function restoreIndex(entry: RefsEntry): 'restored' | string | undefined {
  if (!entry.index) return undefined
  const index = join(entry.gitDir, 'index')
  let current: number | undefined
  try {
    current = statSync(index).ino
  } catch {
    current = undefined
  }
  if (current === entry.index.ino) return undefined
  if (entry.index.ino === -1 && current !== undefined) {
    try {
      if (readFileSync(index).equals(readFileSync(entry.index.link))) return undefined
    } catch (error) {
      return (error as Error).message
    }
  }
  if (existsSync(`${index}.lock`)) return 'index.lock exists (a git command is running); the index was left as it is'
  const tmp = `${index}.dsh-${randomBytes(4).toString('hex')}`
  try {
    copyFileKeepingTimes(entry.index.link, tmp)
    renameSync(tmp, index)
    return 'restored'
  } catch (error) {
    rmSync(tmp, { force: true })
    return (error as Error).message
  }
}

/** The object ids HEAD's tree holds for `paths` (relative to `root`); undefined when git cannot say (no HEAD yet). */
export async function committedBlobs(root: string, paths: readonly string[]): Promise<Map<string, string> | undefined> {
  const r = await runCommand(['git', '-c', 'core.quotePath=false', 'ls-tree', '-z', 'HEAD', '--', ...paths],
    { cwd: root, timeoutMs: 30_000, env: { GIT_OPTIONAL_LOCKS: '0' } })
  if (r.exitCode !== 0) return undefined
  const out = new Map<string, string>()
  for (const rec of r.stdout.split('\0')) {
    const m = /^\d+ blob ([0-9a-f]+)\t(.*)$/s.exec(rec)
    if (m) out.set(m[2]!, m[1]!)
  }
  return out
}

/** Git's object id of a blob holding `data` (sha1; a sha256 repository's ids never match it, so nothing is reported there). */
export function gitBlobId(data: Buffer): string {
  return createHash('sha1').update(`blob ${data.length}\0`).update(data).digest('hex')
}
