import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { describeProblem, verifyChainFile } from 'dsh-proofchain'
import { readSessionLog, sessionLogPath, type RawSessionEvent } from 'dsh-session'
import { KeptStore, type KeptRecord } from 'dsh-snapshot'
import { undoable, undoneBy } from './undo.ts'

/**
 * How a call ended, for a person. `group rollback`: kept at first, then
 * rolled back with the unfinished change at the turn's end. `pending`: it
 * returned to the agent kept for now while its tests run in the background
 * (`verify/deferred`), and its verdict is not in yet.
 */
export type CallVerdict = 'kept' | 'warned' | 'rolled back' | 'provisional' | 'not verified' | 'group rollback' | 'refused' | 'ran' | 'running' | 'pending'

export const VERDICTS: readonly CallVerdict[] = ['kept', 'warned', 'rolled back', 'provisional', 'not verified', 'group rollback', 'refused', 'ran', 'running', 'pending']

/** One check's judgement of a call (`verify/verdict`). */
export interface CheckView {
  check: string
  outcome: string
  durationMs: number
  newProblems: string[]
}

/** One tool call as the page shows it. */
export interface CallView {
  kind: 'call'
  callId: string
  tool: string
  arguments: Record<string, unknown>
  paths: string[]
  time: number
  turn?: number
  step?: number
  verdict: CallVerdict
  checks: CheckView[]
  /** The exact text the model was given as the call's result. */
  result?: { content: string; isError: boolean }
  /** What the call changed, before and after (kept or rolled back); undefined when nothing was kept. */
  record?: KeptRecord
  /** Whether it can be taken back now, or why not. */
  undo: { ok: true } | { ok: false; why: string }
  /** The undo that took it back. */
  undoneBy?: string
}

/** Other things in a session's timeline. */
export type TimelineItem =
  | CallView
  | { kind: 'user'; time: number; text: string }
  | { kind: 'context'; time: number; source: string; text: string }
  | { kind: 'turn-end'; time: number; turn: number; reason: string }
  | { kind: 'group-rollback'; time: number; callIds: string[]; text: string }
  | { kind: 'undo'; time: number; record: KeptRecord; undoneBy?: string; undo: { ok: true } | { ok: false; why: string } }

/** One session in the list. */
export interface SessionSummary {
  id: string
  started: number
  updated: number
  calls: number
  counts: Partial<Record<CallVerdict, number>>
  torn: boolean
}

/** A session's last checkpoint, as dsh-claims stored it. */
export interface CheckpointView {
  time: number
  summary: string
  verified: string[]
  failed: string[]
  next: string[]
  /** The marks dsh-claims gave (claims it did not see run, failing commands…), as text. */
  marks: string[]
}

export interface SessionView {
  summary: SessionSummary
  items: TimelineItem[]
  checkpoint?: CheckpointView
  proof: ProofState
}

export type ProofState = { state: 'verified'; entries: number; sealed: boolean } | { state: 'broken'; problem: string } | { state: 'none' }

/** The workspace's sessions, newest first. */
export function listSessions(vault: string): SessionSummary[] {
  const dir = join(vault, 'sessions')
  if (!existsSync(dir)) return []
  const kept = new KeptStore(vault).read()
  const out: SessionSummary[] = []
  for (const name of readdirSync(dir)) {
    if (!name.endsWith('.jsonl')) continue
    const id = name.slice(0, -'.jsonl'.length)
    const view = readSession(vault, id, kept, false)
    if (view) out.push(view.summary)
  }
  return out.sort((a, b) => b.updated - a.updated)
}

/** A call whose verdict still runs in the background (returned to the agent kept for now, its tests running). */
export interface PendingCall {
  sessionId: string
  callId: string
  tool: string
  paths: string[]
}

/** The calls of a vault's sessions (or of one) whose verdict is pending, as their logs show them. */
export function pendingCalls(vault: string, sessionId?: string): PendingCall[] {
  const ids = sessionId === undefined ? listSessions(vault).map(s => s.id) : [sessionId]
  const kept = new KeptStore(vault).read()
  return ids.flatMap(id => (readSession(vault, id, kept, false)?.items ?? [])
    .flatMap(i => (i.kind === 'call' && i.verdict === 'pending' ? [{ sessionId: id, callId: i.callId, tool: i.tool, paths: i.paths }] : [])))
}

/** The newest session with a log, if any. */
export function latestSession(vault: string): string | undefined {
  return listSessions(vault)[0]?.id
}

