import type { Fiber } from '@deepseek-ai/cordis'
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach } from 'vitest'
import type { RawSessionEvent, Session } from 'dsh-session'
import * as SessionJsonl from 'dsh-session/jsonl'
import LlmService, { createScriptedAdapter, type ScriptStep } from 'dsh-llm'
import AgentService, { type Agent } from 'dsh-agent'
import * as Claims from 'dsh-claims'
import { harness as core, tempDir as kitTempDir, type PluginSpec } from 'dsh-testkit'

export function tempDir(): string {
  return kitTempDir('dsh-claims-')
}

/**
 * A workspace with fake `vitest` and `tsc` binaries in node_modules/.bin:
 * each exits with `$FAKE_EXIT` (default 0), so a test decides a run's outcome
 * in the command line itself (`FAKE_EXIT=1 node_modules/.bin/vitest run`).
 */
export function fakeWorkspace(): string {
  const ws = tempDir()
  const bin = join(ws, 'node_modules', '.bin')
  mkdirSync(bin, { recursive: true })
  for (const name of ['vitest', 'tsc']) {
    writeFileSync(join(bin, name), `#!/bin/sh\necho "${name} $*"\nexit "\${FAKE_EXIT:-0}"\n`)
    chmodSync(join(bin, name), 0o755)
  }
  return ws
}

export const bash = (command: string) => ({ name: 'bash', arguments: { command } })
export const checkpoint = (args: { summary?: string; verified?: string[]; failed?: string[]; next?: string[] }) =>
  ({ name: 'checkpoint', arguments: { summary: 'work so far', verified: [], failed: [], next: [], ...args } })

export interface HarnessOptions {
  /** Also load dsh-session/jsonl (before dsh-claims, as cordis.yml does). */
  jsonl?: boolean
  claims?: Partial<Claims.Config>
  ws?: string
}

/**
 * A real harness in one Context — sessions, tools, workspace tools, the
 * agent loop and dsh-claims — with a scripted model whose script is chosen
 * per session id, so several sessions can run different scripts.
 */
export async function harness(options: HarnessOptions = {}) {
  const plugins: PluginSpec[] = [
    ...(options.jsonl ? [[SessionJsonl, { intervalMs: 0 }] as PluginSpec] : []),
    LlmService,
    [AgentService, {}],
  ]
  const kit = await core({ plugins, workspace: options.ws ?? fakeWorkspace() })
  const ctx = kit.ctx
  const claims: Fiber = await kit.load([Claims, Claims.Config(options.claims ?? {})])
  const scripts = new Map<string, ScriptStep[]>()
  ctx.llm.register({
    name: 'per-session-script',
    stream: (request, signal) => createScriptedAdapter(scripts.get(request.session.id) ?? []).stream(request, signal),
  })
  const ws = kit.workspace
  const vault = join(ws, '.dsh')

  /** Create a session on the workspace (optionally seeded, as after a restart) with its agent. */
  const open = (id: string, steps: ScriptStep[], seed?: readonly RawSessionEvent[]): { session: Session; agent: Agent } => {
    scripts.set(id, steps)
    const session = ctx.sessions.create(id, { cwd: ws, vault, seed })
    return { session, agent: ctx.agents.create(session) }
  }

  /** Run one user message through a new session's agent to idle. */
  const run = async (id: string, steps: ScriptStep[], seed?: readonly RawSessionEvent[]) => {
    const { session, agent } = open(id, steps, seed)
    const reason = await agent.send('go')
    return { session, agent, reason }
  }

  return { ctx, claims, ws, vault, scripts, open, run, dispose: kit.dispose }
}

const running: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const dispose of running.splice(0)) await dispose()
})

/** `harness(options)`, disposed after the current test. */
export async function setup(options: HarnessOptions = {}) {
  const h = await harness(options)
  running.push(h.dispose)
  return h
}

/** The content of every `tool/result` of the named tool, in log order. */
export function results(session: Session, tool: string): string[] {
  return session.events.flatMap(e => (e.type === 'tool/result' && e.data.name === tool ? [e.data.content] : []))
}

/** Build a session log by hand: `[type, data]` pairs get consecutive seqs. */
export function log(...entries: [string, unknown][]): RawSessionEvent[] {
  return entries.map(([type, data], seq) => ({ seq, time: 1_700_000_000_000 + seq, type, data }))
}

let nextCall = 0
/** A shell tool call and its result, as the agent logs them. */
export function shellRun(command: string, exitCode: number | null, name = 'bash'): [string, unknown][] {
  const callId = `c${++nextCall}`
  return [
    ['tool/call', { callId, name, arguments: { command } }],
    ['tool/result', { callId, name, content: `…\n[exit code ${exitCode}]`, isError: exitCode !== 0, exitCode }],
  ]
}

/** A `verify/run` event as dsh-dstvalid appends it. */
export function verifyRun(argv: string[], outcome: 'pass' | 'fail' | 'timeout' | 'error', exitCode: number | null = outcome === 'pass' ? 0 : 1): [string, unknown] {
  return ['verify/run', { check: argv.join(' '), argv, cwd: '/w', exitCode, durationMs: 5, outcome }]
}
