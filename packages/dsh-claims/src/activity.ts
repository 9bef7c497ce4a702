import type { RawSessionEvent } from 'dsh-session'
import { attributeExit, attributeUnknown, type AttributedCommand, type HiddenBy, type RunOutcome } from './attribution.ts'
import { formatKey, unwrapCommand } from './command-key.ts'
import { parseShell } from './shell.ts'
import type { RunRecord } from './types.ts'

/** What a shell tool returned, as far as claims care. */
export interface ShellResultLike {
  content?: string
  isError?: boolean
  exitCode?: number | null
}

export interface ActivityOptions {
  /** Which tool calls are shell runs (`arguments.command`). Default: the tool named `bash`. */
  isShellTool?: (name: string) => boolean
  /**
   * A fixed cut-off seq: only runs after it count. Without it every run of
   * the session counts (a claim carried into a later checkpoint is still
   * backed by a run before the previous one; the last run counts).
   */
  after?: number
  /** For merged streams whose events carry `sessionId`: keep only this session's. */
  sessionId?: string
}

/** The activity record after the cut-off: the last run of every command key. */
export interface Activity {
  /** Seq of the cut-off; `-1` is the session start. */
  cutoff: number
  since: 'session-start' | 'checkpoint'
  /** Last run per key (`vitest run`). */
  runs: ReadonlyMap<string, RunRecord>
  /** Last run per program, whatever its first argument (a claim naming only `pytest` matches any pytest run). */
  lastByProgram: ReadonlyMap<string, RunRecord>
  /**
   * Last failing run per key, of the commands the agent ran (shell tools),
   * and of the checks on the agent's writes that failed or rolled them back
   * (`verify/verdict` outcome `fail` / `rolled-back`). The harness's own
   * measurements (`verify/run`: a baseline failing on pre-existing problems,
   * a check that timed out) and verdicts `error` are not the agent's failures.
   */
  failures: ReadonlyMap<string, RunRecord>
  /** Last verdict per `<check> of <tool> on <paths>` (whether a failed write was later done right). */
  verdicts: ReadonlyMap<string, RunRecord>
  /** A `claims/questioned` marker is in the session log (anywhere, not only after the cut-off). */
  questioned: boolean
  /** Shell and verify runs counted after the cut-off. */
  runCount: number
}

const MAX_NESTING = 3
const MEMO_LIMIT = 4096
const EXIT_CODE = /\[exit code (\d+)\]\s*$/

/** Exit status of a shell tool result: its `exitCode`, else the `[exit code N]` trailer, else `isError`. */
export function shellExitCode(result: ShellResultLike): number | null {
  if (result.exitCode !== undefined) return result.exitCode
  const m = EXIT_CODE.exec(result.content ?? '')
  if (m) return Number(m[1])
  return result.isError ? null : 0
}

interface OpenCall {
  command: string
  seq: number
  /** dsh-dstvalid rolled the call's writes back (a `verify/verdict` `rolled-back` of this call id). */
  rolledBack?: boolean
}

/**
 * Folds session-log events, oldest first, into the activity record: every
 * shell tool call with its result (`tool/call` + `tool/result`) and every
 * `verify/run`. Memory is bounded by the number of distinct commands, not by
 * the log's length, so a log can be streamed through it.
 */
export class ActivityRecorder {
  private readonly _isShell: (name: string) => boolean
  private readonly _open = new Map<string, OpenCall>()
  private readonly _runs = new Map<string, RunRecord>()
  private readonly _byProgram = new Map<string, RunRecord>()
  private readonly _failures = new Map<string, RunRecord>()
  private readonly _verdicts = new Map<string, RunRecord>()
  private readonly _cutoff: number
  private readonly _since: Activity['since']
  private _questioned = false
  private _count = 0
  private readonly _memo = new Map<string, KeyedOutcome[]>()