/** One session's timeline; undefined when it has no log. */
export function readSession(vault: string, id: string, records = new KeptStore(vault).read(), withProof = true): SessionView | undefined {
  const file = sessionLogPath(vault, id)
  if (!/^[^/\\]+$/.test(id) || id === '.' || id === '..' || !existsSync(file)) return undefined
  const log = readSessionLog(file)
  const events = log.records
  const mine = records.filter(r => r.sessionId === id)
  const undone = undoneBy(records)
  const items = buildItems(events, mine, records, undone)
  const calls = items.filter((i): i is CallView => i.kind === 'call')
  const counts: Partial<Record<CallVerdict, number>> = {}
  for (const c of calls) counts[c.verdict] = (counts[c.verdict] ?? 0) + 1
  const times = events.map(e => e.time)
  const summary: SessionSummary = {
    id, calls: calls.length, counts, torn: !!log.torn,
    started: times[0] ?? statSync(file).mtimeMs, updated: Math.max(times.at(-1) ?? 0, ...mine.map(r => r.time)),
  }
  return { summary, items, ...checkpointOf(vault, id), proof: withProof ? proofState(vault) : { state: 'none' } }
}

function buildItems(events: readonly RawSessionEvent[], mine: readonly KeptRecord[], all: readonly KeptRecord[], undone: Map<string, KeptRecord>): TimelineItem[] {
  const items: TimelineItem[] = []
  const calls = new Map<string, CallView>()
  const recordOf = (callId: string) => [...mine].reverse().find(r => r.kind !== 'undo' && r.callIds.includes(callId))
  let turn: number | undefined
  let step: number | undefined
  const ended = new Set<number>()
  const deferred = new Map<string, Deferred>()
  for (const e of events) {
    const d = (e.data ?? {}) as Record<string, unknown>
    // A background verdict's lines are logged together: any other event ends the batch.
    if (e.type !== 'verify/verdict') for (const v of deferred.values()) if (v.batch === 'open') v.batch = 'closed'
    switch (e.type) {
      case 'turn/start': turn = d.turn as number; break
      case 'step/start': step = d.step as number; break
      case 'user/message': items.push({ kind: 'user', time: e.time, text: String(d.text ?? '') }); break
      case 'context/message': items.push({ kind: 'context', time: e.time, source: String(d.source ?? ''), text: String(d.text ?? '') }); break
      case 'turn/end': ended.add(d.turn as number); items.push({ kind: 'turn-end', time: e.time, turn: d.turn as number, reason: String(d.reason ?? '') }); break
      case 'tool/call': {
        const args = (d.arguments ?? {}) as Record<string, unknown>
        const call: CallView = {
          kind: 'call', callId: String(d.callId), tool: String(d.name), arguments: args, paths: pathsOf(args), time: e.time,
          verdict: 'running', checks: [], undo: { ok: false, why: 'nothing of it was kept' },
          ...(turn !== undefined ? { turn } : {}), ...(step !== undefined ? { step } : {}),
        }
        calls.set(call.callId, call)
        items.push(call)
        break
      }
      case 'verify/deferred': {
        if (calls.has(String(d.callId))) deferred.set(String(d.callId), { batch: 'waiting', own: [], checks: new Set() })
        break
      }
      case 'verify/verdict': {
        const call = calls.get(String(d.callId))
        if (!call) break
        const later = deferred.get(call.callId)
        if (later?.batch === 'waiting') later.batch = 'open'
        if (later?.batch === 'open' && later.checks.has(String(d.check))) later.batch = 'closed'
        if (later?.batch === 'open') {
          later.own.push(String(d.outcome))
          later.checks.add(String(d.check))
        }
        call.checks.push({ check: String(d.check), outcome: String(d.outcome), durationMs: Number(d.durationMs ?? 0), newProblems: (d.newProblems as string[] | undefined) ?? [] })
        // Workspace-relative, as the guard judged them (an agent may give absolute paths).
        if (Array.isArray(d.paths) && d.paths.length) call.paths = d.paths as string[]
        break
      }
      case 'tool/result': {
        const call = calls.get(String(d.callId))
        if (call) call.result = { content: String(d.content ?? ''), isError: !!d.isError }
        break
      }
      default:
        // A rollback of a group of calls at a turn's end (the multi-step verdicts), under whatever name it is logged.
        if (/group/.test(e.type) && Array.isArray(d.callIds)) {
          const ids = (d.callIds as unknown[]).map(String)
          items.push({ kind: 'group-rollback', time: e.time, callIds: ids, text: String(d.message ?? d.text ?? d.reason ?? '') })
          for (const id of ids) {
            const call = calls.get(id)
            if (call) call.verdict = 'group rollback'
          }
        }
    }
  }
  for (const call of calls.values()) {
    const record = recordOf(call.callId)
    if (record) {
      call.record = record
      // What it changed (a shell command's files too).
      if (record.changes.length) call.paths = record.changes.map(c => c.path)
      call.undo = undoable(record, all)
      const by = undone.get(record.id)
      if (by) call.undoneBy = by.id
    }
    const later = deferred.get(call.callId)
    if (call.verdict !== 'group rollback') call.verdict = later ? deferredVerdict(call, later, call.turn !== undefined && ended.has(call.turn)) : verdictOf(call)
    // Kept for now, and its turn ended without undoing it: kept.
    if (call.verdict === 'provisional' && call.turn !== undefined && ended.has(call.turn)) call.verdict = 'kept'
  }
  for (const r of mine.filter(r => r.kind === 'undo')) {
    const by = undone.get(r.id)
    items.push({ kind: 'undo', time: r.time, record: r, undo: undoable(r, all), ...(by ? { undoneBy: by.id } : {}) })
  }
  return items.sort((a, b) => a.time - b.time)
}

