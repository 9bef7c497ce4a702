/**
 * The suite guarding the real Gemini CLI (the pinned npm package, run
 * offline in a loopback-only network namespace) on a scripted Gemini API
 * model: `dsh hooks install --agent gemini` as a user runs it, then one
 * session that makes a good edit, a type-breaking edit, a `sed -i` through
 * its shell tool, a test-breaking edit and a checkpoint (the suite's MCP
 * tool) with a claim never run, and the session resumed for a next prompt.
 */
import { cpSync, readFileSync, symlinkSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureAgentCli } from '../../../scripts/agent-clis.ts'
import { registryReachable } from '../../../scripts/deepseek-harness.ts'
import { ADAPTERS, hostStatus, installHooks, MESSAGES } from 'dsh-host-hooks'
import {
  geminiFunctionResponses, geminiModel, geminiUserTexts, isGeminiTurnRequest, loopbackUnavailable, runGemini, startModelServer, tempDir,
  type AgentRun, type ModelRequest, type ModelServer,
} from 'dsh-testkit'

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
const offline = (await registryReachable()) ? undefined : 'the npm registry is unreachable, so the pinned Gemini CLI cannot be installed'
const skip = offline ?? (await loopbackUnavailable())
if (skip) console.warn(`Gemini CLI e2e skipped: ${skip}`)

const ORIGINAL = readFileSync(join(repoRoot, 'examples/demo/workspace/src/money.ts'), 'utf8')
const ROUNDING = 'return Math.round(amount * (1 - percent / 100))'
const GOOD = `${ROUNDING} // rounded to the cent`
const ADD = 'export function add(a: Cents, b: Cents): Cents {'

const TYPE_BREAK = "rolled back: typecheck failed after replace on src/money.ts\nsrc/money.ts:5 TS2322 Type 'string' is not assignable to type 'number'.\nsrc/cart.ts:10 TS2345 Argument of type 'number' is not assignable to parameter of type 'string'."
const SED_BREAK = TYPE_BREAK.replace('after replace', 'after run_shell_command')
const SUMMARY_HEAD = 'Proof chain — latest harness-verified result per check in this session (failures first):'

describe.skipIf(!!skip)('dsh hooks with the real Gemini CLI', () => {
  let ws: string
  let server: ModelServer
  let first: AgentRun
  let second: AgentRun
  let afterFirst: string

  const turns = (): ModelRequest[] => server.requests.filter(isGeminiTurnRequest)
  const lastResponse = (turn: number) => geminiFunctionResponses(turns()[turn]!).at(-1)

  beforeAll(async () => {
    const bin = await ensureAgentCli('gemini')
    ws = join(tempDir('dsh-gemini-e2e-'), 'shop')
    cpSync(join(repoRoot, 'examples/demo/workspace'), ws, { recursive: true })
    symlinkSync(join(repoRoot, 'node_modules'), join(ws, 'node_modules'), 'dir')
    installHooks(ADAPTERS.find(a => a.agent === 'gemini')!, ws)

    const replace = (from: string, to: string) => ({ name: 'replace', arguments: { file_path: 'src/money.ts', old_string: from, new_string: to, instruction: 'edit' } })
    server = await startModelServer(geminiModel([
      { text: 'Note the rounding.', toolCalls: [replace(ROUNDING, GOOD)] },
      { text: 'Let add take strings.', toolCalls: [replace(ADD, 'export function add(a: Cents, b: string): Cents {')] },
      { text: 'With sed then.', toolCalls: [{ name: 'run_shell_command', arguments: { command: "sed -i 's/b: Cents): Cents {/b: string): Cents {/' src/money.ts" } }] },
      { text: 'Discount adds instead.', toolCalls: [replace(GOOD, GOOD.replace('1 - percent', '1 + percent'))] },
      { text: 'Checkpoint.', toolCalls: [{ name: 'mcp_dsh_checkpoint', arguments: { summary: 'Noted the rounding in src/money.ts.', verified: ['receipts print right — node scripts/receipt.mjs'], failed: [], next: ['Let add take strings.'] } }] },
      { text: 'Done.' },
      { text: 'Nothing else.' },
    ]))
    const home = tempDir('dsh-gemini-home-')
    first = await runGemini({ bin, workspace: ws, prompt: 'Tidy up the money module.', server, home, timeoutMs: 240_000 })
    afterFirst = readFileSync(join(ws, 'src/money.ts'), 'utf8')
    second = await runGemini({ bin, workspace: ws, prompt: 'What is left?', server, home, extraArgs: ['--resume', 'latest'], timeoutMs: 240_000 })
  }, 560_000)

  afterAll(async () => {
    await server?.close()
    const status = ws ? await hostStatus(join(ws, '.dsh')) : undefined
    if (status?.pid) process.kill(status.pid, 'SIGTERM')
  })

  it('runs both sessions to their end', () => {
    expect(first.exitCode, first.stderr).toBe(0)
    expect(second.exitCode, second.stderr).toBe(0)
    expect(first.events.at(-1)).toMatchObject({ type: 'result', status: 'success' })
  })

  it('keeps the good edit and rolls back the type break, the sed -i and the test break byte for byte', () => {
    expect(afterFirst).toBe(ORIGINAL.replace(ROUNDING, GOOD))
  })

  it('gives the model the suite\'s rollback text in place of the tool\'s result', () => {
    expect(lastResponse(1)).toMatchObject({ name: 'replace', response: { output: expect.stringContaining('Successfully modified file') } })
    expect(lastResponse(2)).toEqual({ name: 'replace', response: { error: TYPE_BREAK } })
    expect(lastResponse(3)).toEqual({ name: 'run_shell_command', response: { error: SED_BREAK } })
    expect(lastResponse(4)).toMatchObject({ name: 'replace', response: { error: expect.stringMatching(/^rolled back: test failed after replace on src\/money\.ts\n/) } })
  })

  it('marks the checkpoint\'s claim that nothing ran', () => {
    const output = String(lastResponse(5)!.response.output)
    expect(output).toContain([
      'Recorded as given; 1 claim marked for the next agent, and one question:',
      '- "receipts print right — node scripts/receipt.mjs": `node scripts/receipt.mjs` not seen run in this session — run it or drop the claim.',
    ].join('\n'))
  })

  it('shows the proof summary at the next prompt', () => {
    const resumed = turns().at(-1)!
    expect(geminiUserTexts(resumed).join('\n')).toContain(`<hook_context>${SUMMARY_HEAD}`)
  })

  it('never says the guard was missing once it ran', () => {
    const all = server.requests.map(r => JSON.stringify(r.body ?? '')).join('\n')
    expect(all).not.toContain(MESSAGES.notVerified('').slice(0, 20))
  })
})
