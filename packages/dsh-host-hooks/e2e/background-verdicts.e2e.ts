/**
 * Background verdicts (on by default) in the real agent CLIs (Claude Code,
 * Codex, Gemini CLI; pinned, offline in a loopback-only namespace, on
 * scripted models), on the demo shop with one slow test (its verdict takes
 * seconds), strict verdicts: a good edit, then an edit the tests catch, then
 * a shell call (Claude Code reads the file before each edit and again before
 * the shell call). Each edit returns kept for now while its tests run; the
 * shell call is refused, told the edit was undone and why, and never runs;
 * the shell call the model makes again runs on the file as it was before
 * that edit.
 */
import { cpSync, existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureAgentCli, type AgentCliName } from '../../../scripts/agent-clis.ts'
import { ADAPTERS, hostStatus, installHooks, writeHostSettings } from 'dsh-host-hooks'
import {
  anthropicModel, anthropicToolResults, anthropicUserTexts, geminiFunctionResponses, geminiModel, isClaudeTurnRequest, isGeminiTurnRequest, responsesMessages,
  responsesModel, responsesToolOutputs, runClaude, runCodex, runGemini, startModelServer, tempDir, type AgentRun, type AgentStep, type AgentToolCall, type ModelReply,
  type ModelRequest, type ModelServer,
} from 'dsh-testkit'
import { e2eSkip } from '../tests/agent-e2e.ts'
import { repoRoot, ROUNDING } from './claude-hooks.ts'

/** A test of the discount that takes seconds: every verdict on src/money.ts waits for it. */
const SLOW_TEST = `import { expect, it } from 'vitest'
import { applyDiscount } from '../src/money.ts'

it('rounds a discount to the cent, slowly', async () => {
  await new Promise(resolve => setTimeout(resolve, 4000))
  expect(applyDiscount(999, 10)).toBe(899)
})
`
const PENDING = 'kept for now: its tests are running; the verdict comes before your next call'
const SUM = 'return a + b'
const SWAPPED = 'return b + a'
const CEIL = ROUNDING.replace('Math.round', 'Math.ceil')
/** The first shell call: refused, so never run (it would leave first.txt). */
const FIRST = 'cat src/money.ts > first.txt'
/** The shell call made again: runs, leaving what it saw. */
const AGAIN = 'cat src/money.ts > seen.txt'

/** How one agent CLI takes part. */
interface Agent {
  label: string
  cli: AgentCliName
  adapter: string
  /** Its edit tool's name in the suite's texts. */
  tool: string
  /** The model's reading of src/money.ts, where the CLI requires it before an edit. */
  read?(money: string): AgentStep
  edit(money: string, from: string, to: string): AgentToolCall
  shell(command: string): AgentToolCall
  model(steps: readonly AgentStep[]): (request: ModelRequest) => ModelReply
  turns(requests: readonly ModelRequest[]): ModelRequest[]
  run(options: { bin: string; workspace: string; prompt: string; server: ModelServer; home: string; timeoutMs: number }): Promise<AgentRun>
  prepareHome?(home: string, ws: string): void
  /** What the model was shown of its last call's result in `request`, and whether the agent marked it an error. */
  result(request: ModelRequest): { text: string; isError?: boolean }
  /** Whether `request` shows the model the pending line after an edit (as the agent shows a PostToolUse hook's context). */
  pending(request: ModelRequest): boolean
}

/** apply_patch replaces whole lines: a body line carries its indentation. */
const patch = (from: string, to: string) => `*** Begin Patch\n*** Update File: src/money.ts\n@@\n-  ${from}\n+  ${to}\n*** End Patch\n`

const AGENTS: Agent[] = [
  {
    label: 'Claude Code', cli: 'claude', adapter: 'claude-code', tool: 'Edit',
    read: money => ({ text: 'Reading money.', toolCalls: [{ name: 'Read', arguments: { file_path: money } }] }),
    edit: (money, from, to) => ({ name: 'Edit', arguments: { file_path: money, old_string: from, new_string: to } }),
    shell: command => ({ name: 'Bash', arguments: { command, description: 'Look at money' } }),
    model: anthropicModel,
    turns: requests => requests.filter(isClaudeTurnRequest),
    prepareHome: (home, ws) => writeFileSync(join(home, '.claude.json'), JSON.stringify({ projects: { [ws]: { hasTrustDialogAccepted: true } } })),
    run: options => runClaude({ ...options, extraArgs: ['--allowedTools', 'Bash'] }),
    result: request => {
      const r = anthropicToolResults(request).at(-1)!
      return { text: r.content, isError: r.isError }
    },
    pending: request => anthropicUserTexts(request).join('\n').includes(`PostToolUse:Edit hook additional context: ${PENDING}`),
  },
  {
    label: 'Codex', cli: 'codex', adapter: 'codex', tool: 'apply_patch',
    edit: (_money, from, to) => ({ name: 'apply_patch', arguments: patch(from, to) }),
    shell: cmd => ({ name: 'exec_command', arguments: { cmd } }),
    model: responsesModel,
    turns: requests => [...requests],
    run: options => runCodex(options),
    result: request => ({ text: responsesToolOutputs(request).at(-1)!.output }),
    // A PostToolUse hook's context is a developer message.
    pending: request => responsesMessages(request, 'developer').includes(PENDING),
  },
  {
    label: 'Gemini CLI', cli: 'gemini', adapter: 'gemini', tool: 'replace',
    edit: (_money, from, to) => ({ name: 'replace', arguments: { file_path: 'src/money.ts', old_string: from, new_string: to, instruction: 'edit' } }),
    shell: command => ({ name: 'run_shell_command', arguments: { command } }),
    model: geminiModel,
    turns: requests => requests.filter(isGeminiTurnRequest),
    run: options => runGemini(options),
    result: request => {
      const r = geminiFunctionResponses(request).at(-1)!.response
      return typeof r.error === 'string' ? { text: r.error, isError: true } : { text: String(r.output ?? '') }
    },
    // A hook's context follows the tool's result.
    pending: request => String(geminiFunctionResponses(request).at(-1)?.response.output ?? '').includes(`<hook_context>${PENDING}</hook_context>`),
  },
]

