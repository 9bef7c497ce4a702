import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync, realpathSync, renameSync, rmSync, statSync, unlinkSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { atomicTempTarget, definedOnly, fsyncDirSync, readdirOrEmpty } from 'dsh-common'
import { JOURNAL_SUFFIX, type ParsedJournal } from './journal-format.ts'
import { readJournal, readPayloadFd } from './journal-read.ts'
import { gitRestored, listPaths } from './messages.ts'
import { ownerState, type JournalOwner, type OwnerState } from './owner.ts'
import type { RestoreOutcome } from './types.ts'
import { replayScopes, type ScopeState } from './scopes.ts'
import { removeTreeStore } from './git-tree.ts'
import { removeMarkers } from './shell/watch.ts'
import { holdsCapture, pathState, postable } from './post-image.ts'
import type { JournalHeader } from './journal-format.ts'
import { markerOf, packOf, snapshotDir, treeStoreOf } from './layout.ts'
import { restoreScope, syncParents } from './restore.ts'

/** What recovery did with one scope. */
export interface RecoveredScope extends RestoreOutcome {
  scope: string
  /** `call c1` or `step 2 (calls c1, c2)`. */
  label: string
  callIds: string[]
  step?: number
  verdict: 'none' | 'commit' | 'rollback'
  /**
   * `not restored`: the journal cannot prove this scope's outcome (a cut or damaged record); its files were left as they are.
   * `left as it is`: every path it captured was written after the call, or what the call left was never seen (see `left`).
   */
  action: 'rolled back' | 'finished rollback' | 'dropped' | 'nothing to do' | 'not restored' | 'left as it is'
  reason?: string
  /** Paths not restored because recovery did not see them as the call left them. */
  left?: LeftPath[]
}

/**
 * A path recovery did not restore: `changed`: it no longer holds what the
 * call left (written after it: by the agent, a user, another session);
 * `unseen`: the call's tool ran in another process and its result never
 * reached the guard, so what the call left is unknown.
 */
export interface LeftPath {
  path: string
  why: 'changed' | 'unseen'
}

/** What recovery did with one journal. */
export interface RecoveredJournal {
  file: string
  sessionId?: string
  root?: string
  owner?: JournalOwner
  scopes: RecoveredScope[]
  /** Temp files a killed atomic write left next to captured paths, removed. */
  debris: string[]
  /** The journal ended inside a record (its line, or a capture's bytes). */
  torn: boolean
  /** The journal was unreadable from some point on: kept in place, or, resolved with `restoreUnproven`, as `<file>.damaged`. */
  damage?: string
  /** The last record lacked its closing newline; its bytes were whole and used (what it was). */
  unframed?: string
  /** The last record's line was cut short and the journal was resolved anyway (`restoreUnproven`): what was found, and that. */
  cut?: string
  /** The journal was resolved and deleted. */
  removed: boolean
  /** Why it could not be resolved, when it was not. */
  problem?: string
}

export interface RecoveryReport {
  dir: string
  journals: RecoveredJournal[]
  /** Journals left alone: their writer is still running (or on another host). */
  skipped: { file: string; reason: string }[]
}

export interface RecoverOptions {
  /** fsync restored files and the removals (default true). */
  fsync?: boolean
  /** Resolve a journal even when its writer looks alive (default: only dead writers). */
  force?: boolean
  /** Only journals of this workspace; others are skipped. */
  workspace?: string
  /** Decide per journal; overrides `force`. */
  accept?: (owner: JournalOwner, state: OwnerState) => boolean
  /**
   * Resolve a journal whose outcome cannot be proven (a record cut short
   * that may be a verdict, a damaged record) from the records before the
   * cut, as if the journal ended there. Default: nothing unproven is
   * restored and the journal is kept.
   */
  restoreUnproven?: boolean
}

/**
 * Whether a journal's writer is gone. A journal without a readable header
 * is one being created right now, or a crash at creation: only the latter
 * (older than a minute) counts as dead.
 */
