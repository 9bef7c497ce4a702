/**
 * The suite guarding the real Gemini CLI (the pinned npm package) in the
 * shared scenario (`agent-e2e.ts`) on a scripted Gemini API model: edits with
 * `replace`, the `sed -i` through `run_shell_command`, a new file with
 * `write_file`, and a checkpoint (the suite's MCP tool) with a claim never
 * run. Its AfterAgent is denied while the test break is open; the reason
 * comes back as the prompt of the same turn. A recording hook next to dsh's
 * pins the hook payloads the Gemini adapter reads.
 */
import { expect, it } from 'vitest'
import { geminiFunctionResponses, geminiModel, geminiUserTexts, isGeminiTurnRequest, runGemini } from 'dsh-testkit'
import { CLAIM_MARKED, describeAgentE2E, e2eSkip, GOOD, KEPT_FOR_NOW, ROUNDING, SED, stopRefused, SUMMARY_HEAD, typeBreak, undoneAtTurnEnd, type Move } from '../tests/agent-e2e.ts'

const skip = await e2eSkip('Gemini CLI')

const NOTES = '# Notes\n\nAmounts are in cents.\n'
/** Gemini CLI escapes `>` in the hook context it shows the model. */
const escaped = (text: string) => text.replaceAll('>', '&gt;')

describeAgentE2E({
  label: 'Gemini CLI',
  cli: 'gemini',
  adapter: 'gemini',
  edit: (from, to) => ({ name: 'replace', arguments: { file_path: 'src/money.ts', old_string: from, new_string: to, instruction: 'edit' } }),
  shell: command => ({ name: 'run_shell_command', arguments: { command } }),
  checkpoint: args => ({ name: 'mcp_dsh_checkpoint', arguments: args }),
  script: () => [
    'good', 'type-break', 'sed', 'test-break',
    { text: 'A note.', toolCalls: [{ name: 'write_file', arguments: { file_path: 'NOTES.md', content: NOTES } }] },
    'checkpoint',
  ],
  model: geminiModel,
  turns: requests => requests.filter(isGeminiTurnRequest),
  run: (options, resume) => runGemini({ ...options, ...(resume ? { extraArgs: ['--resume', 'latest'] } : {}), timeoutMs: 240_000 }),
  record: { file: '.gemini/settings.json', events: ['SessionStart', 'BeforeAgent', 'BeforeTool', 'AfterTool'], timeoutScale: 1000 },
}, skip, run => {
  const lastResponse = (move: Move) => geminiFunctionResponses(run.after(move)).at(-1)

  it('ends the first session with success', () => {
    expect(run.first.events.at(-1)).toMatchObject({ type: 'result', status: 'success' })
  })

  it('gives the model the suite\'s rollback text in place of the tool\'s result', () => {
    expect(lastResponse('good')).toMatchObject({ name: 'replace', response: { output: expect.stringContaining('Successfully modified file') } })
    expect(lastResponse('type-break')).toEqual({ name: 'replace', response: { error: typeBreak('replace') } })
    expect(lastResponse('sed')).toEqual({ name: 'run_shell_command', response: { error: typeBreak('run_shell_command') } })
  })

  it('keeps the test break for now: the suite\'s text follows the tool\'s result (HTML-escaped by Gemini CLI)', () => {
    const output = String(lastResponse('test-break')!.response.output)
    expect(output).toMatch(/^Successfully modified file/)
    expect(output).toContain(`<hook_context>${escaped(KEPT_FOR_NOW)}</hook_context>`)
  })

  it('denies AfterAgent once with the open test break, its reason the next prompt; the model answers without writing, so the next AfterAgent undoes it, said at the next session', () => {
    expect(geminiUserTexts(run.afterStop(1)).at(-1)).toBe(stopRefused(1, 'replace'))
    expect(run.server.requests.map(r => JSON.stringify(r.body ?? '')).join('\n')).not.toContain('stop refused, 2 of 2')
    const resumed = run.server.requests.filter(isGeminiTurnRequest).at(-1)!
    expect(geminiUserTexts(resumed).join('\n')).toContain(`<hook_context>${escaped(undoneAtTurnEnd('replace', 'write_file on NOTES.md'))}</hook_context>`)
  })

  it('marks the checkpoint\'s claim that nothing ran', () => {
    expect(String(lastResponse('checkpoint')!.response.output)).toContain(CLAIM_MARKED)
  })

  it('shows the proof summary at the next prompt', () => {
    const resumed = run.server.requests.filter(isGeminiTurnRequest).at(-1)!
    expect(geminiUserTexts(resumed).join('\n')).toContain(`<hook_context>${SUMMARY_HEAD}`)
  })

  it('sends hooks what the adapter reads: write_file, replace and run_shell_command inputs in tool_input, the cwd', () => {
    const seen = run.payloads()
    const firstSession = seen.slice(0, seen.findIndex((p, i) => i > 0 && p.hook_event_name === 'SessionStart'))
    const tools = ['replace', 'replace', 'run_shell_command', 'replace', 'write_file', 'mcp_dsh_checkpoint']
    expect(firstSession.map(p => `${String(p.hook_event_name)}${p.tool_name ? ` ${String(p.tool_name)}` : ''}`)).toEqual([
      'SessionStart', 'BeforeAgent', ...tools.flatMap(t => [`BeforeTool ${t}`, `AfterTool ${t}`]), 'BeforeAgent',
    ])
    expect(firstSession.every(p => p.cwd === run.ws)).toBe(true)
    expect(firstSession[2]).toMatchObject({ tool_input: { file_path: 'src/money.ts', old_string: ROUNDING, new_string: GOOD } })
    expect(firstSession[6]).toMatchObject({ tool_input: { command: SED } })
    expect(firstSession[10]).toMatchObject({ tool_input: { file_path: 'NOTES.md', content: NOTES } })
    // The denied AfterAgent's reason comes back as the prompt of the same turn.
    expect(firstSession.slice(-1).map(p => p.prompt)).toEqual([stopRefused(1, 'replace')])
  })
})
