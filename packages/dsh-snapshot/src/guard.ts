import { join, resolve } from 'node:path'
import { acquireFileLock, definedOnly, ensureVault, processState, readLockOwner, resolveInside, toPosixRelative, type FileLock, type LockOwner } from 'dsh-common'
import type { Session } from 'dsh-session'
import type { ToolExecution, ToolResult } from 'dsh-tools'
import { SnapshotError } from './errors.ts'
import { captureRefused, escapeRefused, listPaths, nothingToRestore } from './messages.ts'
import { currentOwner, liveInstances, type JournalOwner } from './owner.ts'
import { listJournals, readJournalIfThere, resolveJournal, writerState, type RecoveryReport } from './recover.ts'
import { snapshotDir } from './layout.ts'
import { Snapshots } from './snapshots.ts'
import type { ChangesRequest, CommitRequest, OutsideChanges, RestoredInfo, RollbackRequest, RollbackResult, ScopeRef } from './types.ts'
import type { Config } from './config.ts'
import type { ShellChanges } from './shell/tracker.ts'
import { discardedNote, gitRestored, otherSessionNote, outsideNote } from './messages.ts'
import { committedBlobs, gitBlobId, readGitState, type RefsEntry } from './git-refs.ts'
import type { Difference } from './shell/tracker.ts'
import { pathState } from './post-image.ts'

/** What the guard needs from its host (the Cordis adapter): events out, a logger. */
export interface GuardHost {
  /** Does some plugin promise a verdict for this call's scope? */
  judge(exec: ToolExecution): boolean
  /** The schema error the tool service would give these arguments, if any. */
  validate(exec: ToolExecution): string | undefined
  restored(info: RestoredInfo): void
  /** Files changed outside any tool call were found (and adopted as the workspace's picture). */
  outside(info: OutsideChanges): void
  recovered(report: RecoveryReport): void
  info(text: string): void
  warn(text: string): void
}

/**
 * Snapshots for every session of one plugin instance: captures before each
 * write call, answers verdicts, resolves journals left behind. No Cordis in
 * here; `index.ts` wires it to events.
 */
export class SnapshotGuard {
  readonly owner: JournalOwner = currentOwner()
  private readonly _sessions = new Map<string, Snapshots>()
  private readonly _vaults = new Map<string, Promise<void>>()
  private readonly _notGit = new Set<string>()
  private readonly _untracked = new Set<string>()
  /** What a rollback put back in git, for the rolled-back call's result. */
  private readonly _gitNotes = new Map<string, string>()
  private readonly _inflight = new Set<string>()
  /** Per workspace root: the last guarded call's session that wrote each path, and what it left (so a later change by anyone else is not put on it). */
  private readonly _written = new Map<string, Map<string, { sessionId: string; state: string | null }>>()
  private _disposed = false

  constructor(private readonly settings: Config, private readonly host: GuardHost) {
    liveInstances.add(this.owner.instance)
  }

  vaultOf(session: Session): string {
    return this.settings.vault ? resolve(this.settings.vault) : session.vault
  }

  /**
   * Once per vault: resolve journals whose writer died (unless `recover` is
   * off) and adopt the ones a disposed instance of this process left open.
   */
  prepareVault(vault: string): Promise<void> {
    let ready = this._vaults.get(vault)
    if (!ready) {
      ready = this.resolveVault(vault).catch(error => {
        this.host.warn(`snapshot recovery in ${snapshotDir(vault)} failed: ${(error as Error).message}`)
      })
      this._vaults.set(vault, ready)
    }
    return ready
  }

  private async resolveVault(vault: string) {
    ensureVault(vault)
    const report: RecoveryReport = { dir: snapshotDir(vault), journals: [], skipped: [] }
    for (const file of listJournals(vault).reverse()) {
      const parsed = readJournalIfThere(file)
      if (!parsed) continue
      const owner = parsed.header?.owner
      const state = writerState(parsed)
      if (owner && state === 'this-process' && !liveInstances.has(owner.instance) && !this._sessions.has(parsed.header!.sessionId)) {
        const snaps = Snapshots.adopt(parsed, this.options(vault), this.owner)
        this._sessions.set(snaps.sessionId, snaps)
        if (snaps.openScopes) this.host.info(`adopted ${snaps.openScopes} open snapshot scope(s) of session ${snaps.sessionId} left by a reloaded instance`)
        continue
      }
      if (state !== 'dead' || !this.settings.recover) continue
      report.journals.push(await resolveJournal(parsed, this.settings.fsync !== 'off'))
    }
    if (report.journals.length) this.host.recovered(report)
  }

