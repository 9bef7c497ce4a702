import { createHash } from 'node:crypto'
import { join, resolve } from 'node:path'
import type { ToolResult } from 'dsh-tools'
import { hookReplier, hookTranslator, payloadField, type ConfigEdit, type HookAdapter, type HookEntry, type InstallPlace, type InstallTarget } from '../adapter.ts'
import { editJson, isObject, mergeHookGroups, removeHookGroups, setEntry, type JsonObject } from '../settings.ts'

// Gemini CLI (`@google/gemini-cli` 0.61): hooks and MCP servers in
// `.gemini/settings.json` (regex matchers, `timeout` in milliseconds). The
// workspace's settings, hooks included, load only in a trusted folder.

const MCP_NAME = 'dsh'
/** Gemini CLI names an MCP server's tools `mcp_<server>_<tool>`, in the model's list and in hooks. */
const MCP_PREFIX = `mcp_${MCP_NAME}_`
const WRITERS: Record<string, string> = { write_file: 'file_path', replace: 'file_path' }
const SHELL = 'run_shell_command'
const TOOLS = `${Object.keys(WRITERS).join('|')}|${SHELL}|${MCP_PREFIX}.*`
/** Events where Gemini CLI shows `hookSpecificOutput.additionalContext` to the model. */
const CONTEXT_EVENTS = new Set(['SessionStart', 'BeforeAgent', 'AfterTool'])

const HOOKS: HookEntry[] = [
  { event: 'SessionStart', timeoutSeconds: 30, context: true, bootWaitSeconds: 0 },
  // The first prompt waits for the host SessionStart started, so the handoff reaches the model.
  { event: 'BeforeAgent', timeoutSeconds: 60, context: true, bootWaitSeconds: 25 },
  // The first write of a session measures the accepted state (type-check, tests) before it runs.
  { event: 'BeforeTool', matcher: TOOLS, timeoutSeconds: 300, context: false, bootWaitSeconds: 60 },
  { event: 'AfterTool', matcher: TOOLS, timeoutSeconds: 600, context: true, bootWaitSeconds: 60 },
  // A stop may be judged: the turn's change checked as a whole, and undone when refused too often.
  { event: 'AfterAgent', timeoutSeconds: 600, context: false, bootWaitSeconds: 0 },
]

/**
 * Gemini CLI gives its hooks no call id: BeforeTool and AfterTool of one
 * call carry the same tool name and input, and calls run one at a time, so
 * those name the call (the same object serialized twice: the same text).
 */
function callIdOf(name: string, input: JsonObject): string {
  return `${name}:${createHash('sha256').update(JSON.stringify(input)).digest('hex').slice(0, 16)}`
}

function text(value: unknown): string {
  if (typeof value === 'string') return value
  if (Array.isArray(value)) return value.map(part => (isObject(part) && typeof part.text === 'string' ? part.text : '')).join('')
  return ''
}

function postResult(name: string, response: unknown): ToolResult {
  const r = isObject(response) ? response : {}
  if (isObject(r.error)) {
    const message = typeof r.error.message === 'string' ? r.error.message : text(r.llmContent)
    return { content: message, isError: true }
  }
  const content = text(r.llmContent)
  if (name !== SHELL) return { content }
  // The shell tool's text has an `Exit Code: N` line when N is not 0.
  const code = /^Exit Code: (\d+)$/m.exec(content)?.[1]
  const exitCode = code === undefined ? 0 : Number(code)
  return { content, exitCode, isError: exitCode !== 0 }
}

const translate = hookTranslator({
  agent: 'Gemini CLI',
  events: { sessionStart: 'SessionStart', prompt: 'BeforeAgent', stop: 'AfterAgent', preTool: 'BeforeTool', postTool: ['AfterTool'] },
  mcpPrefix: MCP_PREFIX,
  effects: name => (WRITERS[name] ? 'write' : name === SHELL ? 'shell' : undefined),
  callId: callIdOf,
  paths: (name, input, payload) => {
    const path = input[WRITERS[name]!]
    return typeof path === 'string' && path ? [resolve(payloadField('Gemini CLI', payload, 'cwd'), path)] : []
  },
  result: (_event, name, payload) => postResult(name, payload.tool_response),
})

// BeforeTool: a deny keeps the tool from running; AfterTool: a block's reason replaces the tool's result.
const reply = hookReplier(CONTEXT_EVENTS, true)

const settingsFile = (place: InstallPlace) => join(place.scope === 'user' ? place.home : place.workspace, '.gemini', 'settings.json')

function install(target: InstallTarget): ConfigEdit[] {
  return [editJson(settingsFile(target), settings => {
    const next = mergeHookGroups(settings, HOOKS.map(h => ({
      event: h.event, ...(h.matcher ? { matcher: h.matcher } : {}), command: target.hookCommand(h), timeout: h.timeoutSeconds * 1000,
    })), target.isOurs)
    return setEntry(next, ['mcpServers', MCP_NAME], { command: target.mcp.command, args: target.mcp.args })
  })]
}

function uninstall(place: InstallPlace, isOurs: (command: string) => boolean): ConfigEdit[] {
  return [editJson(settingsFile(place), settings => setEntry(removeHookGroups(settings, isOurs), ['mcpServers', MCP_NAME], undefined), true)]
}

/** Gemini CLI: `.gemini/settings.json` hooks and the checkpoint tool's MCP server. */
export const gemini: HookAdapter = { agent: 'gemini', hooks: HOOKS, translate, reply, install, uninstall, projectWord: '"$GEMINI_PROJECT_DIR"', sharesProjectFiles: true }
