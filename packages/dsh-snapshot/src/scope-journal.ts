import { realpathSync } from 'node:fs'
import { resolve } from 'node:path'
import { definedOnly, isInside, toPosixRelative } from 'dsh-common'
import { ALWAYS_SKIPPED } from './capture.ts'
import { Config } from './config.ts'
import { SnapshotError } from './errors.ts'
import { removeTreeStore } from './git-tree.ts'
import { compileIgnore, type PathMatcher } from './internal/ignore.ts'
import type { JournalRecord } from './journal-format.ts'
import { JournalWriter } from './journal.ts'
import type { KeepSettings } from './keep.ts'
import { journalFileFor, treeStoreOf } from './layout.ts'
import { currentOwner, type JournalOwner } from './owner.ts'
import { newScope, selectScopes, type ScopeState } from './scopes.ts'
import type { CapturedPath, CaptureEntry, CaptureSummary, ScopeRef, ScopeSelector, SnapshotsOptions, SyncMode } from './types.ts'

export type Pending = { record: JournalRecord; payload?: Uint8Array }

/** Paths a capture in progress already holds; `keep` notes one asked for again. */
export interface ReadTarget {
  has(path: string): boolean
  keep(path: string): void
}

/** What a capture read: an entry, with its bytes when it is a file. */
export type ReadItem = { entry: CaptureEntry; payload?: Buffer }

/**
 * The journal side of a session's snapshots: its settings, its open scopes,
 * and the records that make them durable (a capture, a verdict, a reset).
 * {@link Snapshots} builds on it: path captures, shell captures, verdicts.
 */
export class ScopeJournal {
  readonly root: string
  readonly vault: string
  readonly sessionId: string
  protected readonly _sync: SyncMode
  protected readonly _maxFile: number
  protected readonly _maxDir: number
  protected readonly _ignore: readonly string[]
  protected readonly _skip: PathMatcher
  protected readonly _owner: JournalOwner
  protected readonly _elsewhere: boolean
  protected _journal?: JournalWriter
  protected _open: ScopeState[] = []
  protected _nextScope = 1
  protected _closed = false
  protected readonly _keep: KeepSettings

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

  /** What the open (selected) scopes hold, oldest scope first. */
  captured(selector?: ScopeSelector): CapturedPath[] {
    const scopes = selector ? selectScopes(this._open, selector).reverse() : this._open
    return scopes.flatMap(s => s.items.map(({ entry }) => ({
      path: entry.path, kind: entry.kind, scope: s.id, callIds: [...s.callIds],
      ...definedOnly({ step: s.step, turn: s.turn }),
    })))
  }

  /** Read into a scratch list, then journal it in one (fsynced, when `durable`) append, then update memory. */
  protected record(ref: ScopeRef, durable: boolean,
    read: (state: ReadTarget, add: (p: ReadItem) => void) => void): CaptureSummary {
    if (this._closed) throw new SnapshotError('closed', `snapshots of session ${this.sessionId} were disposed`)
    const existing = this._open.find(s => s.key === ref.key)
    const scope = existing ?? newScope(`s${this._nextScope}`, ref.key, ref, Date.now())
    const fresh = new Map<string, ReadItem>()
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

  protected journal(): JournalWriter {
    if (!this._journal) {
      const file = journalFileFor(this.vault, this.sessionId, this._owner.instance)
      this._journal = JournalWriter.create(file,
        { sessionId: this.sessionId, root: this.root, owner: this._owner, created: Date.now(),
        ...(this._elsewhere ? { elsewhere: true as const } : {}) }, this._sync)
    }
    return this._journal
  }

  protected appendVerdicts(scopes: ScopeState[], verdict: 'commit' | 'rollback', reason?: string) {
    this.journal().append(scopes.map(s => ({ record: { t: 'verdict', scope: s.id, verdict, ...definedOnly({ reason }) } })))
  }

  protected finish(done: Pending[]) {
    if (!this._open.length) this.reset()
    else this._journal?.append(done)
  }

  protected reset() {
    if (!this._journal) return
    this._journal.reset()
    removeTreeStore(treeStoreOf(this._journal.file))
  }
}
