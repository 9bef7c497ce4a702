import type { ToolResult } from 'dsh-tools'
import { isObject, type ConfigEdit, type JsonObject } from './settings.ts'

export type { ConfigEdit } from './settings.ts'

/**
 * What one hook call of an agent means to the suite, once its adapter has
 * read the agent's payload. Every kind carries the agent's session id, which
 * is the suite's session id.
 */
export type HookCall =
  /** A session started or resumed: the answer carries the handoff (and the proof summary). */
  | { kind: 'session-start'; sessionId: string }
  /** The user sent a prompt: a turn opens; the answer carries the proof summary if it changed. */
  | { kind: 'prompt'; sessionId: string; text: string }
  /** A guarded tool is about to run: snapshot what it will touch. */
  | { kind: 'pre-tool'; sessionId: string; callId: string; tool: PlannedTool }
  /** A guarded tool ran (or failed): judge it. */
  | { kind: 'post-tool'; sessionId: string; callId: string; name: string; result: ToolResult }
  /** A call of one of the suite's own tools (`checkpoint`) through the MCP server is about to run. */
  | { kind: 'suite-tool'; sessionId: string; name: string; arguments: unknown }
  /** The agent finished answering: the turn closes. */
  | { kind: 'stop'; sessionId: string }
  /** Nothing for the suite (a tool it does not guard, an event it does not use). */
  | { kind: 'ignore' }

/** A tool call of the agent, as the suite's tools see it. */
export interface PlannedTool {
  /** The agent's own tool name (`Write`, `Bash`, …): it is the name in the log and in a rollback message. */
  name: string
  effects: 'write' | 'shell'
  /** For writers: every path the call may create, modify or delete (absolute or relative to the workspace). */
  paths: string[]
  /** The arguments as logged; a shell call's command is `arguments.command` (what dsh-claims reads). */
  arguments: Record<string, unknown>
}

/** What the suite decided about a hook call; the adapter words it in the agent's protocol. */
export type HookAnswer =
  /** Go on; `context` (when set) is shown to the model. */
  | { kind: 'continue'; context?: string }
  /** Before a tool: do not run it (a path outside the workspace, a snapshot that could not be taken). */
  | { kind: 'deny'; reason: string }
  /** After a tool: its effect was undone; `reason` is the suite's `rolled back: …` text. */
  | { kind: 'block'; reason: string }
  /** At a stop: the turn is not done (it leaves the project worse than it began); the agent goes on with `reason`. */
  | { kind: 'refuse'; reason: string }

/** One hook entry an adapter installs: which event, which tools (a matcher), how long the agent waits. */
export interface HookEntry {
  /** The agent's event name (`PreToolUse`, `AfterTool`, …). */
  event: string
  /** The agent's tool matcher, when the event takes one. */
  matcher?: string
  /** Seconds the agent waits for the hook; the client answers before then. */
  timeoutSeconds: number
  /** Whether the agent shows the model context given in the answer to this event. */
  context: boolean
  /**
   * Seconds the client waits for a host that is starting (0: it starts it and
   * fails open at once). A tool event waiting gets its write verified; a
   * context-taking one that still fails open tells the model, each time.
   */
  bootWaitSeconds: number
}

/**
 * Where an install goes: `project` — one project, its machine-specific parts
 * in files the agent keeps out of version control where it has them; `user`
 * — every project of this user (the agent's files in the home directory).
 */
export type InstallScope = 'project' | 'user'

/** The project (or, for `user`, the home directory) an install writes into, and the user's home. */
export interface InstallPlace {
  scope: InstallScope
  workspace: string
  home: string
}

/** What an adapter needs to write its agent's configuration. */
export interface InstallTarget extends InstallPlace {
  /** The shell command line the agent runs for one hook entry (the hook client, quoted). */
  hookCommand(entry: HookEntry): string
  /** True for a hook command line the host installed (any checkout, any workspace): replaced on reinstall. */
  isOurs(command: string): boolean
  /** The MCP server that offers the suite's tools: program and arguments. */
  mcp: { command: string; args: string[] }
  /** The commands that install and uninstall (a marker in a file says who wrote it). */
  installedBy: InstalledBy
}

/** The command lines, as a user types them, that installed the hooks and take them out. */
export interface InstalledBy {
  install: string
  uninstall: string
}

/**
 * One agent's side of the host, one file each under `src/adapters/`:
 * reading its hook payloads, wording the suite's answers in its protocol,
 * and writing (and taking out) its project-level configuration.
 */
export interface HookAdapter {
  /** The `--agent` name (`claude-code`, `codex`, `gemini`). */
  readonly agent: string
  /** The hook entries `install` writes. */
  readonly hooks: readonly HookEntry[]
  /**
   * Read one hook payload (the JSON the agent wrote on the hook's stdin) for `event`.
   * @throws Error naming what is missing when the payload is not the agent's.
   */
  translate(event: string, payload: unknown): HookCall
  /** The JSON the hook writes on stdout for `answer` to `event`; `undefined`: write nothing (exit 0). */
  reply(event: string, answer: HookAnswer): unknown
  /** The configuration files after installing (each merged with what the user already has; idempotent). */
  install(target: InstallTarget): ConfigEdit[]
  /** The configuration files after taking out exactly what `install` added (an absent file stays absent). */
  uninstall(place: InstallPlace, isOurs: (command: string) => boolean): ConfigEdit[]
  /** The shell word a user-level hook command names the project with (the agent's project variable, or the hook's cwd). */
  readonly projectWord: string
  /**
   * Whether a project-level install writes files a team commits: the agent
   * has no local, uncommitted settings of a project (Codex 0.171 reads
   * `.codex/`, Gemini CLI 0.61 `.gemini/settings.json`, nothing beside them).
   * Such an install names no path of this machine only with `onPath`.
   */
  readonly sharesProjectFiles: boolean
}

