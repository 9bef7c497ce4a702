import { execFileSync } from 'node:child_process'
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

/** A project with the user's own local settings, and a home of its own (~/.claude.json as Claude Code leaves it). */
function project(): { ws: string; home: string } {
  const ws = tempDir('dsh-hooks-install-')
  mkdirSync(join(ws, '.claude'))
  writeFileSync(join(ws, '.claude', 'settings.local.json'), USER_SETTINGS)
  const home = tempDir('dsh-hooks-home-')
  writeFileSync(join(home, '.claude.json'), CLAUDE_JSON)
  return { ws, home }
}

const CLAUDE_JSON = '{\n  "numStartups": 3,\n  "projects": {}\n}\n'
const settingsOf = (ws: string) => JSON.parse(readFileSync(join(ws, '.claude', 'settings.local.json'), 'utf8'))
const commandsOf = (groups: { hooks: { command: string }[] }[]) => groups.flatMap(g => g.hooks.map(h => h.command))

describe('dsh hooks install for Claude Code', () => {
  it('merges with the user\'s own hooks, and uninstall restores the file byte for byte', () => {
    const { ws, home } = project()
    const report = installHooks(claude, ws, { home })
    expect(report).toEqual({ scope: 'project', files: [{ file: '.claude/settings.local.json', change: 'updated' }, { file: '~/.claude.json', change: 'updated' }] })

    const settings = settingsOf(ws)
    expect(settings.model).toBe('opus')
    const client = `sh '${HOOK_CLIENT}' '${ws}' claude-code`
    // The user's hooks first, untouched; ours after them.
    expect(commandsOf(settings.hooks.PreToolUse)).toEqual(['./scripts/audit-bash.sh', `${client} PreToolUse 298 60`])
    expect(commandsOf(settings.hooks.PostToolUse)).toEqual(['npx prettier --write "$CLAUDE_FILE"', `${client} PostToolUse 598 60`])
    expect(settings.hooks.PreToolUse[1]).toEqual({ matcher: 'Write|Edit|NotebookEdit|Bash|mcp__dsh__.*|mcp__plugin_dsh-guard_dsh__.*', hooks: [{ type: 'command', command: `${client} PreToolUse 298 60`, timeout: 300 }] })
    expect(Object.keys(settings.hooks)).toEqual(['PreToolUse', 'PostToolUse', 'SessionStart', 'UserPromptSubmit', 'PostToolUseFailure', 'Stop'])
    expect(settings.permissions.allow).toEqual(['Bash(npm test:*)', 'mcp__dsh__checkpoint'])
    // The MCP server in Claude Code's local scope (this project, this machine); the project's shared files are not touched.
    const mcp = JSON.parse(readFileSync(join(home, '.claude.json'), 'utf8'))
    expect(mcp.numStartups).toBe(3)
    expect(mcp.projects[ws].mcpServers.dsh.args.slice(1)).toEqual(['hooks', 'mcp', '--workspace', ws])
    expect(existsSync(join(ws, '.mcp.json'))).toBe(false)
    expect(existsSync(join(ws, '.claude', 'settings.json'))).toBe(false)

    // Idempotent: a second install changes nothing.
    const once = readFileSync(join(ws, '.claude', 'settings.local.json'), 'utf8')
    expect(installHooks(claude, ws, { home }).files.map(f => f.change)).toEqual(['unchanged', 'unchanged'])
    expect(readFileSync(join(ws, '.claude', 'settings.local.json'), 'utf8')).toBe(once)

    expect(uninstallHooks(claude, ws, { home }).files).toEqual([{ file: '.claude/settings.local.json', change: 'restored' }, { file: '~/.claude.json', change: 'restored' }])
    expect(readFileSync(join(ws, '.claude', 'settings.local.json'), 'utf8')).toBe(USER_SETTINGS)
    expect(readFileSync(join(home, '.claude.json'), 'utf8')).toBe(CLAUDE_JSON)
  })

  it('user-level: every project, named by Claude Code\'s $CLAUDE_PROJECT_DIR; uninstall puts the home files back', () => {
    const ws = tempDir('dsh-hooks-install-')
    const home = tempDir('dsh-hooks-home-')
    expect(installHooks(claude, ws, { scope: 'user', home }).files).toEqual([{ file: '~/.claude/settings.json', change: 'created' }, { file: '~/.claude.json', change: 'created' }])
    const settings = JSON.parse(readFileSync(join(home, '.claude', 'settings.json'), 'utf8'))
    expect(commandsOf(settings.hooks.PreToolUse)).toEqual([`sh '${HOOK_CLIENT}' "$CLAUDE_PROJECT_DIR" claude-code PreToolUse 298 60`])
    expect(JSON.parse(readFileSync(join(home, '.claude.json'), 'utf8')).mcpServers.dsh.args.slice(1)).toEqual(['hooks', 'mcp'])
    expect(existsSync(join(ws, '.claude'))).toBe(false)
    expect(existsSync(join(ws, '.dsh'))).toBe(false)
    uninstallHooks(claude, ws, { scope: 'user', home })
    expect(existsSync(join(home, '.claude'))).toBe(false)
    expect(existsSync(join(home, '.claude.json'))).toBe(false)
  })

  it('takes out only its own entries from a file the user edited since', () => {
    const { ws, home } = project()
    installHooks(claude, ws, { home })
    const edited = settingsOf(ws)
    edited.hooks.Stop.unshift({ hooks: [{ type: 'command', command: 'notify-send done' }] })
    edited.theme = 'dark'
    writeFileSync(join(ws, '.claude', 'settings.local.json'), JSON.stringify(edited, null, 2) + '\n')

    expect(uninstallHooks(claude, ws, { home }).files[0]).toEqual({ file: '.claude/settings.local.json', change: 'updated' })
    const expected = { ...JSON.parse(USER_SETTINGS), hooks: { ...JSON.parse(USER_SETTINGS).hooks, Stop: [{ hooks: [{ type: 'command', command: 'notify-send done' }] }] }, theme: 'dark' }
    expect(settingsOf(ws)).toEqual(expected)
  })

  it('creates .claude when there is none, and uninstall leaves the project as it was', () => {
    const ws = tempDir('dsh-hooks-install-')
    const home = tempDir('dsh-hooks-home-')
    expect(installHooks(claude, ws, { home }).files.map(f => f.change)).toEqual(['created', 'created'])
    uninstallHooks(claude, ws, { home })
    expect(existsSync(join(ws, '.claude'))).toBe(false)
    expect(existsSync(join(home, '.claude.json'))).toBe(false)
  })

  it('in a git work tree, keeps the local settings out of git (.git/info/exclude); uninstall puts the exclude file back byte for byte', () => {
    const repo = tempDir('dsh-hooks-git-')
    const home = tempDir('dsh-hooks-home-')
    const git = (...args: string[]) => execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8' })
    git('init', '-q')
    const ws = join(repo, 'app')
    mkdirSync(ws)
    writeFileSync(join(ws, 'index.ts'), 'export {}\n')
    const exclude = join(repo, '.git', 'info', 'exclude')
    const before = readFileSync(exclude, 'utf8')
    const report = installHooks(claude, ws, { home })
    expect(report.files.map(f => f.file)).toEqual([join(repo, '.git', 'info', 'exclude'), '.claude/settings.local.json', '~/.claude.json'])
    expect(git('status', '--porcelain', '--untracked-files=all')).toBe('?? app/index.ts\n')
    expect(git('check-ignore', 'app/.claude/settings.local.json')).toBe('app/.claude/settings.local.json\n')
    // Idempotent: a second install adds nothing.
    const once = readFileSync(exclude, 'utf8')
    installHooks(claude, ws, { home })
    expect(readFileSync(exclude, 'utf8')).toBe(once)
    uninstallHooks(claude, ws, { home })
    expect(readFileSync(exclude, 'utf8')).toBe(before)
    expect(existsSync(join(ws, '.claude'))).toBe(false)
  })

  it('refuses a settings file that is not JSON, writing nothing', () => {
    const { ws, home } = project()
    writeFileSync(join(ws, '.claude', 'settings.local.json'), '{ "hooks": ')
    expect(() => installHooks(claude, ws, { home })).toThrow(SettingsError)
    expect(() => installHooks(claude, ws, { home })).toThrow(/settings\.local\.json is not valid JSON \(.*\); fix it first, nothing was changed$/)
    expect(readFileSync(join(ws, '.claude', 'settings.local.json'), 'utf8')).toBe('{ "hooks": ')
    expect(readFileSync(join(home, '.claude.json'), 'utf8')).toBe(CLAUDE_JSON)
  })
})
