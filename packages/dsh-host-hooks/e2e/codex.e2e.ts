/**
 * The suite guarding the real Codex CLI (the pinned npm package and its
 * native binary) in the shared scenario (`agent-e2e.ts`) on a scripted
 * OpenAI Responses model: `codex exec` edits with `apply_patch`, runs the
 * `sed -i` through its shell tool, and sends one more patch that fails
 * Codex's own checks (no PostToolUse for it); its Stop is blocked while the
 * test break is open. A recording hook next to
 * dsh's pins the hook payloads the Codex adapter reads.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { MESSAGES } from 'dsh-host-hooks'
import { responsesMessages, responsesModel, responsesToolOutputs, runCodex } from 'dsh-testkit'
import { describeAgentE2E, e2eSkip, GOOD, KEPT_FOR_NOW, ROUNDING, SED, stopRefused, SUMMARY_HEAD, typeBreak, undoneAtTurnEnd } from '../tests/agent-e2e.ts'

const skip = await e2eSkip('Codex')

/** apply_patch replaces whole lines: a body line carries its indentation. */
const line = (text: string) => (text.startsWith('export') ? text : `  ${text}`)
const patch = (from: string, to: string, file = 'src/money.ts') => `*** Begin Patch\n*** Update File: ${file}\n@@\n-${line(from)}\n+${line(to)}\n*** End Patch\n`

describeAgentE2E({
  label: 'Codex',
  cli: 'codex',
  adapter: 'codex',
  edit: (from, to) => ({ name: 'apply_patch', arguments: patch(from, to) }),
  shell: cmd => ({ name: 'exec_command', arguments: { cmd } }),
  script: () => [
    'good', 'type-break', 'sed', 'test-break',
    { text: 'A new file, from a stale copy.', toolCalls: [{ name: 'apply_patch', arguments: patch('no such line', 'x', 'src/gone.ts') }] },
  ],
  model: responsesModel,
  turns: requests => [...requests],
  run: (options, resume) => {
    const thread = resume?.events.find(e => e.type === 'thread.started')?.thread_id as string | undefined
    return runCodex({ ...options, ...(thread ? { extraArgs: ['resume', thread] } : {}), timeoutMs: 240_000 })
  },
  record: {
    file: '.codex/hooks.json', events: ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse'], timeoutScale: 1,
    answers: { PostToolUse: { hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: 'recorded' } } },
  },
}, skip, run => {
  const output = (i: number) => responsesToolOutputs(run.afterStep(i)).find(o => o.callId === `call_${i}_0`)?.output

  it('ends the first session with the model\'s last word', () => {
    expect(run.first.events.filter(e => e.type === 'item.completed').map(e => (e.item as { text?: string }).text).at(-1)).toBe('Done.')
  })

  it('gives the model the suite\'s rollback text in place of the tool\'s output', () => {
    expect(output(0)).toMatch(/^Exit code: 0\n[\s\S]*M src\/money\.ts/)
    expect(output(1)).toBe(typeBreak('apply_patch'))
    expect(output(2)).toBe(typeBreak('Bash'))
    expect(output(4)).toMatch(/^apply_patch verification failed/)
  })

  it('keeps the test break for now: the tool\'s output stands, the suite\'s text is a developer message', () => {
    expect(output(3)).toMatch(/^Exit code: 0\n[\s\S]*M src\/money\.ts/)
    expect(responsesMessages(run.afterStep(3), 'developer')).toContain(KEPT_FOR_NOW)
  })

  it('blocks the Stop once with the open test break (its reason the next user message, HTML-escaped by Codex); the model answers without writing, so its next Stop undoes it, said at the next session', () => {
    const escaped = (text: string) => text.replaceAll('>', '&gt;')
    const prompt = responsesMessages(run.afterStop(1), 'user').at(-1)!
    expect(prompt.startsWith('<hook_prompt hook_run_id="stop:'), prompt).toBe(true)
    expect(prompt.endsWith(`">${escaped(stopRefused(1, 'apply_patch'))}</hook_prompt>`), prompt).toBe(true)
    expect(run.server.requests.map(r => JSON.stringify(r.body ?? '')).join('\n')).not.toContain('stop refused, 2 of 2')
    expect(responsesMessages(run.server.requests.at(-1)!, 'developer')).toContain(undoneAtTurnEnd('apply_patch'))
  })

  it('ends a call Codex gave no PostToolUse for (an apply_patch that failed its own checks) with the turn', () => {
    const thread = run.first.events.find(e => e.type === 'thread.started')?.thread_id as string
    const log = readFileSync(join(run.ws, '.dsh', 'sessions', `${thread}.jsonl`), 'utf8').trim().split('\n').map(l => JSON.parse(l) as { type: string; data: Record<string, unknown> })
    expect(log.find(e => e.type === 'tool/result' && e.data.callId === 'call_4_0')?.data).toMatchObject({ name: 'apply_patch', content: MESSAGES.noResult, isError: true })
    expect(existsSync(join(run.ws, 'src/gone.ts'))).toBe(false)
  })

  it('shows the proof summary at the next prompt', () => {
    expect(responsesMessages(run.server.requests.at(-1)!, 'developer').some(m => m.startsWith(SUMMARY_HEAD))).toBe(true)
  })

  it('sends hooks what the adapter reads: apply_patch\'s patch in tool_input.command, the shell tool as Bash, the call id, the cwd', () => {
    const seen = run.payloads()
    const firstSession = seen.slice(0, seen.findIndex((p, i) => i > 0 && p.hook_event_name === 'SessionStart'))
    expect(firstSession.map(p => `${String(p.hook_event_name)}${p.tool_name ? ` ${String(p.tool_name)}` : ''}`)).toEqual([
      'SessionStart', 'UserPromptSubmit',
      'PreToolUse apply_patch', 'PostToolUse apply_patch', 'PreToolUse apply_patch', 'PostToolUse apply_patch',
      'PreToolUse Bash', 'PostToolUse Bash', 'PreToolUse apply_patch', 'PostToolUse apply_patch', 'PreToolUse apply_patch',
    ])
    expect(firstSession.every(p => p.session_id === firstSession[0]!.session_id && p.cwd === run.ws)).toBe(true)
    expect(firstSession[2]).toMatchObject({ tool_input: { command: patch(ROUNDING, GOOD) }, tool_use_id: 'call_0_0' })
    expect(firstSession[3]).toMatchObject({ tool_input: { command: patch(ROUNDING, GOOD) }, tool_response: expect.stringContaining('M src/money.ts') })
    expect(firstSession[6]).toMatchObject({ tool_input: { command: SED }, tool_use_id: 'call_2_0' })
    expect(typeof firstSession[7]!.tool_response).toBe('string')
  })

  it('shows the model a PostToolUse hook\'s additionalContext as a developer message', () => {
    expect(responsesMessages(run.afterStep(0), 'developer')).toContain('recorded')
  })
})
