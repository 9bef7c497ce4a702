import { realpathSync, rmSync } from 'node:fs'
import { resolve } from 'node:path'
import { definedOnly, isInside, PathEscapeError, resolveInside, toPosixRelative } from 'dsh-common'
import { ALWAYS_SKIPPED, formatBytes, readState, walk, type ReadState } from './capture.ts'
import { Config } from './config.ts'
import { SnapshotError } from './errors.ts'
import { captureRefs, releaseRefs, type RefsEntry } from './git-refs.ts'
import { removeTreeStore, snapshotTree } from './git-tree.ts'
import { compileIgnore, type PathMatcher } from './internal/ignore.ts'
import type { JournalRecord, ParsedJournal } from './journal-format.ts'
import { JournalWriter } from './journal.ts'
import { keepScopes, type KeepSettings } from './keep.ts'
import { journalFileFor, markerOf, packOf, treeStoreOf } from './layout.ts'
import { capturesOf, type MeasuredShell, type PreImages } from './measure.ts'
import { describeScopes, nothingToRestore, rolledBack } from './messages.ts'
import { currentOwner, type JournalOwner } from './owner.ts'
import { pathState, postable } from './post-image.ts'
import { mergeOutcome, restoreScope, syncParents } from './restore.ts'
import { newScope, replayScopes, selectScopes, type ScopeState } from './scopes.ts'
import { WorkspaceTracker, type Difference, type TrackerStart } from './shell/tracker.ts'
import { removeMarkers } from './shell/watch.ts'
import type {
  CapturedPath, CaptureEntry, CaptureSummary, RestoreOutcome, RollbackResult, ScopeRef, ScopeSelector, ScopeSummary, SnapshotsOptions, SyncMode,
} from './types.ts'

type Pending = { record: JournalRecord; payload?: Uint8Array }

/** A path's pre-image as a capture read it (`null`: nothing there; undefined: not bytes, a directory or a symlink). */
function imageOf(read: ReadState): Buffer | null | undefined {
  if (read.entry.kind === 'absent') return null
  return read.entry.kind === 'file' ? read.payload ?? Buffer.alloc(0) : undefined
}

/** Paths a capture in progress already holds; `keep` notes one asked for again. */
interface ReadTarget {
  has(path: string): boolean
  keep(path: string): void
}

/**
 * One session's snapshots: what its write calls are about to change,
 * journalled durably before they run, so it can be put back exactly.
 *
 * Scopes group captures until a verdict: `commit` drops them, `rollback`
 * restores them. Within an open scope the first capture of a path wins.
 * Every method is synchronous except `rollback` (a git tree restore runs
 * git); the journal is on disk before `capture` returns.
 *
 * @example
 * const snaps = new Snapshots({ root: '/work/app', vault: '/work/app/.dsh', sessionId: 's1' })
 * snaps.capture({ key: 'call:c1', callId: 'c1' }, ['src/a.ts'])
 * // … the write runs …
 * const r = await snaps.rollback({ callId: 'c1' }, 'type-check failed')
 */
export class Snapshots {
  readonly root: string
  readonly vault: string
  readonly sessionId: string
  private readonly _sync: SyncMode
  private readonly _maxFile: number
  private readonly _maxDir: number
  private readonly _ignore: readonly string[]
  private readonly _skip: PathMatcher
  private readonly _owner: JournalOwner
  private readonly _elsewhere: boolean
  private _journal?: JournalWriter
  private _open: ScopeState[] = []
  private _nextScope = 1
  private _closed = false
  private _tracker?: WorkspaceTracker
  private readonly _measured = new Map<string, MeasuredShell>()
  private readonly _keep: KeepSettings

  constructor(options: SnapshotsOptions, owner: JournalOwner = currentOwner()) {
    const settings = Config(options)
    this.root = realpathSync(options.root)
    this.vault = resolve(options.vault)
    this.sessionId = options.sessionId
    this._sync = settings.fsync
    this._maxFile = settings.maxFileBytes
    this._maxDir = settings.maxDirBytes
    this._ignore = [...settings.exclude, ...settings.ignore]
    const vaultRel = isInside(this.root, this.vault) ? [toPosixRelative(this.root, this.vault)] : []
    this._skip = compileIgnore([...ALWAYS_SKIPPED, ...this._ignore], vaultRel)
    this._owner = owner
    this._elsewhere = settings.elsewhere
    this._keep = { maxBytes: settings.keepBytes, maxAgeMs: settings.keepDays * 86_400_000, maxFileBytes: settings.maxFileBytes,
      fsync: settings.fsync !== 'off', written: 0, pruned: false }
    this._elsewhere = settings.elsewhere
  }