  private options(vault: string) {
    const { fsync, maxFileBytes, maxDirBytes, exclude, ignore, elsewhere, keepBytes, keepDays } = this.settings
    return { vault, fsync, maxFileBytes, maxDirBytes, exclude, ignore, elsewhere, keepBytes, keepDays }
  }

  /** The session's snapshots (its vault prepared first). */
  async snapshotsFor(session: Session): Promise<Snapshots> {
    const vault = this.vaultOf(session)
    await this.prepareVault(vault)
    let snaps = this._sessions.get(session.id)
    if (!snaps) {
      snaps = new Snapshots({ root: session.cwd, sessionId: session.id, ...this.options(vault) }, this.owner)
      this._sessions.set(session.id, snaps)
    }
    return snaps
  }

  scopeRef(exec: ToolExecution): ScopeRef {
    const info = {
      callId: exec.callId,
      ...definedOnly({ step: exec.step, turn: exec.turn }),
    }
    if (this.settings.scope === 'step' && exec.step !== undefined) return { key: `step:${exec.turn ?? ''}:${exec.step}`, ...info }
    return { key: `call:${exec.callId}`, ...info }
  }

  /** The `tools/execute` listener: capture, run, then commit when nobody will judge. */
  async execute(exec: ToolExecution, next: () => Promise<ToolResult>): Promise<ToolResult> {
    const tool = exec.tool
    const write = tool?.effects === 'write'
    const shell = tool?.effects === 'shell' && this.settings.shell !== 'off'
    if (!tool || this._disposed || (!write && !shell)) return next()
    let paths: string[] = []
    if (write) {
      try {
        paths = tool.paths!(exec.arguments)
        if (!Array.isArray(paths) || paths.some(p => typeof p !== 'string')) throw new TypeError('paths() did not return a list of strings')
      } catch (error) {
        // Arguments that fail the tool's schema get the schema's message, as without this guard.
        const invalid = this.host.validate(exec)
        return { content: invalid ? `${invalid}; nothing was run` : `invalid arguments for ${exec.name}: cannot tell which paths it writes (${(error as Error).message}); nothing was run`, isError: true }
      }
      if (!paths.length) return next()
    }
    let snaps: Snapshots
    try {
      snaps = await this.snapshotsFor(exec.session)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (typeof code !== 'string') throw error
      return { content: captureRefused(`cannot open the workspace ${exec.session.cwd} (${code})`, write ? 'write' : 'command'), isError: true }
    }
    const ref = this.scopeRef(exec)
    let waited: string | undefined
    try {
      waited = await this.lockWorkspace(snaps)
    } catch (error) {
      return { content: captureRefused((error as Error).message, write ? 'write' : 'command'), isError: true }
    }
    let outside: { outside: string[]; others: Map<string, string[]> } = { outside: [], others: new Map() }
    let gitBefore: RefsEntry | undefined
    try {
      if (shell && this.settings.shell === 'track' && !snaps.tracking && !this.startTracking(snaps)) return next()
      outside = await this.outOfBand(exec, snaps)
      if (write) {
        snaps.capture(ref, paths)
      } else if (this.settings.shell === 'track') {
        snaps.captureWorkspace(ref)
      } else if (!(await snaps.captureTree(ref))) {
        if (!this._notGit.has(snaps.root)) this.host.warn(`shell: 'git' is on but ${snaps.root} is not the top of a git work tree; shell calls there run without a snapshot`)
        this._notGit.add(snaps.root)
        return next()
      }
      if (shell && this.settings.gitRefs) gitBefore = snaps.captureRefs(ref)
    } catch (error) {
      if (!(error instanceof SnapshotError)) throw error
      return { content: error.reason === 'escape' ? escapeRefused(error.message) : captureRefused(error.message, write ? 'write' : 'command'), isError: true }
    }
    let result: ToolResult
    let own: Difference[] = []
    this._inflight.add(exec.callId)
    try {
      result = await next()
    } finally {
      this._inflight.delete(exec.callId)
      await this.settle(snaps, ref, exec, shell)
      // A verdict still to come (a judge that promised one): the call's changes are measured before the picture moves on.
      if (shell && snaps.isOpen(ref.key)) await this.measureOpen(snaps, exec.callId)
      // What this call (and its judgement) changed is the workspace's picture now, not out of band.
      if (snaps.tracking) own = await this.adoptOwn(snaps)
      if (write) this.noteWritten(snaps, exec.session.id, paths)
      this.unlockIfIdle(snaps)
    }
    const git = this._gitNotes.get(exec.callId)
    this._gitNotes.delete(exec.callId)
    const discarded = !git && gitBefore ? await this.discarded(snaps, gitBefore, own) : undefined
    const notes = [
      ...(git ? [git] : []),
      ...(discarded ? [discarded] : []),
      ...(waited ? [waited] : []),
      ...(outside.outside.length ? [outsideNote(outside.outside)] : []),
      ...(outside.others.size ? [otherSessionNote(outside.others)] : []),
    ]
    return notes.length ? { ...result, content: `${result.content}\n${notes.join('\n')}` } : result
  }

