import { realpathSync } from 'node:fs'
import { definedOnly, scanFileStates, type FileStates } from 'dsh-common'
import type { Session } from 'dsh-session'
import type { ToolExecution, ToolResult } from 'dsh-tools'
import type { Config } from './config.ts'
import { SnapshotError } from './errors.ts'
import { committedBlobs, gitBlobId, readGitState, type RefsEntry } from './git-refs.ts'
import { shellChange, scannedChange, writeChange, type Measured, type PreImages } from './measure.ts'
import { captureRefused, discardedNote, escapeRefused, otherSessionNote, outsideNote } from './messages.ts'
import { NOTHING_OUTSIDE, type Outside, type WrittenBy } from './outside.ts'
import type { RecoveryReport } from './recover.ts'
import type { Difference } from './shell/tracker.ts'
import type { Snapshots } from './snapshots.ts'
import type { CallChange, OutsideChanges, RestoredInfo, ScopeRef } from './types.ts'
import type { Vaults } from './vaults.ts'
import { lockWorkspace, unlockIfIdle } from './workspace-lock.ts'

/** What the guard needs from its host (the Cordis adapter): events out, a logger. */
export interface GuardHost {
  /** Announce what a call changed; true when a listener promised its verdict (a commit or rollback naming it). */
  announce(change: CallChange): boolean
  /** Whether anyone listens to announcements (else a shell call no tracker measures is not scanned). */
  announcing(): boolean
  /** The schema error the tool service would give these arguments, if any. */
  validate(exec: ToolExecution): string | undefined
  restored(info: RestoredInfo): void
  /** Files changed outside any tool call were found (and adopted as the workspace's picture). */
  outside(info: OutsideChanges): void
  recovered(report: RecoveryReport): void
  info(text: string): void
  warn(text: string): void
}

/** What the call path reads and keeps of the guard (one per plugin instance). */
export interface CallGuard {
  readonly settings: Config
  readonly host: GuardHost
  readonly vaults: Vaults
  readonly written: WrittenBy
  /** Calls whose tool is running, by call id. */
  readonly running: Map<string, OpenCall>
  /** What a rollback put back in git, for the rolled-back call's result, by call id. */
  readonly gitNotes: Map<string, string>
  /** Workspace roots warned about once (not a git work tree; cannot be tracked). */
  readonly warned: Set<string>
  readonly disposed: boolean
  /** The session's journal, its vault recovered first. */
  snapshotsFor(session: Session): Promise<Snapshots>
}

/** A guarded call from its capture to its close. */
export interface OpenCall {
  exec: ToolExecution
  effects: 'write' | 'shell'
  ref: ScopeRef
  /** A writer's paths, as given. */
  paths: string[]
  /** The session's journal; absent for a shell call run without a snapshot (measured by a scan, if at all). */
  snaps?: Snapshots
  /** A writer's pre-images, as its capture read them. */
  images?: PreImages
  /** File times and sizes before a shell call no tracker measures. */
  scan?: { root: string; states: FileStates }
  gitBefore?: RefsEntry
  /** The note for the model when the call waited for another session. */
  waited?: string
  outside: Outside
  announced: boolean
  /** A listener promised the verdict: the scope stays open for it. */
  promised: boolean
  /** The note for a kept command that put uncommitted files back to their committed content. */
  discarded?: string
}

type Plan = { effects: 'write'; paths: string[] } | { effects: 'shell' }

/**
 * The `tools/execute` listener (outermost): capture what the call may
 * change, run it (its tool's return announces the change, see
 * {@link callReturned}), then keep it at once when nobody promised a verdict.
 */
export async function guardCall(g: CallGuard, exec: ToolExecution, next: () => Promise<ToolResult>): Promise<ToolResult> {
  const plan = planCall(g, exec)
  if (!plan) return next()
  if ('content' in plan) return plan
  const call = await openCall(g, exec, plan)
  if ('content' in call) return call
  g.running.set(exec.callId, call)
  let result: ToolResult
  try {
    result = await next()
  } finally {
    g.running.delete(exec.callId)
    await closeCall(g, call)
  }
  return withNotes(g, call, result)
}

/** The `tools/returned` listener: measure what the call changed and announce it, once. */
export async function callReturned(g: CallGuard, exec: ToolExecution): Promise<void> {
  const call = g.running.get(exec.callId)
  if (!call || call.announced) return
  call.announced = true
  const { snaps } = call
  // Rolled back before its tool returned (the hooks host's config guard): nothing left to judge.
  if (snaps && !snaps.isOpen(call.ref.key)) return
  const measured = await measure(g, call)
  // What a tool run in another process left is journalled before it is judged: recovery restores a path only while it still holds that.
  if (snaps && g.settings.elsewhere) notePost(g, snaps, exec.callId)
  if (!measured) return
  call.promised = g.host.announce({ sessionId: exec.session.id, callId: exec.callId, tool: exec.name, effects: call.effects, ...measured })
}

