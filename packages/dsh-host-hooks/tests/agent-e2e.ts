/**
 * One end-to-end scenario for every agent CLI the hooks host speaks to: the
 * pinned CLI, offline in a loopback-only network namespace, on a scripted
 * model, on a copy of the demo workspace after `dsh hooks install`. One
 * session makes a good edit, a type-breaking edit, a `sed -i` through the
 * shell tool and a test-breaking edit (and, where the agent offers it, a
 * checkpoint with a claim never run). The test break is kept for now (its
 * failures are in other files), so the model's stop is refused; the model
 * answers without writing, so its next stop undoes it; the same session
 * resumed answers a next prompt. Each agent's spec says how its CLI words those calls and shows
 * their results ({@link AgentE2E}); the assertions every agent shares live
 * here, its own stay in its spec.
 *
 * A recording hook next to dsh's (`record`) keeps every payload the CLI sent,
 * so the same run pins the protocol facts the adapter relies on (payload
 * shapes, call ids, which events come in which order).
 */
import { chmodSync, cpSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureAgentCli, type AgentCliName } from '../../../scripts/agent-clis.ts'
import { registryReachable } from '../../../scripts/deepseek-harness.ts'
import { ADAPTERS, hostStatus, installHooks, MESSAGES, writeHostSettings } from 'dsh-host-hooks'
import { loopbackUnavailable, startModelServer, tempDir, type AgentRun, type AgentStep, type AgentToolCall, type ModelReply, type ModelRequest, type ModelServer } from 'dsh-testkit'

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')

export const ORIGINAL = readFileSync(join(repoRoot, 'examples/demo/workspace/src/money.ts'), 'utf8')
export const ROUNDING = 'return Math.round(amount * (1 - percent / 100))'
export const GOOD = `${ROUNDING} // rounded to the cent`
const ADD = 'export function add(a: Cents, b: Cents): Cents {'
export const SED = "sed -i 's/b: Cents): Cents {/b: string): Cents {/' src/money.ts"
export const SUMMARY_HEAD = 'Proof chain — latest harness-verified result per check in this session (failures first):'

/** The suite's rollback text for the type-breaking edit (or `sed -i`) made by `tool`. */
export function typeBreak(tool: string): string {
  return `rolled back: typecheck failed after ${tool} on src/money.ts\nsrc/money.ts:5 TS2322 Type 'string' is not assignable to type 'number'.\n(typecheck stopped at the first new errors: possibly more in files not checked)`
}

/** What the test-breaking edit breaks: tests in other files, so it is kept for now (turn verdicts, ADR 0037). */
const TESTS_BROKEN = [
  'tests/cart.test.ts:11 FAIL cart > applies the discount to the subtotal — AssertionError: expected 2310 to be 1890 // Object.is equality',
  'tests/money.test.ts:6 FAIL money > applies a percentage discount, rounding to the cent — AssertionError: expected 1099 to be 899 // Object.is equality',
]

/** The suite's text for the test-breaking edit: kept for now, to be fixed before the turn ends. */
export const KEPT_FOR_NOW = ['kept for now: 2 tests in 2 files fail against this change:', ...TESTS_BROKEN, 'fix them before you finish, or this change is undone'].join('\n')

/** How many times a stop may be refused while the test break is open (dsh-dstvalid's `stopRefusals` default). */
export const STOP_REFUSALS = 2

/** How many times the scripted model's stop is refused: once, since it answers without writing, so its next stop undoes the break. */
export const REFUSED = 1

/** The reason the agent's `n`th stop is refused with, the test break (made by `tool`) still open. */
export function stopRefused(n: number, tool: string): string {
  const next = n < STOP_REFUSALS ? 'stopping again without writing a fix undoes' : 'stopping with them open undoes'
  return [`not done: this turn leaves the project worse than it began (stop refused, ${n} of ${STOP_REFUSALS}): 2 tests in 2 files fail:`, ...TESTS_BROKEN, `fix them, then finish; ${next} ${tool} on src/money.ts`].join('\n')
}

/** What the model reads at the next prompt once the agent stopped again without writing: the test break undone (`kept`: a later write held with it and kept). */
export function undoneAtTurnEnd(tool: string, kept?: string): string {
  return [
    `undone at the end of the turn: ${tool} on src/money.ts; it left the project worse than the turn began: 2 tests in 2 files fail:`, ...TESTS_BROKEN,
    ...(kept ? [`kept: ${kept}`] : []), 'to make this change, update every file it breaks in the same turn before you finish',
  ].join('\n')
}

