import { closeSync, lstatSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs'
import { join } from 'node:path'
import { definedOnly } from 'dsh-common'
import { checksum, JOURNAL_SUFFIX, type JournalHeader } from './journal-format.ts'
import { changeBytes, KeptStore, readKeptState, sameState, type KeptChange, type KeptState } from './kept.ts'
import { snapshotDir } from './layout.ts'
import { ownerState } from './owner.ts'
import type { ScopeState } from './scopes.ts'
import type { CaptureEntry } from './types.ts'

/** A journal's retention settings and what it wrote since it last pruned. */
export interface KeepSettings {
  maxBytes: number
  maxAgeMs: number
  maxFileBytes: number
  fsync: boolean
  written: number
  pruned: boolean
}

interface Owner {
  root: string
  vault: string
  sessionId: string
}

/**
 * Record what closing scopes changed: each captured path's state before
 * (from the journal) and now. Unchanged paths are left out. Prunes the
 * store at the first verdict of a journal and after each eighth of the
 * size bound written.
 */
export function keepScopes(owner: Owner, scopes: readonly ScopeState[], kind: 'commit' | 'rollback', reason: string | undefined,
  settings: KeepSettings, payload: (offset: number, size: number, sum: number) => Buffer): void {
  const store = new KeptStore(owner.vault, settings.fsync)
  const time = Date.now()
  for (const scope of scopes) {
    const changes: KeptChange[] = []
    const measured = scope.measured || !scope.items.some(i => i.entry.kind === 'manifest')
    for (const item of scope.items) {
      if (unchangedFile(owner.root, item.entry)) continue
      const before = beforeState(store, item.entry, item.payloadOffset, payload)
      if (!before) continue
      const after = readKeptState(store, owner.root, item.entry.path, settings.maxFileBytes)
      if (sameState(before, after)) continue
      changes.push({ path: item.entry.path, before, after })
    }
    if (!changes.length && measured) continue
    store.append({
      v: 1, id: `${owner.sessionId}/${scope.id}.${time.toString(36)}`, sessionId: owner.sessionId, callIds: [...scope.callIds],
      ...definedOnly({ turn: scope.turn, step: scope.step, reason, unmeasured: measured ? undefined : true }),
      time, kind, changes, bytes: changeBytes(changes),
    })
    settings.written += changeBytes(changes)
  }
  if (!settings.pruned || settings.written > settings.maxBytes / 8) {
    settings.pruned = true
    settings.written = 0
    store.prune({ maxBytes: settings.maxBytes, maxAgeMs: settings.maxAgeMs }, liveSessions(owner.vault, owner.sessionId), time)
  }
}

/** A captured file that is still the same bytes and mode (checked before anything is stored). */
function unchangedFile(root: string, entry: CaptureEntry): boolean {
  if (entry.kind !== 'file') return false
  try {
    const st = lstatSync(join(root, entry.path))
    if (!st.isFile() || st.size !== entry.size || (st.mode & 0o7777) !== entry.mode) return false
    return checksum(readFileSync(join(root, entry.path))) === entry.sum
  } catch {
    // Gone or unreadable now: changed.
    return false
  }
}

/** A capture as a kept state (its bytes put in the store); undefined for what is not one path's state. */
function beforeState(store: KeptStore, entry: CaptureEntry, offset: number | undefined,
  payload: (offset: number, size: number, sum: number) => Buffer): KeptState | undefined {
  switch (entry.kind) {
    case 'file':
      return offset === undefined ? { k: 'unknown', why: 'its bytes are not in the journal' } : { k: 'file', mode: entry.mode, size: entry.size,
        sha: store.put(payload(offset, entry.size, entry.sum)) }
    case 'symlink': return { k: 'symlink', target: entry.target }
    case 'absent': return entry.dirs.length ? { k: 'absent', dirs: entry.dirs } : { k: 'absent' }
    case 'dir': return { k: 'dir', mode: entry.mode }
    case 'uncaptured': return { k: 'unknown', why: entry.why }
    // A whole-workspace pre-image (a shell call's pack, a git tree): its measured captures are the paths.
    case 'manifest':
    case 'tree':
      return undefined
  }
}

/** Sessions whose journal's writer still runs (their records are never pruned), and `own`. */
function liveSessions(vault: string, own: string): Set<string> {
  const live = new Set([own])
  let names: string[]
  try {
    names = readdirSync(snapshotDir(vault))
  } catch {
    return live
  }
  for (const name of names) {
    if (!name.endsWith(JOURNAL_SUFFIX)) continue
    const header = readHeader(join(snapshotDir(vault), name))
    if (header && ownerState(header.owner) !== 'dead') live.add(header.sessionId)
  }
  return live
}

function readHeader(file: string): JournalHeader | undefined {
  try {
    const fd = openSync(file, 'r')
    try {
      const buf = Buffer.alloc(4096)
      const n = readSync(fd, buf, 0, buf.length, 0)
      const nl = buf.subarray(0, n).indexOf(0x0a)
      return nl === -1 ? undefined : JSON.parse(buf.subarray(0, nl).toString('utf8')) as JournalHeader
    } finally {
      closeSync(fd)
    }
  } catch {
    // Gone or unreadable: not a live session's.
    return undefined
  }
}
