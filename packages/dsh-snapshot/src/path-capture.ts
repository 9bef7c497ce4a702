import { resolve } from 'node:path'
import { isInside, PathEscapeError, resolveInside, toPosixRelative } from 'dsh-common'
import { formatBytes, readState, walk, type ReadState } from './capture.ts'
import { SnapshotError } from './errors.ts'
import { captureRefs, type RefsEntry } from './git-refs.ts'
import { snapshotTree } from './git-tree.ts'
import { treeStoreOf } from './layout.ts'
import type { PreImages } from './measure.ts'
import { pathState, postable } from './post-image.ts'
import { ScopeJournal, type ReadItem, type ReadTarget } from './scope-journal.ts'
import { selectScopes } from './scopes.ts'
import type { CaptureEntry, CaptureSummary, ScopeRef } from './types.ts'

/** A path's pre-image as a capture read it (`null`: nothing there; undefined: not bytes, a directory or a symlink). */
function imageOf(read: ReadState): Buffer | null | undefined {
  if (read.entry.kind === 'absent') return null
  return read.entry.kind === 'file' ? read.payload ?? Buffer.alloc(0) : undefined
}

/**
 * The capture of a write call: the paths it names (a directory with what is
 * below it), a git working tree or the git refs a shell call may move, and
 * what the call left (`notePost`), each journalled before it counts.
 */
export class PathCaptures extends ScopeJournal {
  /**
   * Record the current state of `paths` (relative to the root, or absolute)
   * in the scope, durably, before the caller changes them. A directory is
   * captured like {@link captureDir}.
   * @throws SnapshotError (`escape`, `too-large`, `unsupported`, `journal`); nothing is recorded then.
   */
  capture(scope: ScopeRef, paths: readonly string[], images?: PreImages): CaptureSummary {
    const targets = paths.map(p => this.contain(p))
    const named = new Set(targets.map(abs => toPosixRelative(this.root, abs) || '.'))
    const summary = this.record(scope, true, (state, add) => {
      const note = (item: ReadState) => {
        if (images && named.has(item.entry.path)) images.set(item.entry.path, imageOf(item))
        add(item)
      }
      for (const abs of targets) this.readInto(state, abs, note, { total: 0 })
    })
    // A path an earlier call of this scope captured (step scopes): what it holds now is this call's pre-image.
    for (const path of images ? named : []) if (!images!.has(path)) images!.set(path, this.imageNow(path))
    return summary
  }

  private imageNow(path: string): Buffer | null | undefined {
    try {
      return imageOf(readState(this.root, resolve(this.root, path), this._maxFile))
    } catch {
      // Grown past the cap, or replaced by something that cannot be snapshotted: not kept.
      return undefined
    }
  }

  /**
   * Capture every file and symlink below `dir`, skipping `.git`,
   * `node_modules`, the vault and the configured globs. Rollback also
   * removes what appeared below `dir` after the capture.
   * @throws SnapshotError `too-large` over `maxFileBytes` per file or `maxDirBytes` in total.
   */
  captureDir(scope: ScopeRef, dir: string): CaptureSummary {
    const abs = this.contain(dir)
    return this.record(scope, true, (state, add) => this.readInto(state, abs, add, { total: 0 }, true))
  }

  /** Record a prepared entry (a git working-tree snapshot) in the scope. */
  captureEntry(scope: ScopeRef, entry: CaptureEntry): CaptureSummary {
    return this.record(scope, true, (state, add) => {
      if (state.has(entry.path)) state.keep(entry.path)
      else add({ entry })
    })
  }

