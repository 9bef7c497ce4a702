import type { Context, Fiber } from '@deepseek-ai/cordis'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runCommand, type RunResult } from 'dsh-common'
import type { RawSessionEvent } from 'dsh-session'
import * as SessionJsonl from 'dsh-session/jsonl'
import { harness, type PluginSpec } from 'dsh-testkit'
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

/** The shared test kit's real harness, plus dsh-invariants (unless told otherwise) loaded so a test can reload it. */
export async function createHarness(options: HarnessOptions = {}): Promise<Harness> {
  const plugins: PluginSpec[] = options.jsonl ? [[SessionJsonl, { intervalMs: 0 }]] : []
  const h = await harness({ ...(options.script !== undefined ? { script: options.script } : {}), plugins })
  const invariants: Harness = {
    ctx: h.ctx,
    workspace: h.workspace,
    async loadInvariants(config = {}) {
      invariants.invariants = await h.load([Invariants, config])
      return invariants.invariants
    },
    dispose: () => h.dispose(),
  }
  if (options.invariants !== false) await invariants.loadInvariants(options.invariants || {})
  return invariants
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