/** What the checkpoint claims: a check never run in the session. */
export const CHECKPOINT = { summary: 'Noted the rounding in src/money.ts.', verified: ['receipts print right — node scripts/receipt.mjs'], failed: [], next: ['Let add take strings.'] }
export const CLAIM_MARKED = [
  'Recorded as given; 1 claim marked for the next agent, and one question:',
  '- "receipts print right — node scripts/receipt.mjs": `node scripts/receipt.mjs` not seen run in this session — run it or drop the claim.',
].join('\n')

/** A move of the shared scenario; an agent's script may put steps of its own between them. */
export type Move = 'good' | 'type-break' | 'sed' | 'test-break' | 'checkpoint'

const MOVE_TEXT: Record<Move, string> = {
  'good': 'Note the rounding.',
  'type-break': 'Let add take strings.',
  'sed': 'With sed then.',
  'test-break': 'Discount adds instead.',
  'checkpoint': 'Checkpoint.',
}

/** How one agent's CLI takes part in the scenario. */
export interface AgentE2E {
  /** The CLI's name in test titles (`Claude Code`). */
  label: string
  cli: AgentCliName
  /** The hooks adapter `dsh hooks install --agent` uses. */
  adapter: string
  /** The agent's tool call for an edit of src/money.ts, a shell command, a checkpoint through the suite's MCP tool. */
  edit(from: string, to: string, money: string): AgentToolCall
  shell(command: string): AgentToolCall
  checkpoint?(args: typeof CHECKPOINT): AgentToolCall
  /** The first session's model answers: the shared moves in order, with the agent's own steps between them; `Done.` is added, once for each stop. */
  script(money: string): (Move | AgentStep)[]
  /** The scripted model speaking the agent's API. */
  model(steps: readonly AgentStep[]): (request: ModelRequest) => ModelReply
  /** The requests that are turns of the conversation (not side requests), in order. */
  turns(requests: readonly ModelRequest[]): ModelRequest[]
  /** Run the CLI once: the first session, or (`resume`) the same session again. */
  run(options: { bin: string; workspace: string; prompt: string; server: ModelServer; home: string }, resume?: AgentRun): Promise<AgentRun>
  /** Prepare the CLI's home (trust, settings) before the first run. */
  prepareHome?(home: string, workspace: string): void
  /**
   * A recording hook on `events`, added to the hooks file the install wrote
   * (`timeoutScale`: the file's timeout unit per second), answering `answers[event]`
   * (JSON) where given, else nothing.
   */
  record?: { file: string; events: string[]; timeoutScale: number; answers?: Record<string, object> }
}

/** What a spec reads of the scenario's run, inside its tests. */
export interface E2ERun {
  ws: string
  server: ModelServer
  first: AgentRun
  second: AgentRun
  /** src/money.ts after the first session. */
  afterFirst: string
  /** The turn request that followed the scripted step of `move` (its result is in it). */
  after(move: Move): ModelRequest
  /** The turn request that followed scripted step `i` of the first session. */
  afterStep(i: number): ModelRequest
  /** The turn request that followed the model's `n`th stop (`Done.`) in the first session: the refusal is in it, for n ≤ {@link REFUSED}. */
  afterStop(n: number): ModelRequest
  /** The payloads the recording hook saw, in order. */
  payloads(): Record<string, unknown>[]
}

/** Why the scenario cannot run here (no npm registry to install the pinned CLI, no loopback namespace), or undefined. */
export async function e2eSkip(label: string): Promise<string | undefined> {
  const offline = (await registryReachable()) ? undefined : `the npm registry is unreachable, so the pinned ${label} cannot be installed`
  const skip = offline ?? (await loopbackUnavailable())
  if (skip) console.warn(`${label} e2e skipped: ${skip}`)
  return skip
}

/** A hook command that appends its payload to `log` (one line each) and answers by event (nothing for the others). */
function recordingHook(dir: string, log: string, answers: Record<string, object> = {}): string {
  const file = join(dir, 'record.sh')
  const cases = Object.entries(answers).map(([event, answer]) => `  *'"hook_event_name":"${event}"'*) echo '${JSON.stringify(answer)}' ;;`)
  writeFileSync(file, `#!/bin/sh\nin=$(cat)\nprintf '%s\\n' "$in" >> '${log}'\ncase "$in" in\n${cases.join('\n')}\n  *) ;;\nesac\n`)
  chmodSync(file, 0o755)
  return file
}

/**
 * The shared scenario as a `describe` of `agent`'s: sets it up once (both
 * sessions run in `beforeAll`), asserts what every agent shares, then
 * `own(run)` adds the agent's own tests.
 */