/** A call that returned kept for now while its tests ran in the background: the lines of its own verdict, when they came. */
interface Deferred {
  /** `waiting`: no verdict line yet; `open`: reading the verdict's lines; `closed`: later lines are another judgement's (its turn's). */
  batch: 'waiting' | 'open' | 'closed'
  /** The outcomes of its own verdict's lines. */
  own: string[]
  checks: Set<string>
}

/**
 * The verdict of a call judged in the background: pending until its
 * verdict's lines are logged (its turn ends only after them, so a turn that
 * ended without them never judged it); then what they say, and a rollback in
 * a later judgement is its turn's.
 */
function deferredVerdict(call: CallView, later: Deferred, turnEnded: boolean): CallVerdict {
  if (later.batch === 'waiting') return turnEnded ? 'not verified' : 'pending'
  if (later.own.includes('rolled-back')) return 'rolled back'
  if (call.checks.some(c => c.outcome === 'rolled-back')) return 'group rollback'
  if (call.record?.kind === 'rollback') return 'rolled back'
  if (later.own.includes('error') || later.own.includes('timeout')) return 'not verified'
  if (later.own.includes('fail')) return 'provisional'
  return 'kept'
}

/** A call's verdict from its checks, its result and what was kept of it. */
function verdictOf(call: CallView): CallVerdict {
  const outcomes = call.checks.map(c => c.outcome)
  const text = call.result?.content ?? ''
  if (!call.result) return 'running'
  // Kept for now when it ran, undone with its turn's unfinished change at the stop (ADR 0037).
  if (!call.result.isError && outcomes.includes('rolled-back')) return 'group rollback'
  if (call.record?.kind === 'rollback' || outcomes.includes('rolled-back') || text.startsWith('rolled back')) return 'rolled back'
  if (/(^|\n)kept for now:/.test(text)) return 'provisional'
  if (call.result.isError && !call.record) return call.checks.length ? 'not verified' : 'refused'
  if (!call.checks.length) return call.record ? 'not verified' : 'ran'
  if (outcomes.includes('error') || outcomes.includes('timeout') || /^warning: not verified/m.test(text)) return 'not verified'
  if (/^warning: kept/m.test(text) || outcomes.includes('warn')) return 'warned'
  return 'kept'
}

/** Paths a call's arguments name (`path`, `file_path`, `paths`, multi_edit's edits). */
function pathsOf(args: Record<string, unknown>): string[] {
  const out = new Set<string>()
  for (const key of ['path', 'file_path', 'filePath']) if (typeof args[key] === 'string') out.add(args[key] as string)
  for (const key of ['paths', 'edits']) {
    const v = args[key]
    if (Array.isArray(v)) for (const x of v) {
      if (typeof x === 'string') out.add(x)
      else if (x && typeof (x as { path?: unknown }).path === 'string') out.add((x as { path: string }).path)
    }
  }
  return [...out]
}

function checkpointOf(vault: string, id: string): { checkpoint?: CheckpointView } {
  const file = join(vault, 'checkpoints', `${id}.json`)
  if (!existsSync(file)) return {}
  try {
    const raw = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>
    const report = (raw.report ?? {}) as Record<string, unknown>
    const marks: string[] = []
    for (const u of (report.unseen as unknown[] | undefined) ?? []) marks.push(`not seen run: ${typeof u === 'string' ? u : JSON.stringify(u)}`)
    for (const f of (report.failing as unknown[] | undefined) ?? []) marks.push(`failing when last run: ${typeof f === 'string' ? f : (f as { command?: string }).command ?? JSON.stringify(f)}`)
    const list = (k: string) => ((raw[k] as unknown[] | undefined) ?? []).map(String)
    return { checkpoint: { time: Number(raw.time ?? 0), summary: String(raw.summary ?? ''), verified: list('verified'), failed: list('failed'), next: list('next'), marks } }
  } catch {
    // An unreadable checkpoint is shown as none.
    return {}
  }
}

function proofState(vault: string): ProofState {
  const file = join(vault, 'proofchain.jsonl')
  if (!existsSync(file)) return { state: 'none' }
  try {
    const r = verifyChainFile(file)
    return r.ok ? { state: 'verified', entries: r.entries, sealed: !!r.seal } : { state: 'broken', problem: r.problem ? describeProblem(r.problem) : 'does not verify' }
  } catch (error) {
    return { state: 'broken', problem: (error as Error).message }
  }
}
