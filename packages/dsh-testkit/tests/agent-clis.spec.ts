/**
 * What the real Codex CLI and Gemini CLI send their hooks, and how a hook's
 * answer reaches the model — the facts the hooks host's adapters rely on,
 * pinned against the CLIs' pinned versions. Each CLI runs offline (a
 * loopback-only network namespace) on a scripted model server of this kit,
 * with a shell hook that records every payload and blocks every tool result.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ensureAgentCli } from '../../../scripts/agent-clis.ts'
import { registryReachable } from '../../../scripts/deepseek-harness.ts'
import {
  geminiFunctionResponses, geminiModel, geminiUserTexts, isGeminiTurnRequest, loopbackUnavailable, responsesMessages, responsesModel,
  responsesToolOutputs, runCodex, runGemini, startModelServer, tempDir, type ModelServer,
} from 'dsh-testkit'

const offline = (await registryReachable()) ? undefined : 'the npm registry is unreachable, so the pinned CLIs cannot be installed'
const skip = offline ?? (await loopbackUnavailable())
if (skip) console.warn(`agent CLI protocol tests skipped: ${skip}`)

/** A hook that appends its payload to payloads.jsonl and answers by event. */
function recordingHook(dir: string, answers: Record<string, object>): string {
  const file = join(dir, 'hook.sh')
  const cases = Object.entries(answers).map(([event, answer]) => `  *'"hook_event_name":"${event}"'*) echo '${JSON.stringify(answer)}' ;;`).join('\n')
  writeFileSync(file, `#!/bin/sh\nin=$(cat)\nprintf '%s\\n' "$in" >> ${join(dir, 'payloads.jsonl')}\ncase "$in" in\n${cases}\n  *) echo '{}' ;;\nesac\n`)
  chmodSync(file, 0o755)
  return file
}

function payloads(dir: string): Record<string, unknown>[] {
  return readFileSync(join(dir, 'payloads.jsonl'), 'utf8').trim().split('\n').map(line => JSON.parse(line) as Record<string, unknown>)
}

const BLOCK = 'rolled back: scripted reason'
let server: ModelServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

describe.skipIf(skip)('Codex CLI hooks (pinned @openai/codex, offline)', () => {
  let bin: string
  beforeAll(async () => {
    bin = await ensureAgentCli('codex')
  }, 600_000)

  it('apply_patch carries the patch in tool_input.command, the shell tool is Bash; a PostToolUse block replaces the tool output', async () => {
    const dir = tempDir('dsh-codex-')
    const workspace = join(dir, 'ws')
    mkdirSync(join(workspace, '.codex'), { recursive: true })
    const hook = recordingHook(dir, {
      PostToolUse: { decision: 'block', reason: BLOCK, hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: 'post context' } },
      UserPromptSubmit: { hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: 'prompt context' } },
    })
    const command = [{ type: 'command', command: hook }]
    writeFileSync(join(workspace, '.codex', 'hooks.json'), JSON.stringify({
      hooks: { PreToolUse: [{ matcher: '.*', hooks: command }], PostToolUse: [{ matcher: '.*', hooks: command }], SessionStart: [{ hooks: command }], UserPromptSubmit: [{ hooks: command }] },
    }))
    const patch = '*** Begin Patch\n*** Add File: a.txt\n+one\n*** End Patch\n'
    server = await startModelServer(responsesModel([
      { text: 'Adding a.', toolCalls: [{ name: 'apply_patch', arguments: patch }] },
      { toolCalls: [{ name: 'exec_command', arguments: { cmd: 'echo two > b.txt' } }] },
      { text: 'Done.' },
    ]))
    const run = await runCodex({ bin, workspace, prompt: 'add a', server })
    expect(run.exitCode, run.stderr).toBe(0)

    const seen = payloads(dir)
    expect(seen.map(p => `${String(p.hook_event_name)}${p.tool_name ? ` ${String(p.tool_name)}` : ''}`)).toEqual([
      'SessionStart', 'UserPromptSubmit', 'PreToolUse apply_patch', 'PostToolUse apply_patch', 'PreToolUse Bash', 'PostToolUse Bash',
    ])
    const session = seen[0]!.session_id
    expect(seen.every(p => p.session_id === session && p.cwd === workspace)).toBe(true)
    expect(seen[2]).toMatchObject({ tool_input: { command: patch }, tool_use_id: 'call_0_0' })
    expect(seen[3]).toMatchObject({ tool_input: { command: patch }, tool_response: expect.stringContaining('A a.txt') })
    expect(seen[4]).toMatchObject({ tool_input: { command: 'echo two > b.txt' }, tool_use_id: 'call_1_0' })
    expect(typeof seen[5]!.tool_response).toBe('string')

    const [first, second, third] = server.requests
    expect(responsesMessages(first!, 'developer')).toContain('prompt context')
    expect(responsesToolOutputs(second!)).toEqual([{ callId: 'call_0_0', output: BLOCK }])
    expect(responsesMessages(second!, 'developer')).toContain('post context')
    expect(responsesToolOutputs(third!).at(-1)).toEqual({ callId: 'call_1_0', output: BLOCK })
  })
})