export function describeAgentE2E(agent: AgentE2E, skip: string | undefined, own: (run: E2ERun) => void): void {
  describe.skipIf(!!skip)(`dsh hooks with the real ${agent.label} CLI`, () => {
    let server: ModelServer
    let ws = ''
    let first: AgentRun
    let second: AgentRun
    let afterFirst = ''
    let log = ''
    const stepOf = new Map<Move, number>()
    let stops = 0

    beforeAll(async () => {
      const bin = await ensureAgentCli(agent.cli)
      const dir = tempDir(`dsh-${agent.cli}-e2e-`)
      ws = join(dir, 'shop')
      cpSync(join(repoRoot, 'examples/demo/workspace'), ws, { recursive: true })
      symlinkSync(join(repoRoot, 'node_modules'), join(ws, 'node_modules'), 'dir')
      const home = tempDir(`dsh-${agent.cli}-home-`)
      installHooks(ADAPTERS.find(a => a.agent === agent.adapter)!, ws, { home })
      // Each write's whole verdict in its own hook answer, as these runs assert it (background verdicts off in the workspace's host settings: the one switch every agent passes on to the host).
      writeHostSettings(join(ws, '.dsh'), { background: false })
      if (agent.record) {
        log = join(dir, 'payloads.jsonl')
        const file = join(ws, agent.record.file)
        const settings = JSON.parse(readFileSync(file, 'utf8')) as { hooks: Record<string, unknown[]> }
        const command = recordingHook(dir, log, agent.record.answers)
        for (const event of agent.record.events) {
          const group = { ...(/Tool/.test(event) ? { matcher: '.*' } : {}), hooks: [{ type: 'command', command, timeout: 30 * agent.record.timeoutScale }] }
          settings.hooks[event] = [...(settings.hooks[event] ?? []), group]
        }
        writeFileSync(file, JSON.stringify(settings, null, 2))
      }
      const money = join(ws, 'src/money.ts')
      agent.prepareHome?.(home, ws)
      const moveCall: Record<Move, () => AgentToolCall> = {
        'good': () => agent.edit(ROUNDING, GOOD, money),
        'type-break': () => agent.edit(ADD, 'export function add(a: Cents, b: string): Cents {', money),
        'sed': () => agent.shell(SED),
        'test-break': () => agent.edit(GOOD, GOOD.replace('1 - percent', '1 + percent'), money),
        'checkpoint': () => agent.checkpoint!(CHECKPOINT),
      }
      const steps = agent.script(money).map((step, i) => {
        if (typeof step !== 'string') return step
        stepOf.set(step, i)
        return { text: MOVE_TEXT[step], toolCalls: [moveCall[step]()] }
      })
      stops = steps.length
      const done = Array.from({ length: REFUSED + 1 }, () => ({ text: 'Done.' }))
      server = await startModelServer(agent.model([...steps, ...done, { text: 'Nothing else.' }]))
      const options = { bin, workspace: ws, server, home }
      first = await agent.run({ ...options, prompt: 'Tidy up the money module.' })
      afterFirst = readFileSync(money, 'utf8')
      second = await agent.run({ ...options, prompt: 'What is left?' }, first)
    }, 560_000)

    afterAll(async () => {
      await server?.close()
      const status = ws ? await hostStatus(join(ws, '.dsh')) : undefined
      if (status?.pid) process.kill(status.pid, 'SIGTERM')
    })

    const afterStep = (i: number) => agent.turns(server.requests)[i + 1]!
    const run: E2ERun = {
      get ws() { return ws },
      get server() { return server },
      get first() { return first },
      get second() { return second },
      get afterFirst() { return afterFirst },
      after: move => afterStep(stepOf.get(move)!),
      afterStep,
      afterStop: n => afterStep(stops + n - 1),
      payloads: () => readFileSync(log, 'utf8').trim().split('\n').map(line => JSON.parse(line) as Record<string, unknown>),
    }

    it('runs both sessions to their end', () => {
      expect(first.exitCode, first.stderr).toBe(0)
      expect(second.exitCode, second.stderr).toBe(0)
    })

    it('keeps the good edit, rolls back the type break and the sed -i, and undoes the test break at the turn\'s end, byte for byte', () => {
      expect(afterFirst).toBe(ORIGINAL.replace(ROUNDING, GOOD))
    })

    it('never says the guard was missing once it ran', () => {
      const all = server.requests.map(r => JSON.stringify(r.body ?? '')).join('\n')
      expect(all).not.toContain(MESSAGES.notVerified('').slice(0, 20))
    })

    own(run)
  })
}