  constructor(private readonly options: ActivityOptions = {}) {
    this._isShell = options.isShellTool ?? (name => name === 'bash')
    this._cutoff = options.after ?? -1
    this._since = this._cutoff < 0 ? 'session-start' : 'checkpoint'
  }

  /**
   * A copy of the record so far, to settle open calls on or fold further
   * events into without changing this one. Costs the number of distinct
   * commands and open calls, not the number of events folded.
   */
  fork(): ActivityRecorder {
    const copy = new ActivityRecorder(this.options)
    for (const [callId, call] of this._open) copy._open.set(callId, { ...call })
    copyInto(this._runs, copy._runs)
    copyInto(this._byProgram, copy._byProgram)
    copyInto(this._failures, copy._failures)
    copyInto(this._verdicts, copy._verdicts)
    copyInto(this._memo, copy._memo)
    copy._questioned = this._questioned
    copy._count = this._count
    return copy
  }

  /** Add one event. Events of unknown types are ignored. */
  add(event: RawSessionEvent): void {
    const wanted = this.options.sessionId
    if (wanted !== undefined) {
      const owner = (event as { sessionId?: unknown }).sessionId
      if (typeof owner === 'string' && owner !== wanted) return
    }
    const data = event.data as Record<string, unknown> | null
    switch (event.type) {
      case 'tool/call': {
        if (!data || typeof data.name !== 'string' || !this._isShell(data.name)) return
        const command = commandOf(data.arguments)
        if (command !== undefined && typeof data.callId === 'string') this._open.set(data.callId, { command, seq: event.seq })
        return
      }
      case 'tool/result': {
        if (!data || typeof data.callId !== 'string') return
        const call = this._open.get(data.callId)
        if (!call) return
        this._open.delete(data.callId)
        this.recordShell(call, data as ShellResultLike)
        return
      }
      case 'verify/run':
        if (data && Array.isArray(data.argv)) this.recordVerify(event.seq, data)
        return
      case 'verify/verdict':
        if (!data) return
        if (data.outcome === 'rolled-back' && typeof data.callId === 'string') {
          const open = this._open.get(data.callId)
          if (open) open.rolledBack = true
        }
        this.recordVerdict(event.seq, data)
        return
      case 'claims/questioned':
        this._questioned = true
        return
    }
  }

  /**
   * Record shell calls whose `tool/call` is logged but whose `tool/result`
   * is not yet (they ran earlier in the step that is still in progress).
   */
  settleOpenCalls(lookup: (callId: string) => ShellResultLike | undefined): void {
    for (const [callId, call] of this._open) {
      const result = lookup(callId)
      if (!result) continue
      this._open.delete(callId)
      this.recordShell(call, result)
    }
  }

  get activity(): Activity {
    return {
      cutoff: this._cutoff,
      since: this._since,
      runs: this._runs,
      lastByProgram: this._byProgram,
      failures: this._failures,
      verdicts: this._verdicts,
      questioned: this._questioned,
      runCount: this._count,
    }
  }

  private recordShell(call: OpenCall, result: ShellResultLike) {
    if (call.seq <= this._cutoff) return
    const exit = shellExitCode(result)
    this._count++
    if (exit === null && call.rolledBack) {
      // The rollback's text replaced the command's result, exit status and all: the command ran (its
      // writes were judged), how it exited is unknown, and its failure is the verdict's, counted once.
      this.recordKeyed(this.memo(`rollback\u0000${call.command}`, () => keyAttributed(attributeUnknown(parseShell(call.command), 'rollback'), null, 0)), null, call.seq, 'shell')
      return
    }
    this.recordKeyed(this.memo(`${exit}\u0000${call.command}`, () => keyAttributed(attributeExit(parseShell(call.command), exit), exit, 0)), exit, call.seq, 'shell')
  }