/** `payload[name]` as a non-empty string. @throws Error naming the agent and the field when it is not one. */
export function payloadField(agent: string, payload: JsonObject, name: string): string {
  const v = payload[name]
  if (typeof v !== 'string' || !v) throw new Error(`${agent} hook payload without "${name}"`)
  return v
}

/** The parts of an agent's hook protocol that differ between agents; {@link hookTranslator} does the rest. */
export interface HookProtocol {
  /** The agent's name in error messages (`Claude Code`). */
  agent: string
  /** The agent's event names: each maps to one {@link HookCall} kind (any other event is ignored). */
  events: { sessionStart: string; prompt: string; stop: string; preTool: string; postTool: readonly string[] }
  /** How the agent names the suite's MCP tools (`mcp__dsh__`; more than one when a plugin's server is named apart): a call of one is a `suite-tool` call before it runs. */
  mcpPrefix: string | readonly string[]
  /** What a tool does: `write` or `shell` when the suite guards it; undefined: ignored. */
  effects(name: string): PlannedTool['effects'] | undefined
  /** The id pairing a call's pre-tool and post-tool payloads. */
  callId(name: string, input: JsonObject, payload: JsonObject): string
  /** A writer's paths, from its input. */
  paths(name: string, input: JsonObject, payload: JsonObject): string[]
  /** A tool's result, from the post-tool payload. */
  result(event: string, name: string, payload: JsonObject, callId: string): ToolResult
}

/**
 * An adapter's `translate`: session start, prompt and stop events as they
 * are; a tool event of a guarded tool as a pre-tool or post-tool call; a
 * call of the suite's own MCP tool as a suite-tool call (before it runs).
 */
export function hookTranslator(p: HookProtocol): HookAdapter['translate'] {
  return (event, payload) => {
    if (!isObject(payload)) throw new Error(`${p.agent} hook payload is not a JSON object`)
    const sessionId = payloadField(p.agent, payload, 'session_id')
    if (event === p.events.sessionStart) return { kind: 'session-start', sessionId }
    if (event === p.events.prompt) return { kind: 'prompt', sessionId, text: typeof payload.prompt === 'string' ? payload.prompt : '' }
    if (event === p.events.stop) return { kind: 'stop', sessionId }
    const pre = event === p.events.preTool
    if (!pre && !p.events.postTool.includes(event)) return { kind: 'ignore' }
    const name = payloadField(p.agent, payload, 'tool_name')
    const input = isObject(payload.tool_input) ? payload.tool_input : {}
    const prefix = (typeof p.mcpPrefix === 'string' ? [p.mcpPrefix] : p.mcpPrefix).find(x => name.startsWith(x))
    if (prefix) return pre ? { kind: 'suite-tool', sessionId, name: name.slice(prefix.length), arguments: input } : { kind: 'ignore' }
    const effects = p.effects(name)
    if (!effects) return { kind: 'ignore' }
    const callId = p.callId(name, input, payload)
    if (!pre) return { kind: 'post-tool', sessionId, callId, name, result: p.result(event, name, payload, callId) }
    return { kind: 'pre-tool', sessionId, callId, tool: { name, effects, paths: effects === 'write' ? p.paths(name, input, payload) : [], arguments: input } }
  }
}

/**
 * An adapter's `reply`: a block as `decision: "block"` with its reason (the
 * reason replaces the tool's result); context as
 * `hookSpecificOutput.additionalContext` on the events in `contextEvents`
 * (nothing on the others); a deny as Claude Code's `permissionDecision`
 * (Claude Code, Codex CLI) or, `denyAsDecision`, as `decision: "deny"`
 * (Gemini CLI); a refused stop as the stop event's `decision: "block"`
 * (Claude Code `Stop`, Codex `Stop`) or, `denyAsDecision`, `decision:
 * "deny"` (Gemini CLI `AfterAgent`, which sends the reason as the next prompt).
 */
export function hookReplier(contextEvents: ReadonlySet<string>, denyAsDecision = false): HookAdapter['reply'] {
  return (event, answer) => {
    switch (answer.kind) {
      case 'deny':
        return denyAsDecision
          ? { decision: 'deny', reason: answer.reason }
          : { hookSpecificOutput: { hookEventName: event, permissionDecision: 'deny', permissionDecisionReason: answer.reason } }
      case 'block':
        return { decision: 'block', reason: answer.reason }
      case 'refuse':
        return { decision: denyAsDecision ? 'deny' : 'block', reason: answer.reason }
      case 'continue':
        return answer.context && contextEvents.has(event) ? { hookSpecificOutput: { hookEventName: event, additionalContext: answer.context } } : undefined
    }
  }
}
