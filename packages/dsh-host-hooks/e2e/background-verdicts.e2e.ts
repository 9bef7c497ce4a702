/**
 * Background verdicts in the real Claude Code CLI (pinned, offline in a
 * loopback-only namespace, on a scripted model), on the demo shop with one
 * slow test (its verdict takes seconds), strict verdicts: a good Edit, then an Edit the tests
 * catch, then a Read and a Bash. Each Edit returns kept for now while its
 * tests run; the Bash is refused, told the Edit was undone and why, and the
 * Bash the model makes again runs on the file as it was before that Edit.
 */
import { cpSync, existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureAgentCli } from '../../../scripts/agent-clis.ts'
import { ADAPTERS, installHooks, writeHostSettings } from 'dsh-host-hooks'
import { anthropicModel, anthropicToolResults, anthropicUserTexts, isClaudeTurnRequest, runClaude, startModelServer, tempDir, type AgentRun, type ModelServer } from 'dsh-testkit'
import { e2eSkip } from '../tests/agent-e2e.ts'
import { killHost, repoRoot, ROUNDING } from './claude-hooks.ts'

const skip = await e2eSkip('Claude Code')

/** A test of the discount that takes seconds: every verdict on src/money.ts waits for it. */
const SLOW_TEST = `import { expect, it } from 'vitest'
import { applyDiscount } from '../src/money.ts'

it('rounds a discount to the cent, slowly', async () => {
  await new Promise(resolve => setTimeout(resolve, 4000))
  expect(applyDiscount(999, 10)).toBe(899)
})
`
const PENDING = 'kept for now: its tests are running; the verdict comes before your next call'
const CEIL = ROUNDING.replace('Math.round', 'Math.ceil')
const BASH = { command: 'cat src/money.ts > seen.txt', description: 'Look at money' }
/** The first Bash: refused, so never run (it would leave first.txt). */
const FIRST_BASH = { command: 'cat src/money.ts > first.txt', description: 'Look at money' }

describe.skipIf(!!skip)('the real Claude Code CLI: a verdict that comes in while the model thinks', () => {
  let server: ModelServer
  let ws = ''
  let money = ''
  let good = ''
  let run: AgentRun

  beforeAll(async () => {
    const bin = await ensureAgentCli('claude')
    ws = join(tempDir('dsh-claude-background-'), 'shop')
    cpSync(join(repoRoot, 'examples/demo/workspace'), ws, { recursive: true })
    writeFileSync(join(ws, 'tests/slow.test.ts'), SLOW_TEST)
    symlinkSync(join(repoRoot, 'node_modules'), join(ws, 'node_modules'), 'dir')
    installHooks(ADAPTERS.find(a => a.agent === 'claude-code')!, ws)
    // Background verdicts as users get them (the default); strict verdicts, so the test break is rolled back rather than kept for now.
    writeHostSettings(join(ws, '.dsh'), { verdicts: 'strict' })
    money = join(ws, 'src/money.ts')
    good = readFileSync(money, 'utf8').replace('return a + b', 'return b + a')
    const home = tempDir('dsh-claude-background-home-')
    writeFileSync(join(home, '.claude.json'), JSON.stringify({ projects: { [ws]: { hasTrustDialogAccepted: true } } }))
    const read = { text: 'Reading money.', toolCalls: [{ name: 'Read', arguments: { file_path: money } }] }
    server = await startModelServer(anthropicModel([
      read,
      { text: 'Swapping the operands.', toolCalls: [{ name: 'Edit', arguments: { file_path: money, old_string: 'return a + b', new_string: 'return b + a' } }] },
      { text: 'Rounding up.', toolCalls: [{ name: 'Edit', arguments: { file_path: money, old_string: ROUNDING, new_string: CEIL } }] },
      read,
      { text: 'Looking at it.', toolCalls: [{ name: 'Bash', arguments: FIRST_BASH }] },
      { text: 'Again.', toolCalls: [{ name: 'Bash', arguments: BASH }] },
      { text: 'Done.' },
    ]))
    run = await runClaude({ bin, workspace: ws, server, home, prompt: 'Round the discount up.', extraArgs: ['--allowedTools', 'Bash'], timeoutMs: 300_000 })
  }, 560_000)

  afterAll(async () => {
    await server?.close()
    await killHost(ws)
  })

  const requests = () => server.requests.filter(isClaudeTurnRequest)
  const texts = (i: number) => anthropicUserTexts(requests()[i]!).join('\n')

  it('runs the session to its end', () => {
    expect(run.exitCode).toBe(0)
    expect(run.events.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'Done.' })
  })

  it('returns each Edit kept for now while its tests run', () => {
    // After the good Edit (request 2) and the bad one (request 3): the pending line as the PostToolUse context.
    expect(texts(2)).toContain(`PostToolUse:Edit hook additional context: ${PENDING}`)
    expect(texts(3)).toContain(`PostToolUse:Edit hook additional context: ${PENDING}`)
    expect(texts(2)).not.toContain('rolled back')
  })

  it('refuses the Bash with the earlier Edit undone and why; the Bash made again runs on the file as before that Edit', () => {
    const refused = anthropicToolResults(requests()[5]!).at(-1)!
    expect(refused.isError).toBe(true)
    expect(refused.content).toContain('not run: the verdict on your earlier Edit of src/money.ts came in: rolled back: test failed after Edit on src/money.ts')
    expect(refused.content).toContain('the file is as before; call again')
    // The second Bash ran: what it saw is the good Edit, without the bad one.
    expect(readFileSync(join(ws, 'seen.txt'), 'utf8')).toBe(good)
    expect(readFileSync(money, 'utf8')).toBe(good)
  })

  it('never ran the refused Bash; the one made again ran', () => {
    expect(existsSync(join(ws, 'first.txt'))).toBe(false)
    expect(anthropicToolResults(requests()[6]!).at(-1)!.isError).toBeFalsy()
  })
})