  /**
   * Take the workspace lock for a session about to capture (kept until it
   * has no scope open): another session's write is judged and settled
   * before this one runs, so a rollback never takes what the other was told
   * was kept. A lock left by a dead process is broken, and that process's
   * journals are resolved first. Returns the note for the model when the
   * call had to wait.
   */
  private async lockWorkspace(snaps: Snapshots): Promise<string | undefined> {
    const path = join(snaps.vault, 'workspace.lock')
    const key = lockKey(snaps)
    if (heldLocks.has(key)) return undefined
    ensureVault(snaps.vault)
    const before = readLockOwner(path)
    const orphaned = before && processState(before) === 'dead'
    let holder: LockOwner | undefined
    const started = Date.now()
    try {
      heldLocks.set(key, await acquireFileLock(path, {
        staleMs: Number.POSITIVE_INFINITY, timeoutMs: this.settings.lockWaitMs, retryMs: 100, label: snaps.sessionId,
        onWait: h => { holder = h },
      }))
    } catch (error) {
      const h = (error as { holder?: LockOwner }).holder ?? holder
      throw new Error(`another dsh session (${whoHolds(h)}) has been writing in this workspace for over ${Math.round(this.settings.lockWaitMs / 1000)} s`)
    }
    if (orphaned) await this.resolveVault(snaps.vault)
    if (!holder) return undefined
    const s = ((Date.now() - started) / 1000).toFixed(1)
    this.host.info(`session ${snaps.sessionId} waited ${s} s for ${whoHolds(holder)} to finish its write`)
    return `note: another dsh session (${whoHolds(holder)}) is writing in this workspace too; this call waited ${s} s for its write to be judged (writes of two sessions are taken in turn, and neither session's rollback touches the other's kept files)`
  }

  /** Release the session's workspace lock once it has no scope open. */
  private unlockIfIdle(snaps: Snapshots) {
    if (snaps.openScopes) return
    const key = lockKey(snaps)
    heldLocks.get(key)?.release()
    heldLocks.delete(key)
  }

  /** First shell call of a session: build the tracker's picture; false (one warning) when it cannot. */
  private startTracking(snaps: Snapshots): boolean {
    if (this._untracked.has(snaps.root)) return false
    try {
      const stats = snaps.startTracking({ maxFileBytes: this.settings.shellMaxFileBytes })
      if (stats) this.host.info(`shell tracking of ${snaps.root}: ${stats.files} files (${stats.bytes} bytes) packed, ${stats.dirs + 1} directories ${stats.watched ? 'watched' : 'NOT watched (each shell call compares the whole workspace)'}, in ${Math.round(stats.ms)} ms`)
      return true
    } catch (error) {
      if (!(error instanceof SnapshotError)) throw error
      this._untracked.add(snaps.root)
      this.host.warn(`shell calls in ${snaps.root} run without a snapshot: ${error.message}`)
      return false
    }
  }

