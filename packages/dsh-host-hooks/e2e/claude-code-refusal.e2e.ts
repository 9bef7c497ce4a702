/**
 * The real Claude Code CLI (pinned) refuses a call after our PreToolUse
 * (`--disallowedTools "Bash(touch:*)"`): the type-breaking Edit that
 * follows is rolled back in the same session and in the next, and no hook
 * waits on the refused call.
 */
import { cpSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureAgentCli } from '../../../scripts/agent-clis.ts'
import { ADAPTERS, installHooks, MESSAGES, writeHostSettings } from 'dsh-host-hooks'
import { anthropicModel, anthropicToolResults, anthropicUserTexts, isClaudeTurnRequest, runClaude, startModelServer, tempDir, type AgentRun, type ModelServer } from 'dsh-testkit'
import { e2eSkip, typeBreak } from '../tests/agent-e2e.ts'
import { ADD, ADD_BROKEN, killHost, repoRoot } from './claude-hooks.ts'

const skip = await e2eSkip('Claude Code')

describe.skipIf(!!skip)('the real Claude Code CLI: a refused call, then a type-breaking Edit', () => {
  let server: ModelServer
  let ws = ''
  let money = ''
  let original = ''
  const runs: AgentRun[] = []
  const ms: number[] = []

  beforeAll(async () => {
    const bin = await ensureAgentCli('claude')
    ws = join(tempDir('dsh-claude-refusal-'), 'shop')
    cpSync(join(repoRoot, 'examples/demo/workspace'), ws, { recursive: true })
    symlinkSync(join(repoRoot, 'node_modules'), join(ws, 'node_modules'), 'dir')
    installHooks(ADAPTERS.find(a => a.agent === 'claude-code')!, ws)
    // Each write's whole verdict in its own hook answer, as these runs assert it (background verdicts off in the workspace's host settings: the one switch every agent passes on to the host).
    writeHostSettings(join(ws, '.dsh'), { background: false })
    money = join(ws, 'src/money.ts')
    original = readFileSync(money, 'utf8')
    const home = tempDir('dsh-claude-refusal-home-')
    writeFileSync(join(home, '.claude.json'), JSON.stringify({ projects: { [ws]: { hasTrustDialogAccepted: true } } }))
    const read = { text: 'Reading money.', toolCalls: [{ name: 'Read', arguments: { file_path: money } }] }
    const edit = { text: 'Letting add take strings.', toolCalls: [{ name: 'Edit', arguments: { file_path: money, old_string: ADD, new_string: ADD_BROKEN } }] }
    server = await startModelServer(anthropicModel([
      read,
      { text: 'Touching a marker.', toolCalls: [{ name: 'Bash', arguments: { command: 'touch src/marker.ts', description: 'Touch' } }] },
      edit, { text: 'Done.' },
      read, edit, { text: 'Done.' },
    ]))
    const options = { bin, workspace: ws, server, home, extraArgs: ['--disallowedTools', 'Bash(touch:*)'], timeoutMs: 240_000 }
    for (const prompt of ['Let add take strings.', 'Try again.']) {
      const started = Date.now()
      runs.push(await runClaude({ ...options, prompt }))
      ms.push(Date.now() - started)
    }
    console.log(`claude refusal sessions (ms): ${ms.join(', ')}`)
  }, 560_000)

  afterAll(async () => {
    await server?.close()
    await killHost(ws)
  })

  const results = () => server.requests.filter(isClaudeTurnRequest).map(r => anthropicToolResults(r).at(-1))

  it('runs both sessions to their end', () => {
    expect(runs.map(r => r.exitCode)).toEqual([0, 0])
  })

  it('refuses the touch, then rolls back the type break in the same session and in the next', () => {
    const seen = results()
    expect(seen[2]?.isError).toBe(true) // the refusal
    // Claude Code shows a PostToolUse block's reason beside the tool's result.
    const texts = (i: number) => anthropicUserTexts(server.requests.filter(isClaudeTurnRequest)[i]!).join('\n')
    expect(texts(3)).toContain(`: ${typeBreak('Edit')}`)
    expect(texts(6)).toContain(`: ${typeBreak('Edit')}`)
    expect(readFileSync(money, 'utf8')).toBe(original)
  })

  it('never tells the model the guard was missing', () => {
    const all = server.requests.map(r => JSON.stringify(r.body ?? '')).join('\n')
    expect(all).not.toContain(MESSAGES.notVerified('').slice(0, 20))
  })
})
