/**
 * The suite guarding the real Claude Code CLI (the pinned npm package) in
 * the shared scenario (`agent-e2e.ts`) on a scripted Anthropic Messages
 * model: Claude Code reads the file before it edits it, and again after the
 * `sed -i`; a checkpoint with a claim never run; its Stop is blocked while
 * the test break is open.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { anthropicModel, anthropicToolResults, anthropicUserTexts, isClaudeTurnRequest, runClaude } from 'dsh-testkit'
import { CLAIM_MARKED, describeAgentE2E, e2eSkip, KEPT_FOR_NOW, stopRefused, typeBreak, undoneAtTurnEnd } from '../tests/agent-e2e.ts'

const skip = await e2eSkip('Claude Code')

describeAgentE2E({
  label: 'Claude Code',
  cli: 'claude',
  adapter: 'claude-code',
  edit: (from, to, money) => ({ name: 'Edit', arguments: { file_path: money, old_string: from, new_string: to } }),
  shell: command => ({ name: 'Bash', arguments: { command, description: 'Change add' } }),
  checkpoint: args => ({ name: 'mcp__dsh__checkpoint', arguments: args }),
  script: money => [
    { text: 'Reading money.', toolCalls: [{ name: 'Read', arguments: { file_path: money } }] },
    'good', 'type-break', 'sed',
    { text: 'Reading it again.', toolCalls: [{ name: 'Read', arguments: { file_path: money } }] },
    'test-break', 'checkpoint',
  ],
  model: anthropicModel,
  turns: requests => requests.filter(isClaudeTurnRequest),
  // The workspace is trusted (else Claude Code ignores its permissions.allow), as after its trust dialog; the install's MCP server stays.
  prepareHome: (home, ws) => {
    const file = join(home, '.claude.json')
    const config = JSON.parse(readFileSync(file, 'utf8')) as { projects: Record<string, object> }
    config.projects[ws] = { ...config.projects[ws], hasTrustDialogAccepted: true }
    writeFileSync(file, JSON.stringify(config, null, 2))
  },
  run: (options, resume) => {
    const sessionId = resume?.events.find(e => e.type === 'result')?.session_id as string | undefined
    return runClaude({ ...options, extraArgs: ['--allowedTools', 'Bash', ...(sessionId ? ['--resume', sessionId] : [])], timeoutMs: 240_000 })
  },
}, skip, run => {
  const texts = (request: Parameters<typeof anthropicUserTexts>[0]) => anthropicUserTexts(request).join('\n')

  it('ends the first session with the model\'s last word', () => {
    expect(run.first.events.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'Done.' })
  })

  it('tells the model why, with the suite\'s own rollback text, in its next request', () => {
    expect(texts(run.after('type-break'))).toContain(`: ${typeBreak('Edit')}`)
    expect(texts(run.after('sed'))).toContain(`: ${typeBreak('Bash')}`)
    expect(texts(run.after('test-break'))).toContain(`PostToolUse:Edit hook additional context: ${KEPT_FOR_NOW}\n`)
    // The good edit's result is the tool's own.
    expect(anthropicToolResults(run.after('good')).at(-1)!.content).toMatch(/has been updated successfully/)
    expect(texts(run.after('good'))).not.toContain('rolled back')
  })

  it('blocks the Stop once with the open test break; the model answers without writing, so its next Stop undoes it, said at the next prompt', () => {
    expect(texts(run.afterStop(1))).toContain(`Stop hook feedback:\n${stopRefused(1, 'Edit')}`)
    expect(texts(run.afterStop(1))).not.toContain('undone at the end of the turn')
    // The second Stop was not blocked.
    expect(run.server.requests.map(r => JSON.stringify(r.body ?? '')).join('\n')).not.toContain('stop refused, 2 of 2')
    // Said when the resumed session starts (Claude Code shows a SessionStart hook's context as a system message).
    const resumed = run.server.requests.filter(isClaudeTurnRequest).at(-1)!
    const system = (resumed.body as { messages: { role: string; content: unknown }[] }).messages.filter(m => m.role === 'system').map(m => String(m.content))
    expect(system.some(text => text.startsWith(`SessionStart hook additional context: ${undoneAtTurnEnd('Edit')}\n\n`)), system.join('\n---\n')).toBe(true)
  })

  it('marks the checkpoint\'s claim that nothing ran', () => {
    expect(anthropicToolResults(run.after('checkpoint')).at(-1)!.content).toBe([
      CLAIM_MARKED,
      '- failed is empty, but 3 commands failed in this session: `typecheck of Edit on src/money.ts` (rolled back, later passed), `typecheck of Bash on src/money.ts` (rolled back), `test of Edit on src/money.ts` (failed, kept). Did something not work? If so, checkpoint again with it in failed.',
    ].join('\n'))
  })

  it('shows the proof summary at the next prompt', () => {
    const resumed = run.server.requests.filter(isClaudeTurnRequest).at(-1)!
    expect(JSON.stringify((resumed.body as { messages: unknown }).messages)).toContain('UserPromptSubmit hook additional context: Proof chain — latest harness-verified result per check in this session (failures first):')
  })
})