  /**
   * Changes found before a call that this session's calls did not make:
   * adopted and announced; returned for the model's note, those another
   * session's guarded call left (and nobody changed since) apart.
   */
  private async outOfBand(exec: ToolExecution, snaps: Snapshots): Promise<{ outside: string[]; others: Map<string, string[]> }> {
    const none = { outside: [], others: new Map<string, string[]>() }
    if (!snaps.tracking) return none
    const diffs = await snaps.refresh()
    const files = diffs.filter(d => d.now?.k !== 'dir' && !(d.now === undefined && d.before?.k === 'dir')).map(d => d.path)
    if (!files.length) return none
    this.host.outside({ sessionId: exec.session.id, callId: exec.callId, paths: files })
    const written = this._written.get(snaps.root)
    const out = { outside: [] as string[], others: new Map<string, string[]>() }
    for (const file of files) {
      const by = written?.get(file)
      if (by && by.sessionId !== exec.session.id && by.state === pathState(snaps.root, file)) {
        out.others.set(by.sessionId, [...(out.others.get(by.sessionId) ?? []), file])
      } else {
        out.outside.push(file)
      }
    }
    return out
  }

  /** What a guarded call of a session wrote (a writer's paths, a command's measured changes), as it left them. */
  private noteWritten(snaps: Snapshots, sessionId: string, paths: readonly string[]): void {
    const touched: string[] = []
    for (const p of paths) {
      try {
        touched.push(toPosixRelative(snaps.root, resolveInside(snaps.root, p)))
      } catch {
        // Outside the workspace: refused before it ran.
      }
    }
    if (!touched.length) return
    let written = this._written.get(snaps.root)
    if (!written) this._written.set(snaps.root, written = new Map())
    for (const file of touched) written.set(file, { sessionId, state: pathState(snaps.root, file) })
  }

  private async measureOpen(snaps: Snapshots, callId: string) {
    try {
      const c = await snaps.measureShell(callId)
      if (c) this.noteWritten(snaps, snaps.sessionId, [...c.created, ...c.modified, ...c.deleted])
    } catch (error) {
      if (!(error instanceof SnapshotError)) throw error
      this.host.warn(`measuring shell call ${callId}: ${error.message}`)
    }
  }

  private async adoptOwn(snaps: Snapshots): Promise<Difference[]> {
    try {
      return await snaps.refresh()
    } catch (error) {
      if (!(error instanceof SnapshotError)) throw error
      this.host.warn(`shell tracking of ${snaps.root}: ${error.message}`)
      return []
    }
  }

  /**
   * A kept shell call that put files with uncommitted changes back to their
   * committed content (`git checkout -- .`, `git stash`, `git reset --hard`):
   * not a regression, but the model is told what it discarded.
   */
  private async discarded(snaps: Snapshots, before: RefsEntry, own: readonly Difference[]): Promise<string | undefined> {
    const modified = own.filter(d => d.before?.k === 'file' && d.now?.k === 'file' && d.data).slice(0, 200)
    if (!modified.length) return undefined
    const committed = await committedBlobs(snaps.root, modified.map(d => d.path))
    if (!committed) return undefined
    const back = modified.filter(d => committed.get(d.path) === gitBlobId(d.data!)).map(d => d.path)
    if (!back.length) return undefined
    return discardedNote(back, readGitState(before).refs['refs/stash'] !== before.refs['refs/stash'])
  }

  /** `snapshot/tracked`: whether a call holds a workspace pre-image (its changes can be measured and rolled back). */
  tracked(req: ChangesRequest): boolean {
    const snaps = this._sessions.get(req.sessionId)
    return !!snaps?.captured({ callId: req.callId }).some(c => c.kind === 'manifest')
  }

  /**
   * `snapshot/ran`: the call ran in another process and returned; what its
   * files hold now is what it left (a shell call's changes are measured
   * first, so each changed path has its own capture).
   */
  async ran(req: ChangesRequest): Promise<void> {
    const snaps = this._sessions.get(req.sessionId)
    if (!snaps) return
    try {
      if (snaps.captured({ callId: req.callId }).some(c => c.kind === 'manifest')) await snaps.measureShell(req.callId)
      snaps.notePost(req.callId)
    } catch (error) {
      if (!(error instanceof SnapshotError)) throw error
      this.host.warn(`could not record what call ${req.callId} left: ${error.message}`)
    }
  }

  /** `snapshot/changes`: what a tracked shell call changed (measured once, its pre-images journalled). */
  async changes(req: ChangesRequest): Promise<ShellChanges | undefined> {
    const snaps = this._sessions.get(req.sessionId)
    const changes = await snaps?.measureShell(req.callId)
    if (snaps && changes) this.noteWritten(snaps, req.sessionId, [...changes.created, ...changes.modified, ...changes.deleted])
    return changes
  }

