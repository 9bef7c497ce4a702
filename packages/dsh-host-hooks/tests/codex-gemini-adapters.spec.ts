/**
 * The Codex CLI and Gemini CLI adapters without the CLIs: reading their hook
 * payloads (shapes recorded from the pinned CLIs, pinned again live by the
 * recording hook of e2e/codex.e2e.ts and e2e/gemini.e2e.ts), wording answers, and `dsh hooks install` merging with the
 * user's own configuration and `uninstall` restoring it byte for byte.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ADAPTERS, HOOK_CLIENT, installHooks, SettingsError, uninstallHooks } from 'dsh-host-hooks'
import { tempDir } from 'dsh-testkit'

const codex = ADAPTERS.find(a => a.agent === 'codex')!
const gemini = ADAPTERS.find(a => a.agent === 'gemini')!
const commandsOf = (groups: { hooks: { command: string }[] }[]) => groups.flatMap(g => g.hooks.map(h => h.command))

describe('the Codex adapter', () => {
  const base = { session_id: 's1', cwd: '/w', tool_use_id: 'call_1' }

  it('reads the paths an apply_patch patch touches, resolved against the session\'s cwd', () => {
    const patch = '*** Begin Patch\n*** Add File: src/new.ts\n+x\n*** Update File: src/a.ts\n*** Move to: src/b.ts\n@@\n-a\n+b\n*** Delete File: /w/old.ts\n*** End Patch\n'
    expect(codex.translate('PreToolUse', { ...base, tool_name: 'apply_patch', tool_input: { command: patch } })).toEqual({
      kind: 'pre-tool', sessionId: 's1', callId: 'call_1',
      tool: { name: 'apply_patch', effects: 'write', paths: ['/w/src/new.ts', '/w/src/a.ts', '/w/src/b.ts', '/w/old.ts'], arguments: { command: patch } },
    })
    expect(codex.translate('PreToolUse', { ...base, tool_name: 'Bash', tool_input: { command: 'ls' } })).toMatchObject({ tool: { effects: 'shell', paths: [] } })
    expect(codex.translate('PreToolUse', { ...base, tool_name: 'mcp__dsh__checkpoint', tool_input: { summary: 's' } })).toEqual({ kind: 'suite-tool', sessionId: 's1', name: 'checkpoint', arguments: { summary: 's' } })
    expect(codex.translate('PreToolUse', { ...base, tool_name: 'view_image', tool_input: {} })).toEqual({ kind: 'ignore' })
    expect(() => codex.translate('PreToolUse', { tool_name: 'Bash' })).toThrow('Codex hook payload without "session_id"')
  })

  it('takes a shell call\'s exit code from the session transcript (PostToolUse carries only the output)', () => {
    const transcript = join(tempDir('dsh-codex-transcript-'), 'rollout.jsonl')
    writeFileSync(transcript, [
      JSON.stringify({ type: 'response_item', payload: { type: 'function_call', call_id: 'call_1' } }),
      JSON.stringify({ type: 'event_msg', payload: { type: 'item_completed', item: { type: 'CommandExecution', id: 'call_1', exit_code: 3 } } }),
    ].join('\n') + '\n')
    const post = (p: object) => codex.translate('PostToolUse', { ...base, tool_name: 'Bash', tool_input: { command: 'x' }, tool_response: 'out\n', ...p })
    expect(post({ transcript_path: transcript })).toMatchObject({ kind: 'post-tool', result: { content: 'out\n', exitCode: 3, isError: true } })
    expect(post({ transcript_path: join(transcript, 'missing') })).toMatchObject({ result: { content: 'out\n' } })
    expect(codex.translate('PostToolUse', { ...base, tool_name: 'apply_patch', tool_input: { command: '' }, tool_response: 'Exit code: 1\nOutput:\nfailed' }))
      .toMatchObject({ result: { isError: true } })
  })

  it('answers in Codex\'s words: a block replaces the tool output, context becomes a developer message', () => {
    expect(codex.reply('PostToolUse', { kind: 'block', reason: 'rolled back: x' })).toEqual({ decision: 'block', reason: 'rolled back: x' })
    expect(codex.reply('PreToolUse', { kind: 'deny', reason: 'refused: y' })).toEqual({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'refused: y' } })
    expect(codex.reply('UserPromptSubmit', { kind: 'continue', context: 'summary' })).toEqual({ hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: 'summary' } })
    expect(codex.reply('Stop', { kind: 'continue', context: 'summary' })).toBeUndefined()
  })

  const USER_HOOKS = '{\n  "hooks": {\n    "PreToolUse": [\n      {\n        "matcher": "Bash",\n        "hooks": [\n          {\n            "type": "command",\n            "command": "./audit.sh"\n          }\n        ]\n      }\n    ]\n  }\n}\n'
  const USER_CONFIG = 'model = "o3"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n'

  it('install merges with the user\'s hooks.json and config.toml; again changes nothing; uninstall restores both byte for byte', () => {
    const ws = tempDir('dsh-codex-install-')
    mkdirSync(join(ws, '.codex'))
    writeFileSync(join(ws, '.codex', 'hooks.json'), USER_HOOKS)
    writeFileSync(join(ws, '.codex', 'config.toml'), USER_CONFIG)

    expect(installHooks(codex, ws).files).toEqual([{ file: '.codex/hooks.json', change: 'updated' }, { file: '.codex/config.toml', change: 'updated' }])
    const hooks = JSON.parse(readFileSync(join(ws, '.codex', 'hooks.json'), 'utf8'))
    const client = `sh '${HOOK_CLIENT}' '${ws}' codex`
    expect(commandsOf(hooks.hooks.PreToolUse)).toEqual(['./audit.sh', `${client} PreToolUse 298 60`])
    expect(hooks.hooks.PreToolUse[1].matcher).toBe('apply_patch|Bash|mcp__dsh__.*')
    expect(Object.keys(hooks.hooks)).toEqual(['PreToolUse', 'SessionStart', 'UserPromptSubmit', 'PostToolUse', 'Stop'])
    const config = readFileSync(join(ws, '.codex', 'config.toml'), 'utf8')
    expect(config.startsWith(`${USER_CONFIG}\n# dsh hooks: begin (written by \`dsh hooks install\`; \`dsh hooks uninstall\` takes it out)\n`)).toBe(true)
    expect(config).toMatch(/\n\[mcp_servers\.dsh\]\ncommand = ".+"\nargs = \[".+dsh\.mjs", "hooks", "mcp", "--workspace", ".+"\]\n# dsh hooks: end\n$/)

    expect(installHooks(codex, ws).files.map(f => f.change)).toEqual(['unchanged', 'unchanged'])
    expect(readFileSync(join(ws, '.codex', 'config.toml'), 'utf8')).toBe(config)

    expect(uninstallHooks(codex, ws).files.map(f => f.change)).toEqual(['restored', 'restored'])
    expect(readFileSync(join(ws, '.codex', 'hooks.json'), 'utf8')).toBe(USER_HOOKS)
    expect(readFileSync(join(ws, '.codex', 'config.toml'), 'utf8')).toBe(USER_CONFIG)
  })

  it('uninstall after the user edited config.toml takes out only the marked block; a project without .codex is left without it', () => {
    const ws = tempDir('dsh-codex-install-')
    installHooks(codex, ws)
    const file = join(ws, '.codex', 'config.toml')
    writeFileSync(file, `model = "o3"\n${readFileSync(file, 'utf8')}`)
    expect(uninstallHooks(codex, ws).files.map(f => f.change)).toEqual(['restored', 'updated'])
    expect(readFileSync(file, 'utf8')).toBe('model = "o3"\n')

    const bare = tempDir('dsh-codex-install-')
    installHooks(codex, bare)
    uninstallHooks(codex, bare)
    expect(existsSync(join(bare, '.codex'))).toBe(false)
  })

  it('refuses a config.toml that has an MCP server called dsh already, writing nothing', () => {
    const ws = tempDir('dsh-codex-install-')
    mkdirSync(join(ws, '.codex'))
    writeFileSync(join(ws, '.codex', 'config.toml'), '[mcp_servers.dsh]\ncommand = "mine"\n')
    expect(() => installHooks(codex, ws)).toThrow(SettingsError)
    expect(() => installHooks(codex, ws)).toThrow('dsh is already an MCP server of .codex/config.toml ([mcp_servers.dsh]); rename or remove it first, nothing was changed')
    expect(existsSync(join(ws, '.codex', 'hooks.json'))).toBe(false)
  })
})

describe('the Gemini CLI adapter', () => {
  const base = { session_id: 's1', cwd: '/w' }

  it('pairs BeforeTool and AfterTool by tool and input (Gemini gives no call id), with paths resolved against cwd', () => {
    const input = { file_path: 'src/a.ts', old_string: 'a', new_string: 'b', instruction: 'x' }
    const pre = gemini.translate('BeforeTool', { ...base, tool_name: 'replace', tool_input: input })
    const post = gemini.translate('AfterTool', { ...base, tool_name: 'replace', tool_input: { ...input }, tool_response: { llmContent: 'Successfully modified file: /w/src/a.ts (1 replacements).' } })
    expect(pre).toMatchObject({ kind: 'pre-tool', tool: { name: 'replace', effects: 'write', paths: ['/w/src/a.ts'] } })
    expect(post).toMatchObject({ kind: 'post-tool', name: 'replace', result: { content: 'Successfully modified file: /w/src/a.ts (1 replacements).' } })
    expect((post as { callId: string }).callId).toBe((pre as { callId: string }).callId)
    expect(gemini.translate('BeforeTool', { ...base, tool_name: 'mcp_dsh_checkpoint', tool_input: { summary: 's' } })).toEqual({ kind: 'suite-tool', sessionId: 's1', name: 'checkpoint', arguments: { summary: 's' } })
    expect(gemini.translate('BeforeAgent', { ...base, prompt: 'hi' })).toEqual({ kind: 'prompt', sessionId: 's1', text: 'hi' })
    expect(gemini.translate('AfterAgent', base)).toEqual({ kind: 'stop', sessionId: 's1' })
  })

  it('reads the shell\'s exit code and a failed tool\'s error from tool_response', () => {
    const post = (name: string, tool_response: object) => gemini.translate('AfterTool', { ...base, tool_name: name, tool_input: { command: 'x' }, tool_response })
    expect(post('run_shell_command', { llmContent: 'Output: out\nerr\nExit Code: 3\nProcess Group PGID: 9' })).toMatchObject({ result: { exitCode: 3, isError: true } })
    expect(post('run_shell_command', { llmContent: 'Output: out\nProcess Group PGID: 9' })).toMatchObject({ result: { exitCode: 0, isError: false } })
    expect(post('write_file', { llmContent: 'x', error: { message: 'File not found: /w/a', type: 'file_not_found' } })).toMatchObject({ result: { content: 'File not found: /w/a', isError: true } })
  })

  it('answers in Gemini CLI\'s words', () => {
    expect(gemini.reply('AfterTool', { kind: 'block', reason: 'rolled back: x' })).toEqual({ decision: 'block', reason: 'rolled back: x' })
    expect(gemini.reply('BeforeTool', { kind: 'deny', reason: 'refused: y' })).toEqual({ decision: 'deny', reason: 'refused: y' })
    expect(gemini.reply('BeforeAgent', { kind: 'continue', context: 'summary' })).toEqual({ hookSpecificOutput: { hookEventName: 'BeforeAgent', additionalContext: 'summary' } })
  })

  const USER_SETTINGS = '{\n  "theme": "Dracula",\n  "hooks": {\n    "AfterTool": [\n      {\n        "matcher": "write_file",\n        "hooks": [\n          {\n            "type": "command",\n            "command": "prettier --write",\n            "timeout": 5000\n          }\n        ]\n      }\n    ]\n  },\n  "mcpServers": {\n    "docs": {\n      "command": "docs-mcp"\n    }\n  }\n}\n'

  it('install merges with the user\'s settings.json (timeouts in ms); again changes nothing; uninstall restores it byte for byte', () => {
    const ws = tempDir('dsh-gemini-install-')
    mkdirSync(join(ws, '.gemini'))
    const file = join(ws, '.gemini', 'settings.json')
    writeFileSync(file, USER_SETTINGS)

    expect(installHooks(gemini, ws).files).toEqual([{ file: '.gemini/settings.json', change: 'updated' }])
    const settings = JSON.parse(readFileSync(file, 'utf8'))
    const client = `sh '${HOOK_CLIENT}' '${ws}' gemini`
    expect(settings.theme).toBe('Dracula')
    expect(settings.hooks.AfterTool).toEqual([
      JSON.parse(USER_SETTINGS).hooks.AfterTool[0],
      { matcher: 'write_file|replace|run_shell_command|mcp_dsh_.*', hooks: [{ type: 'command', command: `${client} AfterTool 598 60`, timeout: 600_000 }] },
    ])
    expect(Object.keys(settings.hooks)).toEqual(['AfterTool', 'SessionStart', 'BeforeAgent', 'BeforeTool', 'AfterAgent'])
    expect(Object.keys(settings.mcpServers)).toEqual(['docs', 'dsh'])
    expect(settings.mcpServers.dsh.args.slice(1)).toEqual(['hooks', 'mcp', '--workspace', ws])

    const once = readFileSync(file, 'utf8')
    expect(installHooks(gemini, ws).files.map(f => f.change)).toEqual(['unchanged'])
    expect(readFileSync(file, 'utf8')).toBe(once)
    expect(uninstallHooks(gemini, ws).files.map(f => f.change)).toEqual(['restored'])
    expect(readFileSync(file, 'utf8')).toBe(USER_SETTINGS)
  })
})