  /**
   * Continue a journal this process left behind (a disposed plugin
   * instance): its open scopes become this instance's.
   */
  static adopt(parsed: ParsedJournal, options: Omit<SnapshotsOptions, 'root' | 'sessionId'>, owner: JournalOwner = currentOwner()): Snapshots {
    const header = parsed.header
    if (!header) throw new SnapshotError('journal', `${parsed.file} has no readable header`)
    const snaps = new Snapshots({ ...options, root: header.root, sessionId: header.sessionId }, owner)
    snaps._journal = JournalWriter.adopt(parsed, owner, snaps._sync)
    const scopes = replayScopes(parsed.records)
    snaps._open = scopes.filter(s => !s.verdict)
    // Scope ids keep counting across resets, so continue after the highest one seen.
    snaps._nextScope = Math.max(0, ...scopes.map(sc => Number(sc.id.slice(1)) || 0)) + 1
    return snaps
  }

  /** The journal file, once something was captured. */
  get journalFile(): string | undefined {
    return this._journal?.file
  }

  /** Number of scopes waiting for a verdict. */
  get openScopes(): number {
    return this._open.length
  }

  /** Whether a scope with this key is open. */
  isOpen(key: string): boolean {
    return this._open.some(s => s.key === key)
  }

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

  /** Whether shell tracking runs (see {@link startTracking}). */
  get tracking(): boolean {
    return !!this._tracker
  }

  /**
   * `shell: 'track'`: build the warm picture of the workspace (every
   * tracked file's bytes in a pack under the vault, a watch on every
   * tracked directory) so each shell call's pre-image exists before it
   * runs. Once per session; later calls return undefined.
   * @throws SnapshotError `too-large` past `maxDirBytes` of tracked files.
   */
  startTracking(options: { maxFileBytes: number }): TrackerStart | undefined {
    if (this._tracker) return undefined
    if (this._closed) throw new SnapshotError('closed', `snapshots of session ${this.sessionId} were disposed`)
    const journal = this.journal().file
    const vaultRel = isInside(this.root, this.vault) ? [toPosixRelative(this.root, this.vault)] : []
    try {
      const { tracker, stats } = WorkspaceTracker.start({
        root: this.root, pack: packOf(journal), marker: markerOf(journal),
        skip: [...ALWAYS_SKIPPED, ...this._ignore, ...vaultRel.map(v => `/${v}`)], maxFileBytes: options.maxFileBytes, maxBytes: this._maxDir,
      })
      this._tracker = tracker
      return stats
    } catch (error) {
      if (error instanceof SnapshotError) throw error
      const e = error as NodeJS.ErrnoException
      throw new SnapshotError('io', `cannot track the workspace: ${e.message}`)
    }
  }

  /**
   * What changed since the tracker last looked (out of band, or the call
   * that just ended), adopted as the new picture. Workspace-relative paths.
   */
  async refresh(): Promise<Difference[]> {
    const tracker = this._tracker
    if (!tracker) return []
    const diffs = await tracker.differences()
    if (diffs.length) tracker.adopt(diffs)
    return diffs
  }

  /**
   * Record a shell call's pre-image: the tracker's pack as it is now,
   * durably, before the command runs. Its changes are measured later
   * ({@link measureShell}); until then a rollback or a recovery compares
   * the whole workspace with the pack.
   */
  captureWorkspace(scope: ScopeRef): CaptureSummary {
    const tracker = this._tracker
    if (!tracker) throw new SnapshotError('unsupported', 'shell tracking is not running')
    if (this._sync !== 'off') tracker.sync()
    return this.captureEntry(scope, tracker.entry())
  }

