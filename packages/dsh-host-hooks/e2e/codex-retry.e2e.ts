/**
 * The real Codex CLI (pinned): an `apply_patch` that fails Codex's own
 * check (PreToolUse, no PostToolUse), then its retry in the same turn, a
 * type break: judged at once (the failed call is settled by the retry's
 * PreToolUse), not after the hook's timeout.
 */
import { cpSync, readdirSync, readFileSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureAgentCli } from '../../../scripts/agent-clis.ts'
import { ADAPTERS, installHooks, MESSAGES, writeHostSettings } from 'dsh-host-hooks'
import { readJsonl } from 'dsh-common'
import { responsesModel, responsesToolOutputs, runCodex, startModelServer, tempDir, type AgentRun, type ModelServer } from 'dsh-testkit'
import { e2eSkip, typeBreak } from '../tests/agent-e2e.ts'
import { ADD, ADD_BROKEN, killHost, repoRoot } from './claude-hooks.ts'

const skip = await e2eSkip('Codex')
const patch = (from: string, to: string) => `*** Begin Patch\n*** Update File: src/money.ts\n@@\n-${from}\n+${to}\n*** End Patch\n`

describe.skipIf(!!skip)('the real Codex CLI: a failing apply_patch, then its retry in the same turn', () => {
  let server: ModelServer
  let ws = ''
  let original = ''
  let run: AgentRun
  let ms = 0

  beforeAll(async () => {
    const bin = await ensureAgentCli('codex')
    ws = join(tempDir('dsh-codex-retry-'), 'shop')
    cpSync(join(repoRoot, 'examples/demo/workspace'), ws, { recursive: true })
    symlinkSync(join(repoRoot, 'node_modules'), join(ws, 'node_modules'), 'dir')
    installHooks(ADAPTERS.find(a => a.agent === 'codex')!, ws)
    // Each write's whole verdict in its own hook answer, as these runs assert it (background verdicts off in the workspace's host settings: the one switch every agent passes on to the host).
    writeHostSettings(join(ws, '.dsh'), { background: false })
    original = readFileSync(join(ws, 'src/money.ts'), 'utf8')
    server = await startModelServer(responsesModel([
      { text: 'Letting add take strings.', toolCalls: [{ name: 'apply_patch', arguments: patch('export function add(a: number, b: number): number {', ADD_BROKEN) }] },
      { text: 'Retrying with the right line.', toolCalls: [{ name: 'apply_patch', arguments: patch(ADD, ADD_BROKEN) }] },
      { text: 'Done.' },
    ]))
    const started = Date.now()
    run = await runCodex({ bin, workspace: ws, server, home: tempDir('dsh-codex-retry-home-'), prompt: 'Let add take strings.', timeoutMs: 400_000 })
    ms = Date.now() - started
    console.log(`codex failing patch + retry session: ${ms} ms`)
  }, 560_000)

  afterAll(async () => {
    await server?.close()
    await killHost(ws)
  })

  it('runs to its end', () => {
    expect(run.exitCode, run.stderr).toBe(0)
  })

  it('settles the failed patch as not run and judges the retry: rolled back', () => {
    expect(responsesToolOutputs(server.requests[1]!).find(o => o.callId === 'call_0_0')?.output).toMatch(/^apply_patch verification failed/)
    expect(responsesToolOutputs(server.requests[2]!).find(o => o.callId === 'call_1_0')?.output).toBe(typeBreak('apply_patch'))
    expect(readFileSync(join(ws, 'src/money.ts'), 'utf8')).toBe(original)
    const dir = join(ws, '.dsh/sessions')
    const log = readdirSync(dir).flatMap(f => readJsonl<{ type: string; data: { callId?: string; content?: string; isError?: boolean } }>(join(dir, f)).records)
    expect(log.find(e => e.type === 'tool/result' && e.data.callId === 'call_0_0')?.data).toMatchObject({ content: MESSAGES.noResult, isError: true })
  })
})
