import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { ToolResult } from 'dsh-tools'
import { hookReplier, hookTranslator, payloadField, type ConfigEdit, type HookAdapter, type HookEntry, type InstallPlace, type InstallTarget } from '../adapter.ts'
import { editJson, isObject, mergeHookGroups, removeHookGroups, SettingsError, type JsonObject } from '../settings.ts'

// Codex CLI (`@openai/codex` 0.171): hooks in `.codex/hooks.json` (Claude Code's
// shape and event names, regex matchers, `timeout` in seconds), MCP servers in
// `.codex/config.toml`. Project config, hooks included, is read only in a
// trusted project, and each hook must be trusted once (Codex asks; `codex exec`
// skips untrusted hooks unless `--dangerously-bypass-hook-trust`).

const MCP_NAME = 'dsh'
const MCP_PREFIX = `mcp__${MCP_NAME}__`
const TOOLS = `apply_patch|Bash|${MCP_PREFIX}.*`
/** Events where Codex turns `hookSpecificOutput.additionalContext` into a developer message. */
const CONTEXT_EVENTS = new Set(['SessionStart', 'UserPromptSubmit', 'PostToolUse'])

const HOOKS: HookEntry[] = [
  { event: 'SessionStart', timeoutSeconds: 30, context: true, bootWaitSeconds: 0 },
  // The first prompt waits for the host SessionStart started, so the handoff reaches the model.
  { event: 'UserPromptSubmit', timeoutSeconds: 60, context: true, bootWaitSeconds: 25 },
  // The first write of a session measures the accepted state (type-check, tests) before it runs.
  { event: 'PreToolUse', matcher: TOOLS, timeoutSeconds: 300, context: false, bootWaitSeconds: 60 },
  { event: 'PostToolUse', matcher: TOOLS, timeoutSeconds: 600, context: true, bootWaitSeconds: 60 },
  // A stop may be judged: the turn's change checked as a whole, and undone when refused too often.
  { event: 'Stop', timeoutSeconds: 600, context: false, bootWaitSeconds: 0 },
]

const PATCH_PATH = /^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+)$/gm

/** Every path an `apply_patch` patch adds, updates, deletes or moves to, resolved against `cwd`. */
function patchPaths(patch: string, cwd: string): string[] {
  return [...new Set([...patch.matchAll(PATCH_PATH)].map(m => resolve(cwd, m[1]!.trim())))]
}

const TAIL_BYTES = 256 * 1024

/**
 * The exit code Codex recorded for a shell call, from the tail of its session
 * transcript: PostToolUse carries only the command's output, while the
 * transcript already holds the finished item (`exit_code`). Undefined when
 * it is not there (no transcript, or written later than this version does).
 */
function transcriptExitCode(transcript: string, callId: string): number | undefined {
  let text: string
  try {
    const fd = openSync(transcript, 'r')
    try {
      const size = fstatSync(fd).size
      const start = Math.max(0, size - TAIL_BYTES)
      const buffer = Buffer.alloc(size - start)
      readSync(fd, buffer, 0, buffer.length, start)
      text = buffer.toString('utf8')
    } finally {
      closeSync(fd)
    }
  } catch {
    // no transcript to read (moved, not written yet): the exit code stays unknown
    return undefined
  }
  const lines = text.split('\n').reverse()
  for (const line of lines) {
    if (!line.includes(callId) || !line.includes('"exit_code"')) continue
    try {
      const item = (JSON.parse(line) as { payload?: { item?: { id?: unknown; exit_code?: unknown } } }).payload?.item
      if (item?.id === callId && typeof item.exit_code === 'number') return item.exit_code
    } catch {
      // a line cut by the tail window: not the one
    }
  }
  return undefined
}

function postResult(tool: string, p: JsonObject, callId: string): ToolResult {
  const content = typeof p.tool_response === 'string' ? p.tool_response : JSON.stringify(p.tool_response ?? '')
  if (tool === 'apply_patch') {
    const code = /^Exit code: (\d+)/.exec(content)?.[1]
    return { content, isError: code !== undefined && code !== '0' }
  }
  const exitCode = typeof p.transcript_path === 'string' ? transcriptExitCode(p.transcript_path, callId) : undefined
  return { content, ...(exitCode !== undefined ? { exitCode, isError: exitCode !== 0 } : {}) }
}

