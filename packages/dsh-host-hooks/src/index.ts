/**
 * dsh-host-hooks — the suite as a guard of hook-driven agents (Claude Code,
 * Codex CLI, Gemini CLI). Not a plugin: a host. One warm process per
 * workspace (`dsh hooks serve`) boots the suite from cordis.yml, unchanged,
 * and serves hook calls on a socket in the vault; `bin/dsh-hook` is the
 * per-call client (POSIX sh + curl); `runMcpServer` offers the suite's own
 * tools (`checkpoint`) to the agent. Each agent's protocol and
 * configuration is one adapter file under `src/adapters/`.
 */
export type { ConfigEdit, HookAdapter, HookAnswer, HookCall, HookEntry, InstallTarget, InstalledBy, PlannedTool } from './adapter.ts'
export { ADAPTERS, adapterFor } from './adapters/index.ts'
export { HookHost, type HookHostParts, type PendingVerdict } from './host.ts'
export { MESSAGES } from './messages.ts'
export { readChainTail, type WitnessHead, type WitnessReport } from './chain-witness.ts'
export { hookPaths } from './paths.ts'
export { applyHostSettings, readHostSettings, writeHostSettings, type HostSettings, type ReadHostSettings } from './host-settings.ts'
export { askPendingVerdicts, askWitness, claimHost, settleHostVerdicts, HostRunningError, hostStatus, listenHooks, requestSocket, stopHost, type HookServer, type HostStatus, type ListenOptions } from './server.ts'
export { GUARD_COMMANDS, HOOK_CLIENT, hookCommand, installedAgents, installHooks, isOurCommand, uninstallHooks, writeNoteTemplates, type InstallReport } from './install.ts'
export { SettingsError } from './settings.ts'
export { agentHookFiles, liveHooks, liveHooksKey, type HookFile, type LiveHookEntry, type LiveHooks } from './live-config.ts'
export { runMcpServer, type McpOptions } from './mcp.ts'
export { startHost } from './launch.ts'
