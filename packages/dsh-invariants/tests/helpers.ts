import { Context, type Fiber } from '@deepseek-ai/cordis'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runCommand, type RunResult } from 'dsh-common'
import AgentService from 'dsh-agent'
import LlmService from 'dsh-llm'
import * as Scripted from 'dsh-llm/scripted'
import SessionService, { type RawSessionEvent } from 'dsh-session'
import * as SessionJsonl from 'dsh-session/jsonl'
import ToolService from 'dsh-tools'
import * as WorkspaceTools from 'dsh-tools-workspace'
import * as Invariants from 'dsh-invariants'

export interface HarnessOptions {
  /** Config of dsh-invariants, or false to leave it out. */
  invariants?: Partial<Invariants.Config> | false
  /** Scripted model: JSON Lines, one assistant step per line. Omit for no model/agent. */
  script?: string
  /** Persist sessions with dsh-session/jsonl (interval 0: drained on flush and dispose). */
  jsonl?: boolean
}

export interface Harness {
  ctx: Context
  /** A fresh temp directory, the sessions' workspace. */
  workspace: string
  /** The dsh-invariants fiber, when loaded. */
  invariants?: Fiber
  /** (Re)load dsh-invariants, as `cordis.yml` or a hot reload would. */
  loadInvariants(config?: Partial<Invariants.Config>): Promise<Fiber>
  dispose(): Promise<void>
}

/** A real Context with the real harness plugins (and dsh-invariants unless told otherwise). */
export async function createHarness(options: HarnessOptions = {}): Promise<Harness> {
  const ctx = new Context()
  const workspace = mkdtempSync(join(tmpdir(), 'dsh-'))
  const fibers: Fiber[] = []
  const load = async (plugin: Parameters<Context['plugin']>[0], config?: unknown) => {
    const fiber = ctx.plugin(plugin, config)
    fibers.push(fiber)
    await fiber.await()
    return fiber
  }
  await load(SessionService)
  await load(ToolService)
  await load(WorkspaceTools, {})
  if (options.jsonl) await load(SessionJsonl, { intervalMs: 0 })
  if (options.script !== undefined) {
    await load(LlmService)
    await load(Scripted, { script: options.script })
    await load(AgentService, {})
  }
  const harness: Harness = {
    ctx,
    workspace,
    async loadInvariants(config = {}) {
      harness.invariants = await load(Invariants, config)
      return harness.invariants
    },
    async dispose() {
      for (const fiber of fibers.reverse()) await fiber.dispose()
      rmSync(workspace, { recursive: true, force: true })
    },
  }
  if (options.invariants !== false) await harness.loadInvariants(options.invariants || {})
  return harness
}

/** Listener counts of the events dsh-invariants listens on. */
export function listenerCounts(ctx: Context): Record<string, number> {
  const names = ['session/created', 'session/event', 'agent/status']
  return Object.fromEntries(names.map(name => [name, ctx.events._hooks[name]?.length ?? 0]))
}

/**
 * A trace from a compact notation, one event per string; seq counts up from
 * 0 unless a line starts with `@N ` (that event gets seq N, later ones N+1…).
 *
 *   turn/start 0 · turn/end 0 [reason] · step/start 0.1 · step/end 0.1 ·
 *   chunk [text] · message · call ID · result ID · any other type (data {})
 */
export function trace(...lines: string[]): RawSessionEvent[] {
  let seq = 0
  return lines.map(line => {
    const at = /^@(-?\d+) (.*)$/.exec(line)
    if (at) seq = Number(at[1])
    const [kind, arg, extra] = (at ? at[2]! : line).split(' ')
    const event = { seq, time: 1_700_000_000_000 + seq, ...spec(kind!, arg, extra) }
    seq++
    return event
  })
}

function spec(kind: string, arg?: string, extra?: string): { type: string; data: unknown } {
  const [t, s] = (arg ?? '').split('.').map(Number)
  switch (kind) {
    case 'turn/start': return { type: kind, data: { turn: t } }
    case 'turn/end': return { type: kind, data: { turn: t, reason: extra ?? 'completed' } }
    case 'step/start':
    case 'step/end': return { type: kind, data: { turn: t, step: s } }
    case 'chunk': return { type: 'assistant/chunk', data: { text: arg ?? 'hi' } }
    case 'message': return { type: 'assistant/message', data: { text: 'hi', toolCalls: [] } }
    case 'call': return { type: 'tool/call', data: { callId: arg, name: 'bash', arguments: { command: 'true' } } }
    case 'result': return { type: 'tool/result', data: { callId: arg, name: 'bash', content: '[exit code 0]', isError: false, exitCode: 0 } }
    default: return { type: kind, data: {} }
  }
}

/** Feed `events` through `session.append` (which assigns its own seq). */
export function appendAll(session: { append(type: never, data: never): unknown }, events: readonly RawSessionEvent[]): void {
  for (const e of events) session.append(e.type as never, e.data as never)
}

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
export const fixture = (name: string) => join(dirname(fileURLToPath(import.meta.url)), 'fixtures', name)

/** The real `dsh` command in a child process (as `pnpm dsh` runs it), no model key in its environment. */
export function dsh(args: string[], env: Record<string, string | undefined> = {}): Promise<RunResult> {
  return runCommand([process.execPath, '--import', 'tsx', join(repoRoot, 'packages/dsh-cli/src/bin.ts'), ...args], {
    cwd: repoRoot,
    env: { NODE_ENV: 'test', DSH_API_KEY: undefined, DEEPSEEK_API_KEY: undefined, ...env },
    timeoutMs: 120_000,
  })
}