export function writerState(parsed: ParsedJournal): OwnerState {
  if (parsed.header) return ownerState(parsed.header.owner)
  try {
    return Date.now() - statSync(parsed.file).mtimeMs > 60_000 ? 'dead' : 'alive'
  } catch {
    // ENOENT: removed meanwhile; nothing to resolve.
    return 'alive'
  }
}

/** Read a journal, or undefined when it vanished meanwhile (resolved by another process). */
export function readJournalIfThere(file: string): ParsedJournal | undefined {
  try {
    return readJournal(file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}

/** The journals in `<vault>/snapshots`, oldest first. */
export function listJournals(vault: string): string[] {
  const dir = snapshotDir(vault)
  const names = readdirOrEmpty(dir)
  return names.filter(n => n.endsWith(JOURNAL_SUFFIX)).sort().map(n => join(dir, n))
}

function labelOf(scope: ScopeState): string {
  if (scope.key.startsWith('step:')) {
    const calls = scope.callIds.length ? ` (${scope.callIds.length === 1 ? 'call' : 'calls'} ${listPaths(scope.callIds)})` : ''
    return `step ${scope.step}${calls}`
  }
  return scope.callIds.length ? `call ${scope.callIds.join(', ')}` : `scope ${scope.id}`
}

/**
 * Resolve every journal in `<vault>/snapshots` whose writer is gone: a
 * scope without a verdict is rolled back, a rollback cut short is finished,
 * a committed scope is dropped; then the journal is deleted. A journal with
 * a path that could not be restored is kept (run again after fixing it).
 */
export async function recoverVault(vault: string, options: RecoverOptions = {}): Promise<RecoveryReport> {
  const report: RecoveryReport = { dir: snapshotDir(resolve(vault)), journals: [], skipped: [] }
  const workspace = options.workspace && existsSync(options.workspace) ? realpathSync(options.workspace) : options.workspace
  // Newest journal first: where two dead writers captured one path, the older capture is restored last and wins.
  for (const file of listJournals(vault).reverse()) {
    const parsed = readJournalIfThere(file)
    if (!parsed) continue
    const owner = parsed.header?.owner
    const state = writerState(parsed)
    const accept = owner && options.accept ? options.accept(owner, state) : options.force || state === 'dead'
    if (!accept) {
      const reason = state === 'other-host' ? `written on host ${owner!.host}` : owner ? `its writer (pid ${owner.pid}) is still running` : 'it is being created'
      report.skipped.push({ file, reason })
      continue
    }
    // A workspace that no longer exists (moved?) is not another one: the journal is reported, with what to do.
    if (workspace && parsed.header && parsed.header.root !== workspace && existsSync(parsed.header.root)) {
      report.skipped.push({ file, reason: `it belongs to workspace ${parsed.header.root}` })
      continue
    }
    report.journals.push(await resolveJournal(parsed, options.fsync ?? true, options.restoreUnproven))
  }
  return report
}

/** Why a journal cannot prove how its open writes ended; `all`: not even a verdict on disk settles a scope (records after it are unreadable). */
interface Doubt {
  what: string
  all: boolean
}

/**
 * A damaged record hides whatever came after it. A last line cut inside
 * its JSON lost what it recorded — a verdict, a capture whose write then
 * ran, a rollback's end — whatever its first bytes say: a crash while
 * appending and a journal truncated later look the same.
 */
function doubtOf(parsed: ParsedJournal): Doubt | undefined {
  if (parsed.damage) return { what: `damaged journal: ${parsed.damage}; what follows it (verdicts, rollbacks, later writes) cannot be read`, all: true }
  const cut = parsed.tornLine
  if (!cut) return undefined
  return { what: `the last record (${cut.type ? `${/^[aeiou]/.test(cut.type) ? 'an' : 'a'} ${cut.type} record` : 'cut before its type'}, ${cut.bytes} byte${cut.bytes === 1 ? '' : 's'} at byte ${cut.offset}) was cut short before its end: what it recorded is lost (a verdict, a capture, a rollback's end)`, all: false }
}

/** Resolve one parsed journal (see {@link recoverVault}; `restoreUnproven` as there). */
export async function resolveJournal(parsed: ParsedJournal, fsync: boolean, restoreUnproven = false): Promise<RecoveredJournal> {
  const { file, header } = parsed
  const out: RecoveredJournal = {
    file, scopes: [], debris: [], torn: parsed.torn, removed: false,
    ...(header ? { sessionId: header.sessionId, root: header.root, owner: header.owner } : {}),
    ...(parsed.damage ? { damage: parsed.damage } : {}),
    ...(parsed.unframed ? { unframed: parsed.unframed } : {}),
  }
  if (header && !existsSync(header.root)) {
    out.problem = `workspace ${header.root} no longer exists (moved or deleted?); journal kept: move the workspace back to ${header.root} and run dsh recover --workspace ${header.root} again, or delete ${file} if none of its writes matter any more`
    return out
  }
  const unproven = header && parsed.tornCapture ? changedSinceTornCapture(header.root, file, parsed.tornCapture) : undefined
  if (unproven) {
    out.problem = unproven
    return out
  }
  const doubt = doubtOf(parsed)
  const held = doubt && !restoreUnproven ? doubt : undefined
  const scopes = header ? replayScopes(parsed.records) : []
  // Debris first: a half-written temp file would keep a directory the write created from being removed.
  if (header) out.debris = removeDebris(header.root, scopes, header.owner.pid)
  const fd = openSync(file, 'r')
  try {
    const source = { readPayload: (offset: number, size: number, sum: number) => readPayloadFd(fd, file, offset, size, sum) }
    for (const scope of [...scopes].reverse()) {
      const verdict = scope.verdict ?? 'none'
      const base = {
        scope: scope.id, label: labelOf(scope), callIds: scope.callIds, verdict,
        ...definedOnly({ step: scope.step }), ...(scope.reason ? { reason: scope.reason } : {}),
      } as const
      if (verdict === 'commit' || (verdict === 'rollback' && scope.done)) {
        out.scopes.push({ ...base, action: verdict === 'commit' ? 'dropped' : 'nothing to do', restored: [], deleted: [], failed: [] })
        continue
      }
      if (held && (held.all || verdict === 'none')) {
        // The cut record may be this scope's verdict (or, damaged, anything after it): its files are left as they are.
        out.scopes.push({ ...base, action: 'not restored', restored: [], deleted: [], failed: [] })
        continue
      }
      const { seen, left } = sortOut(header!, scope)
      const outcome = await restoreScope(header!.root, seen, source, { fsync, vault: dirname(dirname(file)) })
      if (fsync) syncParents(header!.root, outcome.deleted)
      const restoredAny = outcome.restored.length + outcome.deleted.length + outcome.failed.length > 0
      const action = left.length && !restoredAny ? 'left as it is' : verdict === 'none' ? 'rolled back' : 'finished rollback'
      out.scopes.push({ ...base, action, ...outcome, ...(left.length ? { left } : {}) })
    }
  } finally {
    closeSync(fd)
  }
  const failed = out.scopes.some(s => s.failed.length)
  const unresolved = out.scopes.filter(s => s.action === 'not restored')
  if (doubt && !held && parsed.tornLine) out.cut = `${doubt.what}; resolved from the records before it, as asked (--restore-unproven)`
  if (held) {
    out.problem = keptUnproven(held, header?.root, file, scopes.filter(s => unresolved.some(u => u.scope === s.id)))
  } else if (out.damage) {
    renameSync(file, `${file}.damaged`)
  } else if (failed) {
    out.problem = 'some paths could not be restored; journal kept (fix them and run dsh recover again)'
  } else {
    removeTreeStore(treeStoreOf(file))
    rmSync(packOf(file), { force: true })
    removeMarkers(markerOf(file))
    unlinkSync(file)
    if (fsync) fsyncDirSync(dirname(file))
    out.removed = true
  }
  return out
}

/**
 * Recovery never undoes what it did not see: with a post record, a path is
 * restored only while it holds what the call left (or already its
 * pre-image); a call whose tool runs elsewhere and whose post record never
 * came has its changed paths left as they are.
 */
function sortOut(header: JournalHeader, scope: ScopeState): { seen: ScopeState; left: LeftPath[] } {
  const post = scope.post
  if (!post && !(header.elsewhere && scope.verdict === undefined)) return { seen: scope, left: [] }
  const items: ScopeState['items'] = []
  const left: LeftPath[] = []
  for (const item of scope.items) {
    const { entry } = item
    if (!postable(entry)) {
      // A workspace picture or a tree: its single paths' post states are what counts (a measured manifest restores nothing).
      if (post || scope.measured) items.push(item)
      else left.push({ path: entry.path, why: 'unseen' })
      continue
    }
    if (holdsCapture(header.root, entry)) {
      items.push(item)
      continue
    }
    if (post && post.has(entry.path) && pathState(header.root, entry.path) === post.get(entry.path)) items.push(item)
    else left.push({ path: entry.path, why: post ? 'changed' : 'unseen' })
  }
  return { seen: { ...scope, items }, left }
}

/** What recovery found that it cannot prove, what it left alone, and what the user can do. */
function keptUnproven(doubt: Doubt, root: string | undefined, file: string, scopes: readonly ScopeState[]): string {
  if (!scopes.length) {
    const settled = doubt.all ? 'nothing was restored' : 'every write the readable records show was settled'
    return `${doubt.what}; ${settled}. The journal is kept: check the workspace for a write it no longer shows (e.g. git status), then delete ${file}`
  }
  const one = scopes.length === 1
  const labels = scopes.map(labelOf).join(', ')
  const paths = [...new Set(scopes.flatMap(s => s.items.map(i => i.entry.path)))]
  const restore = `run dsh recover --workspace ${root ?? '<workspace>'} --restore-unproven to put back what the readable records captured`
  const check = paths.length ? `${listPaths(paths)} (e.g. git diff)` : 'the workspace (e.g. git status)'
  return `${doubt.what}; how ${labels} ended cannot be proven, so nothing of ${one ? 'it' : 'them'} was restored. The journal is kept: check ${check}, then ${restore}, or delete ${file} to keep the files as they are`
}

/**
 * A capture cut short at the end of the journal (its line whole, its bytes
 * not): by the write protocol its write had not started, so the file must
 * still begin with the bytes captured. When it does not, that cannot be
 * proven: what to tell the user, and the journal is kept as the evidence.
 */
function changedSinceTornCapture(root: string, file: string, torn: NonNullable<ParsedJournal['tornCapture']>): string | undefined {
  let current: Buffer | undefined
  try {
    current = readFileSync(join(root, torn.path))
  } catch {
    // Gone or unreadable: it differs from what was being captured.
  }
  const fd = openSync(file, 'r')
  const captured = Buffer.alloc(torn.have)
  try {
    readSync(fd, captured, 0, torn.have, torn.offset)
  } finally {
    closeSync(fd)
  }
  if (current && current.length === torn.size && current.subarray(0, torn.have).equals(captured)) return undefined
  return `the last record, a capture of ${torn.path}, ends early (${torn.have} of ${torn.size} bytes) and ${torn.path} no longer matches it: its write may have run, and this journal cannot prove what ${torn.path} held before. Nothing was restored or removed; the journal is kept as evidence: check ${torn.path} (e.g. git diff), then delete ${file}`
}

/**
 * Temp files of an atomic write the dead process was doing next to a
 * captured path (`.<name>.<pid>.<8 hex>.tmp`, as dsh-common's
 * writeFileAtomic names them; `.link` for a symlink restore).
 */
function removeDebris(root: string, scopes: readonly ScopeState[], pid: number): string[] {
  // Each directory is listed once, whatever the number of captured paths in it.
  const byDir = new Map<string, { rel: string; bases: Set<string> }>()
  for (const scope of scopes) {
    for (const { entry } of scope.items) {
      const dir = dirname(join(root, entry.path))
      let slot = byDir.get(dir)
      if (!slot) byDir.set(dir, slot = { rel: dirname(entry.path), bases: new Set() })
      slot.bases.add(basename(entry.path))
    }
  }
  const removed: string[] = []
  for (const [dir, { rel, bases }] of byDir) {
    let names: string[]
    try {
      names = readdirSync(dir)
    } catch {
      // ENOENT/ENOTDIR: the directory is gone, so is any debris in it.
      continue
    }
    for (const name of names) {
      const base = atomicTempTarget(name, pid)
      if (base === undefined || !bases.has(base)) continue
      try {
        unlinkSync(join(dir, name))
        removed.push(join(rel, name).split('\\').join('/').replace(/^\.\//, ''))
      } catch {
        // ENOENT: removed meanwhile.
      }
    }
  }
  return removed
}

/** The report as printed by `dsh recover` and logged at plugin start. */
export function formatRecovery(report: RecoveryReport): string {
  const lines: string[] = []
  if (!report.journals.length && !report.skipped.length) return `nothing to recover in ${report.dir}\n`
  for (const j of report.journals) {
    const who = j.owner ? `, pid ${j.owner.pid}` : ''
    lines.push(`${basename(j.file)} (session ${j.sessionId ?? '?'}${who}):`)
    if (j.torn && !j.problem) lines.push(`  ${j.cut ?? 'the last record was cut short by the crash (its write had not started); ignored'}`)
    if (j.unframed) lines.push(`  the last record (${j.unframed}) lacks its closing newline; its bytes are whole and were used`)
    if (j.damage && !j.problem) lines.push(`  damaged journal: ${j.damage}; records after it were ignored; kept as ${basename(j.file)}.damaged`)
    if (!j.scopes.length && !j.problem) lines.push('  no open snapshot')
    for (const s of j.scopes) {
      const why = s.verdict === 'none' ? (s.action === 'not restored' ? 'no verdict that can be read' : 'no verdict') : s.verdict === 'commit' ? 'committed' : `rollback${s.reason ? `: ${s.reason}` : ''}`
      const parts: string[] = []
      if (s.restored.length) parts.push(`restored ${listPaths(s.restored)}`)
      if (s.deleted.length) parts.push(`deleted ${listPaths(s.deleted)}`)
      if (s.git?.length) parts.push(gitRestored(s.git))
      if (s.failed.length) parts.push(`could not restore ${listPaths(s.failed.map(f => `${f.path} (${f.error})`))}`)
      if (!parts.length && (s.action === 'rolled back' || s.action === 'finished rollback')) parts.push(j.damage ? 'nothing to restore in the records before the damage' : j.cut ? 'nothing to restore in the records before the cut' : 'nothing had changed')
      lines.push(`  ${s.action} ${s.label} (${why})${parts.length ? `: ${parts.join('; ')}` : ''}`)
      for (const l of s.left ?? []) lines.push(`    left ${l.path} as it is: ${l.why === 'changed' ? 'written after the interrupted call (kept; recovery never undoes what it did not see)' : 'the call ran in the agent and its result never reached the guard (kept; whether it holds that call\'s write or a later one cannot be told)'}`)
    }
    if (j.debris.length) lines.push(`  removed leftover temp files: ${listPaths(j.debris)}`)
    lines.push(j.removed ? '  journal removed' : `  ${j.problem ?? 'journal kept'}`)
  }
  for (const s of report.skipped) lines.push(`skipped ${basename(s.file)}: ${s.reason}`)
  return lines.join('\n') + '\n'
}