  /** After the tool returned: a scope nobody judged (and nobody will) is committed now. */
  private async settle(snaps: Snapshots, ref: ScopeRef, exec: ToolExecution, shell: boolean) {
    if (!snaps.isOpen(ref.key)) return
    if (this.host.judge(exec)) return
    // A shell call's changes are measured first, so what it changed is kept (for dsh undo and dsh review).
    if (shell) await this.measureOpen(snaps, exec.callId)
    try {
      snaps.commit({ callId: exec.callId })
    } catch (error) {
      if (!(error instanceof SnapshotError)) throw error
      this.host.warn(`could not commit the snapshot of call ${exec.callId}: ${error.message}`)
    }
  }

  async rollback(req: RollbackRequest): Promise<RollbackResult> {
    const selector = definedOnly({ callId: req.callId, step: req.step, callIds: req.callIds })
    const snaps = this._sessions.get(req.sessionId)
    if (!snaps) return { matched: false, restored: [], deleted: [], failed: [], message: nothingToRestore(selector, req.sessionId) }
    const result = await snaps.rollback(selector, req.reason)
    if (result.git?.length && req.callId !== undefined && this._inflight.has(req.callId)) this._gitNotes.set(req.callId, gitRestored(result.git))
    // What the restore wrote is the workspace's picture again, not a change out of band.
    if (snaps.tracking) await this.adoptOwn(snaps)
    this.unlockIfIdle(snaps)
    if (result.matched) {
      this.host.restored({ ...selector, sessionId: req.sessionId, reason: req.reason, restored: result.restored, deleted: result.deleted, failed: result.failed })
    }
    return result
  }

  commit(req: CommitRequest): void {
    const snaps = this._sessions.get(req.sessionId)
    if (!snaps) return
    try {
      snaps.commit(definedOnly({ callId: req.callId, step: req.step, callIds: req.callIds }))
    } catch (error) {
      if (!(error instanceof SnapshotError)) throw error
      this.host.warn(`snapshot commit for session ${req.sessionId} failed: ${error.message}`)
    }
    // A step's verdict (scope: 'step') comes after its calls returned.
    this.unlockIfIdle(snaps)
  }

  /**
   * At a turn's end a scope still open had a judge that never answered; the
   * files stay as they are (committed) so captures never pile up, and the
   * miss is logged.
   */
  endTurn(sessionId: string, turn: number): void {
    const snaps = this._sessions.get(sessionId)
    if (!snaps?.openScopes) return
    const closed = snaps.commit({})
    this.unlockIfIdle(snaps)
    const calls = closed.flatMap(s => s.callIds)
    this.host.warn(`session ${sessionId} turn ${turn}: ${closed.length} snapshot scope(s) got no verdict (calls ${listPaths(calls)}); kept the files as they are`)
  }

  /** The snapshots of a session, if it captured anything (for tests and tools). */
  get(sessionId: string): Snapshots | undefined {
    return this._sessions.get(sessionId)
  }

  dispose(): void {
    if (this._disposed) return
    this._disposed = true
    // A session with scopes still open keeps its lock: the next instance in this process adopts both.
    for (const snaps of this._sessions.values()) this.unlockIfIdle(snaps)
    for (const snaps of this._sessions.values()) {
      try {
        snaps.dispose()
      } catch (error) {
        this.host.warn(`closing snapshots of session ${snaps.sessionId}: ${(error as Error).message}`)
      }
    }
    this._sessions.clear()
    liveInstances.delete(this.owner.instance)
  }
}

/**
 * Workspace locks held by sessions of this process, by lock file and
 * session, shared across module copies (a hot reload re-imports the module)
 * so a reloaded instance adopts a session's lock with its open scopes.
 */
const LOCKS_KEY = Symbol.for('dsh-snapshot.workspace-locks')
const lockRegistry = globalThis as { [LOCKS_KEY]?: Map<string, FileLock> }
const heldLocks: Map<string, FileLock> = lockRegistry[LOCKS_KEY] ??= new Map()

function lockKey(snaps: Snapshots): string {
  return `${join(snaps.vault, 'workspace.lock')}\u0000${snaps.sessionId}`
}

function whoHolds(holder: LockOwner | undefined): string {
  if (!holder) return 'its holder is unknown'
  return `${holder.label ? `session ${holder.label}, ` : ''}pid ${holder.pid}`
}