const translate = hookTranslator({
  agent: 'Codex',
  events: { sessionStart: 'SessionStart', prompt: 'UserPromptSubmit', stop: 'Stop', preTool: 'PreToolUse', postTool: ['PostToolUse'] },
  mcpPrefix: MCP_PREFIX,
  effects: name => (name === 'apply_patch' ? 'write' : name === 'Bash' ? 'shell' : undefined),
  callId: (_name, _input, payload) => payloadField('Codex', payload, 'tool_use_id'),
  paths: (_name, input, payload) => patchPaths(typeof input.command === 'string' ? input.command : '', payloadField('Codex', payload, 'cwd')),
  result: (_event, name, payload, callId) => postResult(name, payload, callId),
})

// Codex gives the model a block's reason in place of the tool's output.
const reply = hookReplier(CONTEXT_EVENTS)

const root = (place: InstallPlace) => (place.scope === 'user' ? place.home : place.workspace)
const hooksFile = (place: InstallPlace) => join(root(place), '.codex', 'hooks.json')
const configFile = (place: InstallPlace) => join(root(place), '.codex', 'config.toml')

// config.toml is TOML, which this package does not parse: the MCP server goes in
// as one marked block at the end of the file, found and taken out by its marks.
// The begin mark names the commands that wrote it and take it out (`dsh hooks install`, `dsh-guard setup`).
const begin = (by: InstallTarget['installedBy']) => `# dsh hooks: begin (written by \`${by.install}\`; \`${by.uninstall}\` takes it out)`
const END = '# dsh hooks: end'
// The blank line install puts before the block goes with it; the user's line end stays. Any installer's block.
const BLOCK = new RegExp(`(?:(?<=\\n)\\n)?# dsh hooks: begin[^\\n]*\\n[\\s\\S]*?${END}\\n`)

function readText(file: string): string | undefined {
  return existsSync(file) ? readFileSync(file, 'utf8') : undefined
}

/** config.toml with our `[mcp_servers.dsh]` block (replacing an earlier one), or without it (`target` undefined). */
function withMcpBlock(text: string | undefined, target: Pick<InstallTarget, 'mcp' | 'installedBy'> | undefined): string | undefined {
  const rest = (text ?? '').replace(BLOCK, '')
  if (!target) return rest.trim() ? rest : undefined
  const { mcp } = target
  if (/^\s*\[mcp_servers\.(dsh|"dsh")\]/m.test(rest)) {
    throw new SettingsError(`${MCP_NAME} is already an MCP server of .codex/config.toml ([mcp_servers.${MCP_NAME}]); rename or remove it first, nothing was changed`)
  }
  const block = [begin(target.installedBy), `[mcp_servers.${MCP_NAME}]`, `command = ${JSON.stringify(mcp.command)}`, `args = [${mcp.args.map(a => JSON.stringify(a)).join(', ')}]`, END].join('\n') + '\n'
  if (!rest) return block
  return `${rest}${rest.endsWith('\n') ? '' : '\n'}\n${block}`
}

function install(target: InstallTarget): ConfigEdit[] {
  const config = configFile(target)
  const before = readText(config)
  return [
    editJson(hooksFile(target), hooks => mergeHookGroups(hooks, HOOKS.map(h => ({
      event: h.event, ...(h.matcher ? { matcher: h.matcher } : {}), command: target.hookCommand(h), timeout: h.timeoutSeconds,
    })), target.isOurs)),
    { file: config, before, after: withMcpBlock(before, target) },
  ]
}

function uninstall(place: InstallPlace, isOurs: (command: string) => boolean): ConfigEdit[] {
  const config = configFile(place)
  const before = readText(config)
  return [
    editJson(hooksFile(place), hooks => removeHookGroups(hooks, isOurs), true),
    { file: config, before, after: withMcpBlock(before, undefined) },
  ]
}

/** Codex CLI: `.codex/hooks.json` hooks, `.codex/config.toml` for the checkpoint tool's MCP server. */
export const codex: HookAdapter = { agent: 'codex', hooks: HOOKS, translate, reply, install, uninstall, projectWord: '"$PWD"', sharesProjectFiles: true }