  /**
   * `shell: 'git'`: snapshot the whole working tree into the scope, through
   * git, without touching the user's index, HEAD, refs or stash. Resolves
   * undefined (nothing recorded) when the root is not the top of a git work tree.
   * @throws SnapshotError `git` when git fails.
   */
  async captureTree(scope: ScopeRef): Promise<CaptureSummary | undefined> {
    const open = this._open.find(s => s.key === scope.key)
    if (open?.paths.has('.')) return this.captureEntry(scope, open.items.find(i => i.entry.path === '.')!.entry)
    const store = treeStoreOf(this.journal().file)
    const entry = await snapshotTree(this.root, this.vault, store, this._sync !== 'off')
    if (!entry) return undefined
    return this.captureEntry(scope, entry)
  }

  /**
   * Record the git state of the repository the root is in (HEAD, every
   * ref, the index) for a shell call, so a rollback also takes back the
   * commits, resets and branch moves the call made. Read from git's files
   * (no git process). Returns the scope's record of it (the first, when
   * the scope already had one); undefined when the root is in no repository.
   */
  captureRefs(scope: ScopeRef): RefsEntry | undefined {
    const open = this._open.find(s => s.key === scope.key)
    const had = open?.items.find(i => i.entry.kind === 'refs')?.entry
    const entry = had?.kind === 'refs' ? had : captureRefs(this.root, treeStoreOf(this.journal().file))
    if (entry) this.captureEntry(scope, entry)
    return entry
  }

  /**
   * Record what the call `callId` left (its tool returned): the content of
   * each path its open scope captured, durably, before it is judged.
   * Recovery then restores a path only while it still holds that.
   */
  notePost(callId: string): void {
    for (const scope of selectScopes(this._open, { callId })) {
      const items = scope.items.filter(i => postable(i.entry)).map(i => ({ path: i.entry.path, sha: pathState(this.root, i.entry.path) }))
      this.journal().append([{ record: { t: 'post', scope: scope.id, items } }], true)
      scope.post = new Map(items.map(i => [i.path, i.sha]))
    }
  }

  /** Resolve a path inside the root, refusing the vault. */
  private contain(p: string): string {
    let abs: string
    try {
      abs = resolveInside(this.root, p)
    } catch (error) {
      if (error instanceof PathEscapeError) throw new SnapshotError('escape', `path "${p}" is outside the workspace ${this.root}`)
      const code = (error as NodeJS.ErrnoException).code
      if (typeof code === 'string') throw new SnapshotError('io', `cannot resolve ${p} (${code})`)
      throw error
    }
    if (isInside(this.vault, abs)) throw new SnapshotError('escape', `path "${p}" is inside the dsh vault ${this.vault}`)
    return abs
  }

  private readInto(state: ReadTarget, abs: string, add: (p: ReadItem) => void, budget: { total: number }, asDir = false) {
    const rel = toPosixRelative(this.root, abs) || '.'
    if (state.has(rel)) return state.keep(rel)
    const read: ReadState = readState(this.root, abs, this._maxFile)
    if (read.entry.kind !== 'dir') {
      if (asDir) throw new SnapshotError('unsupported', `${rel} is not a directory`)
      add(read)
      return
    }
    add({ entry: { ...read.entry, walk: { skip: [...this._ignore] } } })
    // What is below, unless this capture already holds it.
    const readNew = (below: string): ReadState | undefined => {
      const belowRel = toPosixRelative(this.root, below)
      if (!state.has(belowRel)) return readState(this.root, below, this._maxFile)
      state.keep(belowRel)
      return undefined
    }
    const found = walk(this.root, abs, this._skip)
    for (const d of found.dirs) {
      const sub = readNew(d)
      if (sub?.entry.kind === 'dir') add(sub)
    }
    for (const leaf of found.leaves) {
      const item = readNew(leaf)
      if (!item) continue
      budget.total += item.payload?.length ?? 0
      if (budget.total > this._maxDir) {
        throw new SnapshotError('too-large',
          `${rel} holds over ${formatBytes(this._maxDir)}, the snapshot cap for a directory (dsh-snapshot maxDirBytes); add ignore globs or raise the cap`)
      }
      if (item.entry.kind !== 'dir') add(item)
    }
  }
}
