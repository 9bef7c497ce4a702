/**
 * The suite guarding the real Codex CLI (the pinned npm package and its
 * native binary, run offline in a loopback-only network namespace) on a
 * scripted OpenAI Responses model: `dsh hooks install --agent codex` as a
 * user runs it, then one `codex exec` that makes a good edit, a
 * type-breaking edit and a test-breaking edit with `apply_patch` and a
 * `sed -i` through its shell tool, and the session resumed for a next prompt.
 */
import { cpSync, existsSync, readFileSync, symlinkSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureAgentCli } from '../../../scripts/agent-clis.ts'
import { registryReachable } from '../../../scripts/deepseek-harness.ts'
import { ADAPTERS, hostStatus, installHooks, MESSAGES } from 'dsh-host-hooks'
import {
  loopbackUnavailable, responsesMessages, responsesModel, responsesToolOutputs, runCodex, startModelServer, tempDir, type AgentRun,
  type ModelServer,
} from 'dsh-testkit'

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
const offline = (await registryReachable()) ? undefined : 'the npm registry is unreachable, so the pinned Codex CLI cannot be installed'
const skip = offline ?? (await loopbackUnavailable())
if (skip) console.warn(`Codex e2e skipped: ${skip}`)

const ORIGINAL = readFileSync(join(repoRoot, 'examples/demo/workspace/src/money.ts'), 'utf8')
const ROUNDING = '  return Math.round(amount * (1 - percent / 100))'
const GOOD = `${ROUNDING} // rounded to the cent`
const ADD = 'export function add(a: Cents, b: Cents): Cents {'

const patch = (from: string, to: string) => `*** Begin Patch\n*** Update File: src/money.ts\n@@\n-${from}\n+${to}\n*** End Patch\n`
const TYPE_BREAK = "rolled back: typecheck failed after apply_patch on src/money.ts\nsrc/money.ts:5 TS2322 Type 'string' is not assignable to type 'number'.\nsrc/cart.ts:10 TS2345 Argument of type 'number' is not assignable to parameter of type 'string'."
const SED_BREAK = TYPE_BREAK.replace('after apply_patch', 'after Bash')
const SUMMARY_HEAD = 'Proof chain — latest harness-verified result per check in this session (failures first):'

describe.skipIf(!!skip)('dsh hooks with the real Codex CLI', () => {
  let ws: string
  let server: ModelServer
  let first: AgentRun
  let second: AgentRun
  let afterFirst: string
  let thread: string

  beforeAll(async () => {
    const bin = await ensureAgentCli('codex')
    ws = join(tempDir('dsh-codex-e2e-'), 'shop')
    cpSync(join(repoRoot, 'examples/demo/workspace'), ws, { recursive: true })
    symlinkSync(join(repoRoot, 'node_modules'), join(ws, 'node_modules'), 'dir')
    installHooks(ADAPTERS.find(a => a.agent === 'codex')!, ws)

    server = await startModelServer(responsesModel([
      { text: 'Note the rounding.', toolCalls: [{ name: 'apply_patch', arguments: patch(ROUNDING, GOOD) }] },
      { text: 'Let add take strings.', toolCalls: [{ name: 'apply_patch', arguments: patch(ADD, 'export function add(a: Cents, b: string): Cents {') }] },
      { text: 'With sed then.', toolCalls: [{ name: 'exec_command', arguments: { cmd: "sed -i 's/b: Cents): Cents {/b: string): Cents {/' src/money.ts" } }] },
      { text: 'Discount adds instead.', toolCalls: [{ name: 'apply_patch', arguments: patch(GOOD, GOOD.replace('1 - percent', '1 + percent')) }] },
      { text: 'A new file, from a stale copy.', toolCalls: [{ name: 'apply_patch', arguments: patch('no such line', 'x').replace('Update File: src/money.ts', 'Update File: src/gone.ts') }] },
      { text: 'Done.' },
      { text: 'Nothing else.' },
    ]))
    const home = tempDir('dsh-codex-home-')
    first = await runCodex({ bin, workspace: ws, prompt: 'Tidy up the money module.', server, home, timeoutMs: 240_000 })
    afterFirst = readFileSync(join(ws, 'src/money.ts'), 'utf8')
    thread = first.events.find(e => e.type === 'thread.started')?.thread_id as string
    second = await runCodex({ bin, workspace: ws, prompt: 'What is left?', server, home, extraArgs: ['resume', thread], timeoutMs: 240_000 })
  }, 560_000)

  afterAll(async () => {
    await server?.close()
    const status = ws ? await hostStatus(join(ws, '.dsh')) : undefined
    if (status?.pid) process.kill(status.pid, 'SIGTERM')
  })

  it('runs both sessions to their end', () => {
    expect(first.exitCode, first.stderr).toBe(0)
    expect(second.exitCode, second.stderr).toBe(0)
    expect(first.events.filter(e => e.type === 'item.completed').map(e => (e.item as { text?: string }).text).at(-1)).toBe('Done.')
  })

  it('keeps the good patch and rolls back the type break, the sed -i and the test break byte for byte', () => {
    expect(afterFirst).toBe(ORIGINAL.replace(ROUNDING, GOOD))
  })

  it('gives the model the suite\'s rollback text in place of the tool\'s output', () => {
    const output = (request: number, callId: string) => responsesToolOutputs(server.requests[request]!).find(o => o.callId === callId)?.output
    expect(output(1, 'call_0_0')).toMatch(/^Exit code: 0\n[\s\S]*M src\/money\.ts/)
    expect(output(2, 'call_1_0')).toBe(TYPE_BREAK)
    expect(output(3, 'call_2_0')).toBe(SED_BREAK)
    expect(output(5, 'call_4_0')).toMatch(/^apply_patch verification failed/)
    expect(output(4, 'call_3_0')).toMatch(/^rolled back: test failed after apply_patch on src\/money\.ts\n/)
  })

  it('ends a call Codex gave no PostToolUse for (an apply_patch that failed its own checks) with the turn', () => {
    const log = readFileSync(join(ws, '.dsh', 'sessions', `${thread}.jsonl`), 'utf8').trim().split('\n').map(l => JSON.parse(l) as { type: string; data: Record<string, unknown> })
    expect(log.find(e => e.type === 'tool/result' && e.data.callId === 'call_4_0')?.data).toMatchObject({ name: 'apply_patch', content: MESSAGES.noResult, isError: true })
    expect(existsSync(join(ws, 'src/gone.ts'))).toBe(false)
  })

  it('shows the proof summary at the next prompt', () => {
    const resumed = server.requests.at(-1)!
    expect(responsesMessages(resumed, 'developer').some(m => m.startsWith(SUMMARY_HEAD))).toBe(true)
  })

  it('never says the guard was missing once it ran', () => {
    const all = server.requests.map(r => JSON.stringify(r.body ?? '')).join('\n')
    expect(all).not.toContain(MESSAGES.notVerified('').slice(0, 20))
  })
})
