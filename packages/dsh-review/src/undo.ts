import { randomBytes } from 'node:crypto'
import { lstatSync, mkdirSync, readdirSync, rmdirSync, rmSync, symlinkSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { acquireFileLock, ensureVault, writeFileAtomicSync } from 'dsh-common'
import { KeptStore, readKeptState, sameState, changeBytes, type KeptChange, type KeptRecord, type KeptState } from 'dsh-snapshot'
import { diff3Merge } from 'node-diff3'
import { writeUndoNote } from './notes.ts'

/** An undo that could not be done; nothing was changed. `code` is stable. */
export class UndoError extends Error {
  readonly code = 'UNDO'
  constructor(message: string, readonly conflicts: readonly { path: string; why: string }[] = []) {
    super(message)
  }
}

/** Largest file an undo reads back into the store (what it replaced). */
const MAX_FILE_BYTES = 64 * 1024 * 1024

/** Whether a record can be taken back, and if not why. */
export type Undoable = { ok: true } | { ok: false; why: string }

/** The undo records that took back each record, by the id they took back. */
export function undoneBy(records: readonly KeptRecord[]): Map<string, KeptRecord> {
  const by = new Map<string, KeptRecord>()
  for (const r of records) if (r.kind === 'undo') for (const id of r.undoes ?? []) by.set(id, r)
  return by
}

/** Whether `record` can be taken back now (kept, not pruned, not taken back already, something known changed). */
export function undoable(record: KeptRecord, all: readonly KeptRecord[]): Undoable {
  if (record.kind === 'rollback') return { ok: false, why: 'it was rolled back by the harness' }
  if (record.pruned) return { ok: false, why: `its earlier bytes were pruned (${record.pruned.why})` }
  const by = undoneBy(all).get(record.id)
  if (by) return { ok: false, why: `taken back already by ${by.id}` }
  if (record.unmeasured && !record.changes.length) return { ok: false, why: 'what this shell call changed was never measured' }
  if (!record.changes.length) return { ok: false, why: 'it changed nothing' }
  return { ok: true }
}

/** What one undo did. */
export interface UndoResult {
  /** The undo's own record (undo it to put everything back). */
  record: KeptRecord
  /** The records it took back. */
  undid: KeptRecord[]
  restored: string[]
  deleted: string[]
  /** Paths a later write also changed, merged line by line (its changes kept). */
  merged: string[]
  /** Paths overwritten with --force although a later write changed them. */
  forced: string[]
  /** The note left for the session's model, when the session may still run. */
  note: string
}

export interface UndoOptions {
  workspace: string
  vault: string
  /** Records to take back (by id), oldest first or not: they are ordered by time. */
  ids: readonly string[]
  /** Overwrite paths a later write changed on the same lines (or in bytes that cannot be merged). */
  force?: boolean
  /** How long to wait for a running session's write to be judged (ms, default 60 000). */
  lockWaitMs?: number
  /** The tool and paths of each call, for the model's note (from the session log). */
  describeCall?: (sessionId: string, callId: string) => string | undefined
}

interface PathPlan {
  path: string
  /** The state the undo writes. */
  target: KeptState
  /** What is there now. */
  current: KeptState
  how: 'restore' | 'merge' | 'force'
  /** Directories the call created for this path (removed when empty). */
  dirs: string[]
}

/**
 * Take back kept calls byte for byte: each path they changed goes back to
 * what it was before the first of them. A path a later write changed too is
 * merged line by line when the changes do not touch the same or adjacent lines (the
 * later change stays); otherwise the undo is refused naming the paths,
 * unless `force`. What the undo replaced is recorded first, as a record of
 * its own, so the undo itself can be undone.
 * @throws UndoError when a record is unknown or cannot be taken back, or on conflicts.
 */
export async function undo(options: UndoOptions): Promise<UndoResult> {
  const store = new KeptStore(options.vault)
  ensureVault(options.vault)
  // A running session's write is judged and settled first, and none starts while this writes.
  const lock = await acquireFileLock(join(options.vault, 'workspace.lock'), {
    staleMs: Number.POSITIVE_INFINITY, timeoutMs: options.lockWaitMs ?? 60_000, retryMs: 100, label: 'dsh undo',
  }).catch((error: Error) => { throw new UndoError(`dsh undo: a dsh session is still writing in this workspace (${error.message}); try again when its write is judged`) })
  try {
    const all = store.read()
    const chosen = pickRecords(all, options.ids)
    const plans = planPaths(store, options.workspace, chosen, !!options.force)
    const conflicts = plans.flatMap(p => 'why' in p ? [p] : [])
    if (conflicts.length) {
      throw new UndoError(`not undone: ${conflicts.map(c => `${c.path} (${c.why})`).join('; ')}. Nothing was changed; dsh undo --force overwrites ${conflicts.length === 1 ? 'it' : 'them'} with the earlier bytes`, conflicts)
    }
    const ready = plans as PathPlan[]
    const changes: KeptChange[] = ready.map(p => ({ path: p.path, before: p.current, after: p.target }))
    const time = Date.now()
    const sessionId = chosen.at(-1)!.sessionId
    const record: KeptRecord = {
      v: 1, id: `undo-${time.toString(36)}-${randomBytes(3).toString('hex')}`, sessionId, callIds: [], time, kind: 'undo',
      undoes: chosen.map(r => r.id), changes, bytes: changeBytes(changes),
      reason: `took back ${describeRecords(chosen)}`,
    }
    // Recorded before any file changes: a crash part-way still knows what was there.
    store.append(record)
    const done = applyPlans(store, options.workspace, ready)
    const note = undoNote(chosen, done, options.describeCall)
    writeUndoNote(options.vault, sessionId, record.id, note)
    return {
      record, undid: chosen, ...done, note,
      merged: ready.filter(p => p.how === 'merge').map(p => p.path),
      forced: ready.filter(p => p.how === 'force').map(p => p.path),
    }
  } finally {
    lock.release()
  }
}

function pickRecords(all: readonly KeptRecord[], ids: readonly string[]): KeptRecord[] {
  if (!ids.length) throw new UndoError('dsh undo: no call to take back')
  const byId = new Map(all.map(r => [r.id, r]))
  const chosen: KeptRecord[] = []
  for (const id of new Set(ids)) {
    const r = byId.get(id)
    if (!r) throw new UndoError(`dsh undo: no kept call ${id} (see dsh undo --list)`)
    const can = undoable(r, all)
    if (!can.ok) throw new UndoError(`dsh undo: cannot take back ${describeRecords([r])}: ${can.why}`)
    chosen.push(r)
  }
  return chosen.sort((a, b) => a.time - b.time)
}

/** Per path: the state before the first chosen record, the state after the last, and what is there now. */
function planPaths(store: KeptStore, root: string, chosen: readonly KeptRecord[], force: boolean): (PathPlan | { path: string; why: string })[] {
  const first = new Map<string, KeptChange>()
  const last = new Map<string, KeptChange>()
  for (const r of chosen) {
    for (const c of r.changes) {
      if (!first.has(c.path)) first.set(c.path, c)
      last.set(c.path, c)
    }
  }
  const out: (PathPlan | { path: string; why: string })[] = []
  for (const [path, change] of first) {
    const target = change.before
    const left = last.get(path)!.after
    const current = readKeptState(store, root, path, MAX_FILE_BYTES)
    const dirs = target.k === 'absent' ? target.dirs ?? [] : []
    if (target.k === 'unknown') {
      out.push({ path, why: target.why })
      continue
    }
    if (target.k === 'file' && !store.get(target.sha)) {
      out.push({ path, why: 'its earlier bytes are gone from the store (pruned)' })
      continue
    }
    if (sameState(current, target)) continue
    if (sameState(current, left)) {
      out.push({ path, target, current, how: 'restore', dirs })
      continue
    }
    const merged = mergeBack(store, target, left, current)
    if (merged) {
      out.push({ path, target: merged, current, how: 'merge', dirs })
      continue
    }
    if (force) out.push({ path, target, current, how: 'force', dirs })
    else out.push({ path, why: laterChange(left, current) })
  }
  return out
}

function laterChange(left: KeptState, current: KeptState): string {
  if (current.k === 'absent') return 'deleted since by a later write'
  if (left.k === 'absent') return 'created again since by a later write'
  if (current.k === 'file' && left.k === 'file') return 'a later write changed the same or adjacent lines'
  return 'changed since by a later write'
}

/**
 * Three-way: take back the change `target → left` from `current`, keeping
 * what later writes did elsewhere in the file. Undefined when they touch the
 * same lines or a side is not text.
 */
function mergeBack(store: KeptStore, target: KeptState, left: KeptState, current: KeptState): KeptState | undefined {
  if (target.k !== 'file' || left.k !== 'file' || current.k !== 'file') return undefined
  const texts = [target, left, current].map(s => store.get(s.sha))
  if (texts.some(t => !t || t.subarray(0, 8192).includes(0))) return undefined
  const [was, made, now] = texts.map(t => lines(t!.toString('utf8')))
  const blocks = diff3Merge(now!, made!, was!, { excludeFalseConflicts: true }) as ({ ok: string[] } | { conflict: unknown })[]
  if (blocks.some(b => 'conflict' in b)) return undefined
  const data = Buffer.from(blocks.flatMap(b => (b as { ok: string[] }).ok).join(''), 'utf8')
  return { k: 'file', mode: current.mode, size: data.length, sha: store.put(data) }
}

/** Lines with their endings, so joining them gives the text back byte for byte. */
function lines(text: string): string[] {
  return text.split(/(?<=\n)/)
}

function applyPlans(store: KeptStore, root: string, plans: readonly PathPlan[]): { restored: string[]; deleted: string[] } {
  const restored: string[] = []
  const deleted: string[] = []
  const depth = (p: string) => p.split('/').length
  // Directories to make (parents first), then files and links, then what goes (deepest first).
  const making = plans.filter(p => p.target.k === 'dir').sort((a, b) => depth(a.path) - depth(b.path))
  const writing = plans.filter(p => p.target.k === 'file' || p.target.k === 'symlink')
  const removing = plans.filter(p => p.target.k === 'absent').sort((a, b) => depth(b.path) - depth(a.path))
  for (const p of making) {
    const abs = join(root, p.path)
    if (p.current.k !== 'dir') rmSync(abs, { force: true, recursive: true })
    mkdirSync(abs, { recursive: true, mode: (p.target as { mode: number }).mode })
    restored.push(p.path + '/')
  }
  for (const p of writing) {
    const abs = join(root, p.path)
    mkdirSync(dirname(abs), { recursive: true })
    if (p.current.k === 'dir' || p.current.k === 'symlink') rmSync(abs, { force: true, recursive: true })
    if (p.target.k === 'file') writeFileAtomicSync(abs, store.get(p.target.sha)!, { mode: p.target.mode, fsync: true })
    else if (p.target.k === 'symlink') symlinkSync(p.target.target, abs)
    restored.push(p.path)
  }
  for (const p of removing) {
    const abs = join(root, p.path)
    rmSync(abs, { force: true, recursive: true })
    deleted.push(p.current.k === 'dir' ? p.path + '/' : p.path)
    for (const dir of [...p.dirs].reverse()) {
      if (removeIfEmpty(join(root, dir))) deleted.push(dir + '/')
    }
  }
  return { restored, deleted }
}

function removeIfEmpty(dir: string): boolean {
  try {
    if (!lstatSync(dir).isDirectory() || readdirSync(dir).length) return false
    rmdirSync(dir)
    return true
  } catch (error) {
    // Already gone.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw error
  }
}

/** `call c1 of session s1`, `calls c1, c2 of session s1`, `undo-…`. */
export function describeRecords(records: readonly KeptRecord[]): string {
  const undos = records.filter(r => r.kind === 'undo').map(r => r.id)
  const calls = records.filter(r => r.kind !== 'undo').flatMap(r => r.callIds)
  const parts: string[] = []
  if (calls.length) parts.push(`${calls.length === 1 ? 'call' : 'calls'} ${calls.join(', ')} of session ${records[0]!.sessionId}`)
  if (undos.length) parts.push(`${undos.length === 1 ? 'undo' : 'undos'} ${undos.join(', ')}`)
  return parts.join(' and ')
}

/**
 * What the session's model is told at its next step. API: asserted exactly.
 * @example
 * undoNote(...) // 'a person took back your call c1 (edit_file src/a.ts) with dsh undo: restored src/a.ts. Read these files again before you edit them.'
 */
function undoNote(chosen: readonly KeptRecord[], done: { restored: string[]; deleted: string[] }, describe?: (sessionId: string, callId: string) => string | undefined): string {
  const calls = chosen.flatMap(r => r.kind === 'undo' ? [] : r.callIds.map(c => {
    const what = describe?.(r.sessionId, c)
    return what ? `${c} (${what})` : c
  }))
  const undos = chosen.filter(r => r.kind === 'undo')
  const what = [
    calls.length ? `your ${calls.length === 1 ? 'call' : 'calls'} ${calls.join(', ')}` : '',
    undos.length ? `an earlier undo (${undos.map(u => u.id).join(', ')}), redoing what it took back` : '',
  ].filter(Boolean).join(' and ')
  const did = [
    done.restored.length ? `restored ${done.restored.join(', ')}` : '',
    done.deleted.length ? `deleted ${done.deleted.join(', ')}` : '',
  ].filter(Boolean).join('; ') || 'nothing needed changing'
  return `a person took back ${what} with dsh undo: ${did}. Read these files again before you edit them.`
}