describe.skipIf(skip)('Gemini CLI hooks (pinned @google/gemini-cli, offline)', () => {
  let bin: string
  beforeAll(async () => {
    bin = await ensureAgentCli('gemini')
  }, 600_000)

  it('write_file, replace and run_shell_command reach BeforeTool/AfterTool; an AfterTool block replaces the function response', async () => {
    const dir = tempDir('dsh-gemini-')
    const workspace = join(dir, 'ws')
    mkdirSync(join(workspace, '.gemini'), { recursive: true })
    const hook = recordingHook(dir, {
      AfterTool: { decision: 'block', reason: BLOCK },
      BeforeAgent: { hookSpecificOutput: { hookEventName: 'BeforeAgent', additionalContext: 'agent context' } },
    })
    const command = [{ type: 'command', command: hook, timeout: 60_000 }]
    writeFileSync(join(workspace, '.gemini', 'settings.json'), JSON.stringify({
      hooks: { BeforeTool: [{ matcher: '.*', hooks: command }], AfterTool: [{ matcher: '.*', hooks: command }], SessionStart: [{ hooks: command }], BeforeAgent: [{ hooks: command }] },
    }))
    server = await startModelServer(geminiModel([
      { text: 'Writing a.', toolCalls: [{ name: 'write_file', arguments: { file_path: 'a.txt', content: 'one\n' } }] },
      { toolCalls: [{ name: 'replace', arguments: { file_path: 'a.txt', old_string: 'one', new_string: 'uno', instruction: 'rename' } }] },
      { toolCalls: [{ name: 'run_shell_command', arguments: { command: 'echo two > b.txt' } }] },
      { text: 'Done.' },
    ]))
    const run = await runGemini({ bin, workspace, prompt: 'add a', server })
    expect(run.exitCode, run.stderr).toBe(0)

    const seen = payloads(dir)
    expect(seen.map(p => `${String(p.hook_event_name)}${p.tool_name ? ` ${String(p.tool_name)}` : ''}`)).toEqual([
      'SessionStart', 'BeforeAgent', 'BeforeTool write_file', 'AfterTool write_file', 'BeforeTool replace', 'AfterTool replace',
      'BeforeTool run_shell_command', 'AfterTool run_shell_command',
    ])
    expect(seen[2]).toMatchObject({ tool_input: { file_path: 'a.txt', content: 'one\n' }, cwd: workspace })
    expect(seen[4]).toMatchObject({ tool_input: { file_path: 'a.txt', old_string: 'one', new_string: 'uno' } })
    expect(seen[6]).toMatchObject({ tool_input: { command: 'echo two > b.txt' } })

    const turns = server.requests.filter(isGeminiTurnRequest)
    expect(geminiUserTexts(turns[0]!)).toContain('<hook_context>agent context</hook_context>')
    expect(geminiFunctionResponses(turns[1]!)).toEqual([{ name: 'write_file', response: { error: BLOCK } }])
    expect(geminiFunctionResponses(turns[3]!).at(-1)).toEqual({ name: 'run_shell_command', response: { error: BLOCK } })
  })
})
