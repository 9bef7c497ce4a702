/**
 * The suite guarding the real Claude Code CLI (the pinned npm package, run
 * offline in a loopback-only network namespace) on a scripted Anthropic
 * Messages model: `dsh hooks install` as a user runs it, then one session
 * that makes a good edit, a type-breaking edit, a `sed -i` through Bash, a
 * test-breaking edit and a checkpoint with a claim never run, and the same
 * session resumed for a next prompt.
 */
import { cpSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureAgentCli } from '../../../scripts/agent-clis.ts'
import { registryReachable } from '../../../scripts/deepseek-harness.ts'
import { ADAPTERS, hostStatus, installHooks, MESSAGES } from 'dsh-host-hooks'
import {
  anthropicModel, anthropicToolResults, anthropicUserTexts, isClaudeTurnRequest, loopbackUnavailable, runClaude, startModelServer, tempDir,
  type AgentRun, type ModelRequest, type ModelServer,
} from 'dsh-testkit'

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
const offline = (await registryReachable()) ? undefined : 'the npm registry is unreachable, so the pinned Claude Code cannot be installed'
const skip = offline ?? (await loopbackUnavailable())
if (skip) console.warn(`Claude Code e2e skipped: ${skip}`)

const ORIGINAL = readFileSync(join(repoRoot, 'examples/demo/workspace/src/money.ts'), 'utf8')
const ROUNDING = 'return Math.round(amount * (1 - percent / 100))'
const GOOD = `${ROUNDING} // rounded to the cent`
const ADD = 'export function add(a: Cents, b: Cents): Cents {'

const TYPE_BREAK = "rolled back: typecheck failed after Edit on src/money.ts\nsrc/money.ts:5 TS2322 Type 'string' is not assignable to type 'number'.\nsrc/cart.ts:10 TS2345 Argument of type 'number' is not assignable to parameter of type 'string'."
const SED_BREAK = TYPE_BREAK.replace('after Edit', 'after Bash')

describe.skipIf(!!skip)('dsh hooks with the real Claude Code CLI', () => {
  let ws: string
  let money: string
  let server: ModelServer
  let first: AgentRun
  let second: AgentRun
  let afterGood: string

  /** The turn requests (not side requests) the model got, in order. */
  const turns = (): ModelRequest[] => server.requests.filter(isClaudeTurnRequest)

  beforeAll(async () => {
    const bin = await ensureAgentCli('claude')
    ws = join(tempDir('dsh-claude-e2e-'), 'shop')
    cpSync(join(repoRoot, 'examples/demo/workspace'), ws, { recursive: true })
    symlinkSync(join(repoRoot, 'node_modules'), join(ws, 'node_modules'), 'dir')
    money = join(ws, 'src/money.ts')
    installHooks(ADAPTERS.find(a => a.agent === 'claude-code')!, ws)
    // The workspace is trusted (else Claude Code ignores its permissions.allow), as after its trust dialog.
    const home = tempDir('dsh-claude-home-')
    writeFileSync(join(home, '.claude.json'), JSON.stringify({ projects: { [ws]: { hasTrustDialogAccepted: true } } }))

    server = await startModelServer(anthropicModel([
      { text: 'Reading money.', toolCalls: [{ name: 'Read', arguments: { file_path: money } }] },
      { text: 'Note the rounding.', toolCalls: [{ name: 'Edit', arguments: { file_path: money, old_string: ROUNDING, new_string: GOOD } }] },
      { text: 'Let add take strings.', toolCalls: [{ name: 'Edit', arguments: { file_path: money, old_string: ADD, new_string: 'export function add(a: Cents, b: string): Cents {' } }] },
      { text: 'With sed then.', toolCalls: [{ name: 'Bash', arguments: { command: "sed -i 's/b: Cents): Cents {/b: string): Cents {/' src/money.ts", description: 'Change add' } }] },
      { text: 'Reading it again.', toolCalls: [{ name: 'Read', arguments: { file_path: money } }] },
      { text: 'Discount adds instead.', toolCalls: [{ name: 'Edit', arguments: { file_path: money, old_string: GOOD, new_string: 'return Math.round(amount * (1 + percent / 100)) // rounded to the cent' } }] },
      { text: 'Checkpoint.', toolCalls: [{ name: 'mcp__dsh__checkpoint', arguments: { summary: 'Noted the rounding in src/money.ts.', verified: ['receipts print right — node scripts/receipt.mjs'], failed: [], next: ['Let add take strings.'] } }] },
      { text: 'Done.' },
      { text: 'Nothing else.' },
    ]))
    const run = (prompt: string, extra: string[] = []) => runClaude({ bin, workspace: ws, prompt, server, home, extraArgs: ['--allowedTools', 'Bash', ...extra], timeoutMs: 240_000 })
    first = await run('Tidy up the money module.')
    afterGood = readFileSync(money, 'utf8')
    const sessionId = first.events.find(e => e.type === 'result')?.session_id as string
    second = await run('What is left?', ['--resume', sessionId])
  }, 560_000)

  afterAll(async () => {
    await server?.close()
    const status = ws ? await hostStatus(join(ws, '.dsh')) : undefined
    if (status?.pid) process.kill(status.pid, 'SIGTERM')
  })

  it('runs both sessions to their end', () => {
    expect(first.exitCode, first.stderr).toBe(0)
    expect(second.exitCode, second.stderr).toBe(0)
    expect(first.events.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'Done.' })
  })

  it('keeps the good edit and rolls back the type break, the sed -i and the test break byte for byte', () => {
    expect(afterGood).toBe(ORIGINAL.replace(ROUNDING, GOOD))
  })

  it('tells the model why, with the suite\'s own rollback text, in its next request', () => {
    const requests = turns()
    const textsOf = (i: number) => anthropicUserTexts(requests[i]!).join('\n')
    // Request 3 follows the type-breaking Edit, request 4 the sed -i, request 6 the test-breaking Edit.
    expect(textsOf(3)).toContain(`: ${TYPE_BREAK}`)
    expect(textsOf(4)).toContain(`: ${SED_BREAK}`)
    expect(textsOf(6)).toMatch(/: rolled back: test failed after Edit on src\/money\.ts\n/)
    // The good edit's result is the tool's own.
    expect(anthropicToolResults(requests[2]!).at(-1)!.content).toMatch(/has been updated successfully/)
    expect(textsOf(2)).not.toContain('rolled back')
  })

  it('marks the checkpoint\'s claim that nothing ran', () => {
    const result = anthropicToolResults(turns()[7]!).at(-1)!
    expect(result.content).toBe([
      'Recorded as given; 1 claim marked for the next agent, and one question:',
      '- "receipts print right — node scripts/receipt.mjs": `node scripts/receipt.mjs` not seen run in this session — run it or drop the claim.',
      '- failed is empty, but 3 commands failed in this session: `typecheck of Edit on src/money.ts` (rolled back, later passed), `typecheck of Bash on src/money.ts` (rolled back), `test of Edit on src/money.ts` (rolled back). Did something not work? If so, checkpoint again with it in failed.',
    ].join('\n'))
  })

  it('shows the proof summary at the next prompt', () => {
    const resumed = turns().at(-1)!
    const messages = JSON.stringify((resumed.body as { messages: unknown }).messages)
    expect(messages).toContain('UserPromptSubmit hook additional context: Proof chain — latest harness-verified result per check in this session (failures first):')
  })

  it('never says the guard was missing once it ran', () => {
    const all = server.requests.map(r => JSON.stringify(r.body ?? '')).join('\n')
    expect(all).not.toContain(MESSAGES.notVerified('').slice(0, 20))
  })
})