/** Whether and how to guard the call; a refusal when a writer's paths cannot be told. */
function planCall(g: CallGuard, exec: ToolExecution): Plan | ToolResult | undefined {
  const tool = exec.tool
  if (!tool || g.disposed) return undefined
  if (tool.effects === 'shell') return { effects: 'shell' }
  if (tool.effects !== 'write') return undefined
  let paths: string[]
  try {
    paths = tool.paths!(exec.arguments)
    if (!Array.isArray(paths) || paths.some(p => typeof p !== 'string')) throw new TypeError('paths() did not return a list of strings')
  } catch (error) {
    // Arguments that fail the tool's schema get the schema's message, as without this guard.
    const invalid = g.host.validate(exec)
    return { content: invalid ? `${invalid}; nothing was run` : `invalid arguments for ${exec.name}: cannot tell which paths it writes (${(error as Error).message}); nothing was run`, isError: true }
  }
  return paths.length ? { effects: 'write', paths } : undefined
}

/** Open the session's journal, take the workspace, note what changed outside, capture. */
async function openCall(g: CallGuard, exec: ToolExecution, plan: Plan): Promise<OpenCall | ToolResult> {
  const what = plan.effects === 'write' ? 'write' : 'command'
  const call: OpenCall = {
    exec, effects: plan.effects, ref: scopeRef(g.settings, exec), paths: plan.effects === 'write' ? plan.paths : [],
    outside: NOTHING_OUTSIDE, announced: false, promised: false,
  }
  if (plan.effects === 'shell' && g.settings.shell === 'off') return scanned(g, call, exec.session.cwd)
  let snaps: Snapshots
  try {
    snaps = await g.snapshotsFor(exec.session)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (typeof code !== 'string') throw error
    return { content: captureRefused(`cannot open the workspace ${exec.session.cwd} (${code})`, what), isError: true }
  }
  try {
    call.waited = await lockWorkspace(snaps, g.settings.lockWaitMs, () => g.vaults.recover(snaps.vault), text => g.host.info(text))
  } catch (error) {
    return { content: captureRefused((error as Error).message, what), isError: true }
  }
  try {
    if (plan.effects === 'shell' && g.settings.shell === 'track' && !snaps.tracking && !startTracking(g, snaps)) return scanned(g, call, snaps)
    call.outside = await outsideBefore(g, exec, snaps)
    if (plan.effects === 'write') {
      call.images = new Map()
      snaps.capture(call.ref, plan.paths, call.images)
    } else if (g.settings.shell === 'track') {
      snaps.captureWorkspace(call.ref)
    } else if (await snaps.captureTree(call.ref)) {
      call.scan = { root: snaps.root, states: scanFileStates(snaps.root) }
    } else {
      if (!g.warned.has(snaps.root)) g.host.warn(`shell: 'git' is on but ${snaps.root} is not the top of a git work tree; shell calls there run without a snapshot`)
      g.warned.add(snaps.root)
      return scanned(g, call, snaps)
    }
    if (plan.effects === 'shell' && g.settings.gitRefs) call.gitBefore = snaps.captureRefs(call.ref)
  } catch (error) {
    if (!(error instanceof SnapshotError)) throw error
    return { content: error.reason === 'escape' ? escapeRefused(error.message) : captureRefused(error.message, what), isError: true }
  }
  call.snaps = snaps
  return call
}

/** A shell call run without a snapshot (the workspace released): measured by file times and sizes when anyone listens. */
function scanned(g: CallGuard, call: OpenCall, where: string | Snapshots): OpenCall {
  if (typeof where !== 'string') unlockIfIdle(where)
  if (!g.host.announcing()) return call
  const root = typeof where === 'string' ? realpathSync(where) : where.root
  call.scan = { root, states: scanFileStates(root) }
  return call
}

/** What the call changed: a writer's named paths, a tracked command's measured changes, or a scan's. */
async function measure(g: CallGuard, call: OpenCall): Promise<Measured | undefined> {
  const { snaps, scan } = call
  if (call.effects === 'write') return snaps && call.images ? writeChange(snaps.root, call.images) : undefined
  if (scan) return scannedChange(scan.root, scan.states)
  const measured = snaps ? await measureShell(g, snaps, call.exec.callId) : undefined
  return measured && shellChange(measured)
}

/**
 * After the tool returned: a scope nobody promised a verdict for is kept
 * now (a command's changes measured first, for `dsh undo` and `dsh
 * review`); what the call (and its judgement) changed becomes the
 * workspace's picture; the workspace is released once nothing is open.
 */
async function closeCall(g: CallGuard, call: OpenCall): Promise<void> {
  const { snaps, exec } = call
  if (!snaps) return
  const shell = call.effects === 'shell'
  const open = snaps.isOpen(call.ref.key)
  // Measured before it is kept, or before the picture moves on while its verdict is still to come.
  if (shell && open) await measureShell(g, snaps, exec.callId)
  if (open && !call.promised) {
    try {
      snaps.commit({ callId: exec.callId })
    } catch (error) {
      if (!(error instanceof SnapshotError)) throw error
      g.host.warn(`could not commit the snapshot of call ${exec.callId}: ${error.message}`)
    }
  }
  const own = snaps.tracking ? await adoptOwn(g, snaps) : []
  if (!shell) g.written.note(snaps.root, exec.session.id, call.paths)
  unlockIfIdle(snaps)
  if (call.gitBefore && !g.gitNotes.has(exec.callId)) call.discarded = await discarded(snaps, call.gitBefore, own)
}

