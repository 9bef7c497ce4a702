import { readFileSync, rmSync } from 'node:fs'
import { homedir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { writeFileAtomicSync } from 'dsh-common'
import type { HookAdapter } from './adapter.ts'
import { agentHookFiles, liveHooks, liveHooksKey } from './live-config.ts'
import { isObject } from './settings.ts'

/**
 * The guard's own configuration in the agent's files: our hook entries
 * (project, local and user level, as the agent reads them) and our MCP
 * server entry. A call that changes them is the agent switching its guard
 * off (or bending it), so the host puts the files back and rolls the call
 * back. The files are small: reading them before and after a call costs a
 * few reads and parses.
 */
export interface ConfigPicture {
  /** Our entries, canonical: equal keys mean the agent runs the same guard. */
  key: string
  /** Each file's bytes (undefined: absent). */
  files: Map<string, Buffer | undefined>
}

/** The files holding the MCP server entry an adapter installs, and how to read ours out of each. */
function mcpFiles(agent: string, ws: string, home: string): { file: string; ours: (text: string) => unknown }[] {
  const server = (text: string) => {
    const v: unknown = JSON.parse(text)
    return isObject(v) && isObject(v.mcpServers) ? v.mcpServers.dsh : undefined
  }
  switch (agent) {
    case 'claude-code':
      return [
        { file: join(ws, '.mcp.json'), ours: server },
        {
          file: join(ws, '.claude', 'settings.json'),
          ours: text => {
            const v: unknown = JSON.parse(text)
            return isObject(v) && Array.isArray(v.enabledMcpjsonServers) && v.enabledMcpjsonServers.includes('dsh')
          },
        },
      ]
    case 'codex':
      return [{ file: join(ws, '.codex', 'config.toml'), ours: text => /# dsh hooks: begin[^\n]*\n[\s\S]*?# dsh hooks: end\n/.exec(text)?.[0] }]
    case 'gemini':
      return [{ file: join(ws, '.gemini', 'settings.json'), ours: server }, { file: join(home, '.gemini', 'settings.json'), ours: server }]
    default:
      return []
  }
}

function readBytes(file: string): Buffer | undefined {
  try {
    return readFileSync(file)
  } catch {
    // ENOENT (or unreadable): absent as far as the agent is concerned.
    return undefined
  }
}

/** Our entries in `adapter`'s configuration for `workspace`, and the bytes of every file that holds them. */
export function pictureConfig(adapter: HookAdapter, workspace: string, home = homedir()): ConfigPicture {
  const ws = resolve(workspace)
  const mcp = mcpFiles(adapter.agent, ws, home)
  const names = [...new Set([...agentHookFiles(adapter.agent, ws, home).map(f => f.file), ...mcp.map(m => m.file)])]
  const files = new Map(names.map(f => [f, readBytes(f)]))
  const servers = mcp.map(m => {
    const bytes = files.get(m.file)
    if (!bytes) return null
    try {
      return m.ours(bytes.toString('utf8')) ?? null
    } catch {
      // Not parseable now: our entry is not one the agent can read.
      return 'unreadable'
    }
  })
  // Claude Code runs no hook at all while any settings file says `disableAllHooks`.
  const switches = adapter.agent === 'claude-code' ? agentHookFiles(adapter.agent, ws, home).map(f => {
    try {
      const v: unknown = JSON.parse(files.get(f.file)?.toString('utf8') ?? '{}')
      return isObject(v) ? v.disableAllHooks ?? null : null
    } catch {
      return null
    }
  }) : []
  return { key: JSON.stringify([liveHooksKey(liveHooks(adapter, ws, home)), servers, switches]), files }
}

/** A file as the model should see it: relative to the workspace, or from `~`. */
export function configName(file: string, workspace: string, home = homedir()): string {
  const ws = resolve(workspace)
  if (file.startsWith(`${ws}/`)) return relative(ws, file)
  if (file.startsWith(`${resolve(home)}/`)) return `~/${relative(resolve(home), file)}`
  return file
}

/**
 * When our entries differ from `before`: put back (atomically) every file
 * of the picture whose bytes changed, and return their paths; undefined
 * when our entries are as they were (other changes to those files are the
 * agent's business).
 */
export function restoreConfig(adapter: HookAdapter, workspace: string, before: ConfigPicture, home = homedir()): string[] | undefined {
  const now = pictureConfig(adapter, workspace, home)
  if (now.key === before.key) return undefined
  const restored: string[] = []
  for (const [file, bytes] of before.files) {
    const current = now.files.get(file)
    if (bytes === undefined ? current === undefined : current?.equals(bytes)) continue
    // A file the call created goes again.
    if (bytes === undefined) rmSync(file, { force: true })
    else writeFileAtomicSync(file, bytes)
    restored.push(file)
  }
  return restored
}