  /**
   * What the shell call `callId` changed (created, modified, deleted files),
   * measured once: each changed path's earlier state is journalled as a
   * capture of its own, so a rollback restores exactly those paths.
   * Undefined when no open scope holds a workspace pre-image for the call.
   */
  async measureShell(callId: string): Promise<MeasuredShell | undefined> {
    const known = this._measured.get(callId)
    if (known) return known
    const scope = selectScopes(this._open, { callId }).find(s => s.items.some(i => i.entry.kind === 'manifest'))
    if (!scope || !this._tracker) return undefined
    if (scope.measured) return { created: [], modified: [], deleted: [] }
    const diffs = await this._tracker.differences()
    const { items, changes, before } = capturesOf(diffs, held => this._tracker!.bytes(held))
    const ref: ScopeRef = { key: scope.key, callId }
    // Not fsynced: lost in a crash, recovery compares the whole workspace with the pack instead.
    this.record(ref, false, (state, add) => {
      for (const item of items) {
        if (state.has(item.entry.path)) state.keep(item.entry.path)
        else add(item)
      }
    })
    this.journal().append([{ record: { t: 'measured', scope: scope.id } }])
    scope.measured = true
    const measured: MeasuredShell = before ? { ...changes, before } : changes
    this._measured.set(callId, measured)
    return measured
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

  /** Close the selected open scopes, keeping the files as they are. */
  commit(selector: ScopeSelector = {}): ScopeSummary[] {
    const chosen = selectScopes(this._open, selector)
    if (!chosen.length) return []
    this.keep(chosen, 'commit')
    this.close(chosen, 'commit')
    this.forgetMeasured(chosen)
    return chosen.reverse().map(summary)
  }

  /**
   * Restore the selected open scopes (newest first, so each path ends as
   * its oldest capture had it) and close them. Never throws for a path that
   * could not be restored: it is listed in `failed`. When nothing matches,
   * `matched` is false and nothing is touched.
   */
  async rollback(selector: ScopeSelector, reason: string): Promise<RollbackResult> {
    const chosen = selectScopes(this._open, selector)
    if (!chosen.length) return { matched: false, restored: [], deleted: [], failed: [], message: nothingToRestore(selector, this.sessionId) }
    const what = describeScopes(selector, chosen, this.sessionId)
    // What the rolled-back calls wrote, for the record (a person reviewing the session sees its diff).
    this.keep(chosen, 'rollback', reason)
    // The verdict goes first: a crash mid-restore leaves a rollback for recovery to finish
    // (and were the verdict lost, a scope without one is rolled back all the same).
    this.appendVerdicts(chosen, 'rollback', reason)
    this._open = this._open.filter(s => !chosen.includes(s))
    this.forgetMeasured(chosen)
    // Newest scope first, so each path ends as its oldest capture had it; reported oldest first.
    const outcomes: RestoreOutcome[] = []
    for (const scope of chosen) outcomes.unshift(await restoreScope(this.root, scope, this._journal!,
      { fsync: this._sync !== 'off', vault: this.vault, reason }))
    releaseIndexLinks(chosen)
    const total: RestoreOutcome = { restored: [], deleted: [], failed: [] }
    for (const outcome of outcomes) mergeOutcome(total, outcome)
    // Restored files are durable before the journal may forget them.
    if (this._sync !== 'off') syncParents(this.root, total.deleted)
    const failedOf = (i: number) => outcomes[outcomes.length - 1 - i]!.failed.length
    this.finish(chosen.map((s, i) => ({ record: { t: 'done', scope: s.id, failed: failedOf(i) } as JournalRecord })))
    return { matched: true, ...total, message: rolledBack(what, total) }
  }

  /**
   * Keep what the closing scopes changed, before and after, for `dsh undo`
   * and `dsh review`. Best effort: a commit or rollback stands when this
   * fails (a full disk); the call then shows as having nothing kept.
   */
  private keep(scopes: readonly ScopeState[], kind: 'commit' | 'rollback', reason?: string) {
    if (!this._keep.maxBytes) return
    try {
      keepScopes(this, scopes, kind, reason, this._keep, (offset, size, sum) => this._journal!.readPayload(offset, size, sum))
    } catch {
      // Retention is not the verdict: nothing kept for these calls, and the review page shows none.
    }
  }

  /** Drop every capture of every scope and delete the journal. */
  clear(): void {
    this._open = []
    this.stopTracking(true)
    if (this._journal) removeTreeStore(treeStoreOf(this._journal.file))
    this._journal?.remove()
    this._journal = undefined
  }

  /** What the open (selected) scopes hold, oldest scope first. */
  captured(selector?: ScopeSelector): CapturedPath[] {
    const scopes = selector ? selectScopes(this._open, selector).reverse() : this._open
    return scopes.flatMap(s => s.items.map(({ entry }) => ({
      path: entry.path, kind: entry.kind, scope: s.id, callIds: [...s.callIds],
      ...definedOnly({ step: s.step, turn: s.turn }),
    })))
  }

  /**
   * Release the journal. With no open scope it is deleted; otherwise it
   * stays for recovery (or for the next instance in this process to adopt).
   */
  dispose(): void {
    if (this._closed) return
    this._closed = true
    if (!this._journal) return
    if (this._open.length) {
      // Left for recovery or adoption: its verdicts so far must be on disk (the pack too).
      this.stopTracking(false)
      this._journal.flush()
      this._journal.close()
    } else {
      this.stopTracking(true)
      removeTreeStore(treeStoreOf(this._journal.file))
      this._journal.remove()
    }
  }

  private stopTracking(remove: boolean) {
    if (this._tracker) {
      this._tracker.close(remove)
      this._tracker = undefined
    } else if (remove && this._journal) {
      rmSync(packOf(this._journal.file), { force: true })
    }
    if (this._journal) removeMarkers(markerOf(this._journal.file))
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

  private readInto(state: ReadTarget, abs: string, add: (p: { entry: CaptureEntry; payload?: Buffer }) => void, budget: { total: number }, asDir = false) {
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

  /** Read into a scratch list, then journal it in one (fsynced, when `durable`) append, then update memory. */
  private record(ref: ScopeRef, durable: boolean,
    read: (state: ReadTarget, add: (p: { entry: CaptureEntry; payload?: Buffer }) => void) => void): CaptureSummary {
    if (this._closed) throw new SnapshotError('closed', `snapshots of session ${this.sessionId} were disposed`)
    const existing = this._open.find(s => s.key === ref.key)
    const scope = existing ?? newScope(`s${this._nextScope}`, ref.key, ref, Date.now())
    const fresh = new Map<string, { entry: CaptureEntry; payload?: Buffer }>()
    const kept: string[] = []
    const target: ReadTarget = {
      has: p => scope.paths.has(p) || fresh.has(p),
      keep: p => { if (scope.paths.has(p)) kept.push(p) },
    }
    try {
      read(target, item => {
        if (scope.paths.has(item.entry.path)) kept.push(item.entry.path)
        else if (!fresh.has(item.entry.path)) fresh.set(item.entry.path, item)
      })
    } catch (error) {
      const e = error as NodeJS.ErrnoException
      // An OS error reading the workspace is a refusal with a reason, not a crash of the turn.
      if (!(error instanceof SnapshotError) && typeof e?.code === 'string' && e.path) {
        throw new SnapshotError('io', `cannot read ${toPosixRelative(this.root, e.path) || '.'} (${e.code})`)
      }
      throw error
    }
    const pending: Pending[] = []
    if (!existing) pending.push({ record: { t: 'open', scope: scope.id, key: scope.key, callIds: scope.callIds,
      ...definedOnly({ step: ref.step, turn: ref.turn }), time: scope.time } })
    else if (ref.callId !== undefined && !existing.callIds.includes(ref.callId)) pending.push({ record: { t: 'join', scope: scope.id, callId: ref.callId } })
    for (const { entry, payload } of fresh.values()) pending.push({ record: { t: 'cap', scope: scope.id, entry }, ...(payload ? { payload } : {}) })
    let bytes = 0
    if (pending.length) {
      const offsets = this.journal().append(pending, durable)
      pending.forEach((p, i) => {
        if (p.record.t !== 'cap') return
        scope.paths.add(p.record.entry.path)
        const offset = offsets[i]
        scope.items.push(offset === undefined ? { entry: p.record.entry } : { entry: p.record.entry, payloadOffset: offset })
        bytes += p.payload?.length ?? 0
      })
    }
    if (!existing) {
      this._nextScope++
      this._open.push(scope)
    } else if (ref.callId !== undefined && !existing.callIds.includes(ref.callId)) {
      existing.callIds.push(ref.callId)
    }
    // A path asked for twice in one call counts once; paths kept from before are listed once.
    return { scope: scope.id, captured: [...fresh.keys()], kept: [...new Set(kept)], bytes }
  }

  private journal(): JournalWriter {
    if (!this._journal) {
      const file = journalFileFor(this.vault, this.sessionId, this._owner.instance)
      this._journal = JournalWriter.create(file,
        { sessionId: this.sessionId, root: this.root, owner: this._owner, created: Date.now(),
        ...(this._elsewhere ? { elsewhere: true as const } : {}) }, this._sync)
    }
    return this._journal
  }

  private close(scopes: ScopeState[], verdict: 'commit') {
    releaseIndexLinks(scopes)
    const remaining = this._open.filter(s => !scopes.includes(s))
    if (!remaining.length) {
      // Nothing left open: resetting the journal is the verdict.
      this.reset()
    } else {
      this.appendVerdicts(scopes, verdict)
    }
    this._open = remaining
  }

  private appendVerdicts(scopes: ScopeState[], verdict: 'commit' | 'rollback', reason?: string) {
    this.journal().append(scopes.map(s => ({ record: { t: 'verdict', scope: s.id, verdict, ...definedOnly({ reason }) } })))
  }

  private finish(done: Pending[]) {
    if (!this._open.length) this.reset()
    else this._journal?.append(done)
  }

  /** Forget measured shell changes of scopes that closed. */
  private forgetMeasured(scopes: readonly ScopeState[]) {
    for (const s of scopes) for (const c of s.callIds) this._measured.delete(c)
  }

  private reset() {
    if (!this._journal) return
    this._journal.reset()
    removeTreeStore(treeStoreOf(this._journal.file))
  }
}

/** A closed scope's index links are of no more use (a reset removes them all anyway). */
function releaseIndexLinks(scopes: readonly ScopeState[]) {
  for (const s of scopes) for (const { entry } of s.items) if (entry.kind === 'refs') releaseRefs(entry)
}

function summary(s: ScopeState): ScopeSummary {
  return {
    scope: s.id, key: s.key, callIds: [...s.callIds], paths: [...s.paths],
    ...definedOnly({ step: s.step, turn: s.turn }),
  }
}
