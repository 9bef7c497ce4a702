import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ADAPTERS, HOOK_CLIENT, installHooks, SettingsError, uninstallHooks } from 'dsh-host-hooks'
import { tempDir } from 'dsh-testkit'

const claude = ADAPTERS.find(a => a.agent === 'claude-code')!

// The user's own settings, as Claude Code writes them (two-space JSON, final newline).
const USER_SETTINGS = `{
  "model": "opus",
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "./scripts/audit-bash.sh",
            "timeout": 10
          }
        ]
      }
    ],
    "PostToolUse": [
      {
        "matcher": "Edit|Write",
        "hooks": [
          {
            "type": "command",
            "command": "npx prettier --write \\"$CLAUDE_FILE\\""
          }
        ]
      }
    ]
  },
  "permissions": {
    "allow": [
      "Bash(npm test:*)"
    ]
  }
}
`

function project(): string {
  const ws = tempDir('dsh-hooks-install-')
  mkdirSync(join(ws, '.claude'))
  writeFileSync(join(ws, '.claude', 'settings.json'), USER_SETTINGS)
  return ws
}

const settingsOf = (ws: string) => JSON.parse(readFileSync(join(ws, '.claude', 'settings.json'), 'utf8'))
const commandsOf = (groups: { hooks: { command: string }[] }[]) => groups.flatMap(g => g.hooks.map(h => h.command))

describe('dsh hooks install for Claude Code', () => {
  it('merges with the user\'s own hooks, and uninstall restores the file byte for byte', () => {
    const ws = project()
    const report = installHooks(claude, ws)
    expect(report.files).toEqual([{ file: '.claude/settings.json', change: 'updated' }, { file: '.mcp.json', change: 'created' }])

    const settings = settingsOf(ws)
    expect(settings.model).toBe('opus')
    const client = `sh '${HOOK_CLIENT}' '${ws}' claude-code`
    // The user's hooks first, untouched; ours after them.
    expect(commandsOf(settings.hooks.PreToolUse)).toEqual(['./scripts/audit-bash.sh', `${client} PreToolUse 298 60`])
    expect(commandsOf(settings.hooks.PostToolUse)).toEqual(['npx prettier --write "$CLAUDE_FILE"', `${client} PostToolUse 598 60`])
    expect(settings.hooks.PreToolUse[1]).toEqual({ matcher: 'Write|Edit|NotebookEdit|Bash|mcp__dsh__.*', hooks: [{ type: 'command', command: `${client} PreToolUse 298 60`, timeout: 300 }] })
    expect(Object.keys(settings.hooks)).toEqual(['PreToolUse', 'PostToolUse', 'SessionStart', 'UserPromptSubmit', 'PostToolUseFailure', 'Stop'])
    expect(settings.permissions.allow).toEqual(['Bash(npm test:*)', 'mcp__dsh__checkpoint'])
    expect(settings.enabledMcpjsonServers).toEqual(['dsh'])
    const mcp = JSON.parse(readFileSync(join(ws, '.mcp.json'), 'utf8'))
    expect(mcp.mcpServers.dsh.args.slice(1)).toEqual(['hooks', 'mcp', '--workspace', ws])

    // Idempotent: a second install changes nothing.
    const once = readFileSync(join(ws, '.claude', 'settings.json'), 'utf8')
    expect(installHooks(claude, ws).files.map(f => f.change)).toEqual(['unchanged', 'unchanged'])
    expect(readFileSync(join(ws, '.claude', 'settings.json'), 'utf8')).toBe(once)

    expect(uninstallHooks(claude, ws).files).toEqual([{ file: '.claude/settings.json', change: 'restored' }, { file: '.mcp.json', change: 'restored' }])
    expect(readFileSync(join(ws, '.claude', 'settings.json'), 'utf8')).toBe(USER_SETTINGS)
    expect(existsSync(join(ws, '.mcp.json'))).toBe(false)
  })

  it('takes out only its own entries from a file the user edited since', () => {
    const ws = project()
    installHooks(claude, ws)
    const edited = settingsOf(ws)
    edited.hooks.Stop.unshift({ hooks: [{ type: 'command', command: 'notify-send done' }] })
    edited.theme = 'dark'
    writeFileSync(join(ws, '.claude', 'settings.json'), JSON.stringify(edited, null, 2) + '\n')

    expect(uninstallHooks(claude, ws).files[0]).toEqual({ file: '.claude/settings.json', change: 'updated' })
    const expected = { ...JSON.parse(USER_SETTINGS), hooks: { ...JSON.parse(USER_SETTINGS).hooks, Stop: [{ hooks: [{ type: 'command', command: 'notify-send done' }] }] }, theme: 'dark' }
    expect(settingsOf(ws)).toEqual(expected)
  })

  it('creates .claude when there is none, and uninstall leaves the project as it was', () => {
    const ws = tempDir('dsh-hooks-install-')
    expect(installHooks(claude, ws).files.map(f => f.change)).toEqual(['created', 'created'])
    uninstallHooks(claude, ws)
    expect(existsSync(join(ws, '.claude'))).toBe(false)
    expect(existsSync(join(ws, '.mcp.json'))).toBe(false)
  })

  it('refuses a settings file that is not JSON, writing nothing', () => {
    const ws = project()
    writeFileSync(join(ws, '.claude', 'settings.json'), '{ "hooks": ')
    expect(() => installHooks(claude, ws)).toThrow(SettingsError)
    expect(() => installHooks(claude, ws)).toThrow(/settings\.json is not valid JSON \(.*\); fix it first, nothing was changed$/)
    expect(readFileSync(join(ws, '.claude', 'settings.json'), 'utf8')).toBe('{ "hooks": ')
    expect(existsSync(join(ws, '.mcp.json'))).toBe(false)
  })
})