  private recordVerify(seq: number, data: Record<string, unknown>) {
    if (seq <= this._cutoff) return
    const argv = (data.argv as unknown[]).filter((a): a is string => typeof a === 'string')
    const pass = data.outcome === 'pass'
    const exitCode = pass ? 0 : typeof data.exitCode === 'number' ? data.exitCode : null
    this._count++
    const keyed = this.memo(`${pass}\u0001${argv.join('\u0000')}`, () => keyAttributed([{ words: argv, outcome: pass ? 'pass' : 'fail' }], exitCode, 0))
    this.recordKeyed(keyed, exitCode, seq, 'verify')
  }

  /** A check's verdict on an agent's write: `fail` / `rolled-back` are the agent's failures; `error` (no judgement) is nothing. */
  private recordVerdict(seq: number, data: Record<string, unknown>) {
    if (seq <= this._cutoff) return
    const { outcome, check, tool, paths } = data
    if ((outcome !== 'pass' && outcome !== 'fail' && outcome !== 'rolled-back') || typeof check !== 'string' || typeof tool !== 'string' || !Array.isArray(paths)) return
    const key = `${check} of ${tool} on ${paths.filter(p => typeof p === 'string').join(', ')}`
    const run: RunRecord = { key, program: check, outcome: outcome === 'pass' ? 'pass' : 'fail', exitCode: null, seq, source: 'verdict' }
    if (outcome !== 'pass') run.verdict = outcome
    this._verdicts.set(key, run)
    if (run.verdict) this._failures.set(key, run)
  }

  /** Sessions repeat their commands; parse each (command, status) once. */
  private memo(id: string, compute: () => KeyedOutcome[]): KeyedOutcome[] {
    let keyed = this._memo.get(id)
    if (!keyed) {
      if (this._memo.size >= MEMO_LIMIT) this._memo.clear()
      this._memo.set(id, keyed = compute())
    }
    return keyed
  }

  private recordKeyed(keyed: readonly KeyedOutcome[], exitCode: number | null, seq: number, source: RunRecord['source']) {
    for (const k of keyed) {
      const run: RunRecord = { key: k.key, program: k.program, outcome: k.outcome, exitCode, seq, source }
      if (k.hiddenBy) run.hiddenBy = k.hiddenBy
      this._runs.delete(k.key)
      this._runs.set(k.key, run)
      this._byProgram.set(k.program, run)
      if (run.outcome === 'fail' && source === 'shell') this._failures.set(k.key, run)
    }
  }
}

/** A keyed command of a run, with what the run's status proves about it. */
interface KeyedOutcome {
  key: string
  program: string
  outcome: RunOutcome
  hiddenBy?: HiddenBy
}

/** Key attributed commands, reading `bash -c '…'` scripts with the outcome their shell got. */
function keyAttributed(commands: AttributedCommand[], exitCode: number | null, depth: number): KeyedOutcome[] {
  const out: KeyedOutcome[] = []
  for (const command of commands) {
    const what = unwrapCommand(command.words)
    if (!what) continue
    if ('script' in what) {
      if (depth >= MAX_NESTING) continue
      const inner = parseShell(what.script)
      const nested = command.outcome === 'unknown'
        ? attributeUnknown(inner, command.hiddenBy ?? 'list')
        : attributeExit(inner, command.outcome === 'pass' ? 0 : exitCode ?? null)
      out.push(...keyAttributed(nested, exitCode, depth + 1))
      continue
    }
    const k: KeyedOutcome = { key: formatKey(what.key), program: what.key.program, outcome: command.outcome }
    if (command.hiddenBy) k.hiddenBy = command.hiddenBy
    out.push(k)
  }
  return out
}

/** Entries keep their order, so the copy's "last run" order is the original's. */
function copyInto<V>(from: ReadonlyMap<string, V>, to: Map<string, V>): void {
  for (const [k, v] of from) to.set(k, v)
}

function commandOf(args: unknown): string | undefined {
  if (!args || typeof args !== 'object') return undefined
  const command = (args as { command?: unknown }).command
  if (typeof command === 'string') return command
  if (Array.isArray(command) && command.every(c => typeof c === 'string')) return command.join(' ')
  return undefined
}