/** The call's result with the notes the model reads after it: what git put back, what it discarded, waits, changes outside. */
function withNotes(g: CallGuard, call: OpenCall, result: ToolResult): ToolResult {
  const git = g.gitNotes.get(call.exec.callId)
  g.gitNotes.delete(call.exec.callId)
  const notes = [
    ...(git ? [git] : []),
    ...(call.discarded ? [call.discarded] : []),
    ...(call.waited ? [call.waited] : []),
    ...(call.outside.outside.length ? [outsideNote(call.outside.outside)] : []),
    ...(call.outside.others.size ? [otherSessionNote(call.outside.others)] : []),
  ]
  return notes.length ? { ...result, content: `${result.content}\n${notes.join('\n')}` } : result
}

function scopeRef(settings: Config, exec: ToolExecution): ScopeRef {
  const info = { callId: exec.callId, ...definedOnly({ step: exec.step, turn: exec.turn }) }
  if (settings.scope === 'step' && exec.step !== undefined) return { key: `step:${exec.turn ?? ''}:${exec.step}`, ...info }
  return { key: `call:${exec.callId}`, ...info }
}

/** First shell call of a session: build the tracker's picture; false (one warning) when it cannot. */
function startTracking(g: CallGuard, snaps: Snapshots): boolean {
  if (g.warned.has(snaps.root)) return false
  try {
    const stats = snaps.startTracking({ maxFileBytes: g.settings.shellMaxFileBytes })
    if (stats) g.host.info(`shell tracking of ${snaps.root}: ${stats.files} files (${stats.bytes} bytes) packed, ${stats.dirs + 1} directories ${stats.watched ? 'watched' : 'NOT watched (each shell call compares the whole workspace)'}, in ${Math.round(stats.ms)} ms`)
    return true
  } catch (error) {
    if (!(error instanceof SnapshotError)) throw error
    g.warned.add(snaps.root)
    g.host.warn(`shell calls in ${snaps.root} run without a snapshot: ${error.message}`)
    return false
  }
}

/**
 * Changes found before a call that this session's calls did not make:
 * adopted and announced; returned for the model's note, those another
 * session's guarded call left (and nobody changed since) apart.
 */
async function outsideBefore(g: CallGuard, exec: ToolExecution, snaps: Snapshots): Promise<Outside> {
  if (!snaps.tracking) return NOTHING_OUTSIDE
  const diffs = await snaps.refresh()
  const files = diffs.filter(d => d.now?.k !== 'dir' && !(d.now === undefined && d.before?.k === 'dir')).map(d => d.path)
  if (!files.length) return NOTHING_OUTSIDE
  g.host.outside({ sessionId: exec.session.id, callId: exec.callId, paths: files })
  return g.written.split(snaps.root, exec.session.id, files)
}

/** A tracked shell call's changes, measured once (its paths noted as this session's); undefined when it holds no workspace pre-image. */
async function measureShell(g: CallGuard, snaps: Snapshots, callId: string) {
  try {
    const c = await snaps.measureShell(callId)
    if (c) g.written.note(snaps.root, snaps.sessionId, [...c.created, ...c.modified, ...c.deleted])
    return c
  } catch (error) {
    if (!(error instanceof SnapshotError)) throw error
    g.host.warn(`measuring shell call ${callId}: ${error.message}`)
    return undefined
  }
}

function notePost(g: CallGuard, snaps: Snapshots, callId: string): void {
  try {
    snaps.notePost(callId)
  } catch (error) {
    if (!(error instanceof SnapshotError)) throw error
    g.host.warn(`could not record what call ${callId} left: ${error.message}`)
  }
}

/** What the tracker finds changed since it last looked, adopted as the workspace's picture (a failure is a warning). */
export async function adoptOwn(g: Pick<CallGuard, 'host'>, snaps: Snapshots): Promise<Difference[]> {
  try {
    return await snaps.refresh()
  } catch (error) {
    if (!(error instanceof SnapshotError)) throw error
    g.host.warn(`shell tracking of ${snaps.root}: ${error.message}`)
    return []
  }
}

/**
 * A kept shell call that put files with uncommitted changes back to their
 * committed content (`git checkout -- .`, `git stash`, `git reset --hard`):
 * not a regression, but the model is told what it discarded.
 */
async function discarded(snaps: Snapshots, before: RefsEntry, own: readonly Difference[]): Promise<string | undefined> {
  const modified = own.filter(d => d.before?.k === 'file' && d.now?.k === 'file' && d.data).slice(0, 200)
  if (!modified.length) return undefined
  const committed = await committedBlobs(snaps.root, modified.map(d => d.path))
  if (!committed) return undefined
  const back = modified.filter(d => committed.get(d.path) === gitBlobId(d.data!)).map(d => d.path)
  if (!back.length) return undefined
  return discardedNote(back, readGitState(before).refs['refs/stash'] !== before.refs['refs/stash'])
}
