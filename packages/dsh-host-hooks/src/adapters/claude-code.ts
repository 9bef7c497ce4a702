import { join } from 'node:path'
import type { ToolResult } from 'dsh-tools'
import { hookReplier, hookTranslator, payloadField, type ConfigEdit, type HookAdapter, type HookEntry, type InstallPlace, type InstallTarget } from '../adapter.ts'
import { addToList, editJson, isObject, mergeHookGroups, removeFromList, removeHookGroups, setEntry } from '../settings.ts'

// Claude Code (`@anthropic-ai/claude-code` 2.1.x): hooks in `.claude/settings.json`
// (regex matchers, `timeout` in seconds), project MCP servers in `.mcp.json`.

/** The MCP server's name; its tools reach hooks as `mcp__dsh__<tool>`. */
const MCP_NAME = 'dsh'
const MCP_PREFIX = `mcp__${MCP_NAME}__`
/** The same server from the dsh-guard plugin: Claude Code names a plugin's servers `plugin:<plugin>:<server>`. */
const PLUGIN_MCP_PREFIX = `mcp__plugin_dsh-guard_${MCP_NAME}__`
const WRITERS: Record<string, string> = { Write: 'file_path', Edit: 'file_path', NotebookEdit: 'notebook_path' }
const TOOLS = `${Object.keys(WRITERS).join('|')}|Bash|${MCP_PREFIX}.*|${PLUGIN_MCP_PREFIX}.*`
/** Events where Claude Code reads `hookSpecificOutput.additionalContext`. */
const CONTEXT_EVENTS = new Set(['PostToolUse', 'PostToolUseFailure', 'SessionStart', 'UserPromptSubmit'])

const HOOKS: HookEntry[] = [
  { event: 'SessionStart', timeoutSeconds: 30, context: true, bootWaitSeconds: 0 },
  // The first prompt waits for the host SessionStart started, so the handoff reaches the model.
  { event: 'UserPromptSubmit', timeoutSeconds: 60, context: true, bootWaitSeconds: 25 },
  // The first write of a session measures the accepted state (type-check, tests) before it runs.
  { event: 'PreToolUse', matcher: TOOLS, timeoutSeconds: 300, context: false, bootWaitSeconds: 60 },
  { event: 'PostToolUse', matcher: TOOLS, timeoutSeconds: 600, context: true, bootWaitSeconds: 60 },
  { event: 'PostToolUseFailure', matcher: TOOLS, timeoutSeconds: 600, context: true, bootWaitSeconds: 60 },
  // A stop may be judged: the turn's change checked as a whole, and undone when refused too often.
  { event: 'Stop', timeoutSeconds: 600, context: false, bootWaitSeconds: 0 },
]

/** A tool's result as text: a string as is; Bash's `{stdout, stderr}` joined; anything else as JSON. */
function resultText(response: unknown): string {
  if (typeof response === 'string') return response
  if (isObject(response) && (typeof response.stdout === 'string' || typeof response.stderr === 'string')) {
    return [response.stdout, response.stderr].filter(s => typeof s === 'string' && s).join('\n')
  }
  return response === undefined ? '' : JSON.stringify(response)
}

function postResult(event: string, tool: string, p: Record<string, unknown>): ToolResult {
  if (event === 'PostToolUseFailure') {
    const content = typeof p.error === 'string' ? p.error : resultText(p.tool_response)
    const code = tool === 'Bash' ? /exit code (\d+)/i.exec(content)?.[1] : undefined
    return { content, isError: true, ...(code !== undefined ? { exitCode: Number(code) } : {}) }
  }
  return { content: resultText(p.tool_response), ...(tool === 'Bash' ? { exitCode: 0 } : {}) }
}

const translate = hookTranslator({
  agent: 'Claude Code',
  events: { sessionStart: 'SessionStart', prompt: 'UserPromptSubmit', stop: 'Stop', preTool: 'PreToolUse', postTool: ['PostToolUse', 'PostToolUseFailure'] },
  mcpPrefix: [MCP_PREFIX, PLUGIN_MCP_PREFIX],
  effects: name => (WRITERS[name] ? 'write' : name === 'Bash' ? 'shell' : undefined),
  callId: (_name, _input, payload) => payloadField('Claude Code', payload, 'tool_use_id'),
  paths: (name, input) => {
    const path = input[WRITERS[name]!]
    return typeof path === 'string' && path ? [path] : []
  },
  result: postResult,
})

const reply = hookReplier(CONTEXT_EVENTS)

/**
 * Hooks go where Claude Code reads settings that are not shared: the
 * project's `.claude/settings.local.json` (Claude Code keeps it out of git),
 * or the user's `~/.claude/settings.json`. The MCP server goes into
 * `~/.claude.json`, in the project's entry (Claude Code's "local" scope) or at
 * its top (every project): never into the project's shared `.mcp.json`.
 */
function settingsFile(place: InstallPlace): string {
  return place.scope === 'user' ? join(place.home, '.claude', 'settings.json') : join(place.workspace, '.claude', 'settings.local.json')
}
const mcpFile = (place: InstallPlace) => join(place.home, '.claude.json')
const mcpPath = (place: InstallPlace) => (place.scope === 'user' ? ['mcpServers', MCP_NAME] : ['projects', place.workspace, 'mcpServers', MCP_NAME])

function install(target: InstallTarget): ConfigEdit[] {
  return [
    editJson(settingsFile(target), settings => {
      const next = mergeHookGroups(settings, HOOKS.map(h => ({
        event: h.event, ...(h.matcher ? { matcher: h.matcher } : {}), command: target.hookCommand(h), timeout: h.timeoutSeconds,
      })), target.isOurs)
      return addToList(next, ['permissions', 'allow'], `${MCP_PREFIX}checkpoint`)
    }),
    editJson(mcpFile(target), config => setEntry(config, mcpPath(target), { type: 'stdio', command: target.mcp.command, args: target.mcp.args })),
  ]
}

function uninstall(place: InstallPlace, isOurs: (command: string) => boolean): ConfigEdit[] {
  return [
    editJson(settingsFile(place), settings => removeFromList(removeHookGroups(settings, isOurs), ['permissions', 'allow'], `${MCP_PREFIX}checkpoint`), true),
    editJson(mcpFile(place), config => setEntry(config, mcpPath(place), undefined), true),
  ]
}

/** Claude Code: hooks in `.claude/settings.local.json` (or `~/.claude/settings.json`), the checkpoint tool's MCP server in `~/.claude.json`. */
export const claudeCode: HookAdapter = { agent: 'claude-code', hooks: HOOKS, translate, reply, install, uninstall, projectWord: '"$CLAUDE_PROJECT_DIR"', sharesProjectFiles: false }
