/**
 * A project install naming dsh-guard's commands on PATH (`onPath`): Codex's
 * `.codex/` and Gemini CLI's `.gemini/settings.json` are files a team
 * commits (neither agent has local project settings), so they get no path
 * of this machine; status reads the entries, reinstalling over a path-based
 * install replaces it, and uninstall restores every file byte for byte.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ADAPTERS, installHooks, liveHooks, uninstallHooks } from 'dsh-host-hooks'
import { tempDir } from 'dsh-testkit'

const adapter = (agent: string) => ADAPTERS.find(a => a.agent === agent)!

const CASES = [
  {
    agent: 'codex', files: ['.codex/hooks.json', '.codex/config.toml'],
    preToolUse: 'dsh-guard-hook "$PWD" codex PreToolUse 298 60',
    mcp: (files: Record<string, string>) => expect(files['.codex/config.toml']).toContain('[mcp_servers.dsh]\ncommand = "dsh-guard"\nargs = ["mcp"]\n'),
    hooks: (files: Record<string, string>) => JSON.parse(files['.codex/hooks.json']!) as Hooks,
  },
  {
    agent: 'gemini', files: ['.gemini/settings.json'],
    preToolUse: 'dsh-guard-hook "$GEMINI_PROJECT_DIR" gemini BeforeTool 298 60',
    mcp: (files: Record<string, string>) => expect((JSON.parse(files['.gemini/settings.json']!) as { mcpServers: unknown }).mcpServers).toEqual({ dsh: { command: 'dsh-guard', args: ['mcp'] } }),
    hooks: (files: Record<string, string>) => JSON.parse(files['.gemini/settings.json']!) as Hooks,
  },
] as const

type Hooks = { hooks: Record<string, { hooks: { command: string }[] }[]> }

function read(ws: string, files: readonly string[]): Record<string, string> {
  return Object.fromEntries(files.filter(f => existsSync(join(ws, f))).map(f => [f, readFileSync(join(ws, f), 'utf8')]))
}

describe.each(CASES)('$agent project install with dsh-guard on PATH', c => {
  it('names no path of this machine: the hook launcher and the MCP server by name, the project by the agent', () => {
    const ws = tempDir(`dsh-${c.agent}-onpath-`)
    const home = tempDir(`dsh-${c.agent}-onpath-home-`)
    const report = installHooks(adapter(c.agent), ws, { home, onPath: true })
    expect(report).toEqual({ scope: 'project', files: c.files.map(file => ({ file, change: 'created' })) })
    const files = read(ws, c.files)
    for (const [file, text] of Object.entries(files)) expect(text, file).not.toMatch(/\/(tmp|root|home|work|usr)\//)
    const hooks = c.hooks(files).hooks
    const event = c.agent === 'codex' ? 'PreToolUse' : 'BeforeTool'
    expect(hooks[event]![0]!.hooks[0]!.command).toBe(c.preToolUse)
    c.mcp(files)
    // status reads them as this project's (they name no other).
    const live = liveHooks(adapter(c.agent), ws, home)
    expect(live.entries.map(e => e.level)).toEqual(adapter(c.agent).hooks.map(() => 'project'))
    expect(live.missing).toEqual([])
  })

  it('user-level (--user) names them too, in the home directory, and uninstall removes what it created', () => {
    const home = tempDir(`dsh-${c.agent}-onpath-home-`)
    const report = installHooks(adapter(c.agent), home, { scope: 'user', home, onPath: true })
    expect(report).toEqual({ scope: 'user', files: c.files.map(f => ({ file: `~/${f}`, change: 'created' })) })
    const event = c.agent === 'codex' ? 'PreToolUse' : 'BeforeTool'
    expect(c.hooks(read(home, c.files)).hooks[event]![0]!.hooks[0]!.command).toBe(c.preToolUse)
    uninstallHooks(adapter(c.agent), home, { scope: 'user', home })
    expect(read(home, c.files)).toEqual({})
  })

  it('replaces a path-based install of ours, and uninstall puts the user\'s files back byte for byte', () => {
    const ws = tempDir(`dsh-${c.agent}-onpath-`)
    const home = tempDir(`dsh-${c.agent}-onpath-home-`)
    mkdirSync(join(ws, c.files[0].split('/')[0]!))
    const own = c.agent === 'codex' ? { '.codex/config.toml': 'model = "o3"\n' } : { '.gemini/settings.json': '{\n  "theme": "dark"\n}\n' }
    for (const [f, text] of Object.entries(own)) writeFileSync(join(ws, f), text)
    const before = read(ws, c.files)
    installHooks(adapter(c.agent), ws, { home })
    installHooks(adapter(c.agent), ws, { home, onPath: true })
    const hooks = c.hooks(read(ws, c.files)).hooks
    for (const groups of Object.values(hooks)) expect(groups.map(g => g.hooks[0]!.command.split(' ')[0])).toEqual(['dsh-guard-hook'])
    uninstallHooks(adapter(c.agent), ws, { home })
    expect(read(ws, c.files)).toEqual(before)
  })
})