const skips = new Map<AgentCliName, string | undefined>()
for (const agent of AGENTS) skips.set(agent.cli, await e2eSkip(agent.label))

for (const agent of AGENTS) describe.skipIf(!!skips.get(agent.cli))(`the real ${agent.label} CLI: a verdict that comes in while the model thinks`, () => {
  let server: ModelServer
  let ws = ''
  let money = ''
  let good = ''
  let run: AgentRun
  /** The scripted step of each move (the request after it carries its result). */
  const at: Record<'good' | 'bad' | 'first' | 'again', number> = { good: 0, bad: 0, first: 0, again: 0 }

  beforeAll(async () => {
    const bin = await ensureAgentCli(agent.cli)
    ws = join(tempDir(`dsh-${agent.cli}-background-`), 'shop')
    cpSync(join(repoRoot, 'examples/demo/workspace'), ws, { recursive: true })
    writeFileSync(join(ws, 'tests/slow.test.ts'), SLOW_TEST)
    symlinkSync(join(repoRoot, 'node_modules'), join(ws, 'node_modules'), 'dir')
    const home = tempDir(`dsh-${agent.cli}-background-home-`)
    installHooks(ADAPTERS.find(a => a.agent === agent.adapter)!, ws, { home })
    // Background verdicts as users get them (the default); strict verdicts, so the test break is rolled back rather than kept for now.
    writeHostSettings(join(ws, '.dsh'), { verdicts: 'strict' })
    agent.prepareHome?.(home, ws)
    money = join(ws, 'src/money.ts')
    good = readFileSync(money, 'utf8').replace(SUM, SWAPPED)
    const read = agent.read ? [agent.read(money)] : []
    const steps: AgentStep[] = []
    const move = (name: keyof typeof at, step: AgentStep) => {
      at[name] = steps.length
      steps.push(step)
    }
    steps.push(...read)
    move('good', { text: 'Swapping the operands.', toolCalls: [agent.edit(money, SUM, SWAPPED)] })
    move('bad', { text: 'Rounding up.', toolCalls: [agent.edit(money, ROUNDING, CEIL)] })
    steps.push(...read)
    move('first', { text: 'Looking at it.', toolCalls: [agent.shell(FIRST)] })
    move('again', { text: 'Again.', toolCalls: [agent.shell(AGAIN)] })
    server = await startModelServer(agent.model([...steps, { text: 'Done.' }]))
    run = await agent.run({ bin, workspace: ws, server, home, prompt: 'Round the discount up.', timeoutMs: 300_000 })
  }, 560_000)

  afterAll(async () => {
    await server?.close()
    const status = ws ? await hostStatus(join(ws, '.dsh')) : undefined
    if (status?.pid) process.kill(status.pid, 'SIGKILL')
  })

  const after = (name: keyof typeof at) => agent.turns(server.requests)[at[name] + 1]!

  it('runs the session to its end', () => {
    expect(run.exitCode, run.stderr).toBe(0)
    expect(agent.turns(server.requests)).toHaveLength(at.again + 2)
  })

  it('returns each edit kept for now while its tests run', () => {
    expect(agent.pending(after('good'))).toBe(true)
    expect(agent.pending(after('bad'))).toBe(true)
    expect(agent.result(after('good')).text).not.toContain('rolled back')
  })

  it('refuses the shell call with the earlier edit undone and why; the one made again runs on the file as before that edit', () => {
    const refused = agent.result(after('first'))
    if (refused.isError !== undefined) expect(refused.isError).toBe(true)
    expect(refused.text).toContain(`not run: the verdict on your earlier ${agent.tool} of src/money.ts came in: rolled back: test failed after ${agent.tool} on src/money.ts`)
    expect(refused.text).toContain('the file is as before; call again')
    // The second shell call ran: what it saw is the good edit, without the bad one.
    expect(readFileSync(join(ws, 'seen.txt'), 'utf8')).toBe(good)
    expect(readFileSync(money, 'utf8')).toBe(good)
  })

  it('never ran the refused shell call; the one made again ran', () => {
    expect(existsSync(join(ws, 'first.txt'))).toBe(false)
    expect(agent.result(after('again')).text).not.toContain('not run')
  })
})
