import { existsSync, readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import type { HookAdapter } from './adapter.ts'
import { isOurCommand } from './install.ts'
import { isObject } from './settings.ts'

/** Where an agent reads hook entries from: the project's files and the user's. */
export interface HookFile {
  file: string
  level: 'project' | 'local' | 'user'
}

/**
 * The files each agent reads hooks from, as it reads them (the project's
 * shared file, the project's local one, the user's), for `workspace` and
 * the user whose home is `home`.
 */
export function agentHookFiles(agent: string, workspace: string, home = homedir()): HookFile[] {
  const ws = resolve(workspace)
  switch (agent) {
    case 'claude-code':
      return [
        { file: join(ws, '.claude', 'settings.json'), level: 'project' },
        { file: join(ws, '.claude', 'settings.local.json'), level: 'local' },
        { file: join(home, '.claude', 'settings.json'), level: 'user' },
      ]
    case 'codex':
      return [
        { file: join(ws, '.codex', 'hooks.json'), level: 'project' },
        { file: join(home, '.codex', 'hooks.json'), level: 'user' },
      ]
    case 'gemini':
      return [
        { file: join(ws, '.gemini', 'settings.json'), level: 'project' },
        { file: join(home, '.gemini', 'settings.json'), level: 'user' },
      ]
    default:
      return []
  }
}

/** One hook entry of ours found in an agent's live configuration. */
export interface LiveHookEntry {
  file: string
  level: HookFile['level']
  event: string
  matcher?: string
  command: string
  /** The workspace the command guards (its first argument after the client). */
  workspace?: string
}

/** What an agent's live configuration holds of ours. */
export interface LiveHooks {
  agent: string
  /** Our entries for this workspace, in file then event order. */
  entries: LiveHookEntry[]
  /** Events the adapter installs that have no entry of ours (every event when nothing is installed). */
  missing: string[]
  /** Files that exist but could not be read as the agent's hook configuration. */
  unreadable: { file: string; problem: string }[]
}

/** The workspace argument of a hook command line of ours (`sh '…/dsh-hook' '<workspace>' agent event …`). */
function commandWorkspace(command: string): string | undefined {
  const m = /\/dsh-host-hooks\/bin\/dsh-hook'? +'((?:[^']|'\\'')*)'/.exec(command)
  return m ? m[1]!.replace(/'\\''/g, `'`) : undefined
}

/**
 * Our hook entries in `adapter`'s live configuration for `workspace`: what
 * the agent will run, read from its own files (not from what install
 * recorded), so a removed, edited or restored entry shows as it is. An
 * entry of ours for another workspace does not count.
 */
export function liveHooks(adapter: HookAdapter, workspace: string, home = homedir()): LiveHooks {
  const ws = resolve(workspace)
  const out: LiveHooks = { agent: adapter.agent, entries: [], missing: [], unreadable: [] }
  for (const { file, level } of agentHookFiles(adapter.agent, ws, home)) {
    if (!existsSync(file)) continue
    let value: unknown
    try {
      const text = readFileSync(file, 'utf8')
      value = text.trim() ? JSON.parse(text) : {}
    } catch (error) {
      out.unreadable.push({ file, problem: (error as Error).message })
      continue
    }
    if (!isObject(value)) {
      out.unreadable.push({ file, problem: 'not a JSON object' })
      continue
    }
    if (value.hooks === undefined) continue
    if (!isObject(value.hooks)) {
      out.unreadable.push({ file, problem: '"hooks" is not an object' })
      continue
    }
    for (const [event, groups] of Object.entries(value.hooks)) {
      if (!Array.isArray(groups)) continue
      for (const group of groups) {
        if (!isObject(group) || !Array.isArray(group.hooks)) continue
        for (const hook of group.hooks) {
          const command = isObject(hook) && typeof hook.command === 'string' ? hook.command : undefined
          if (!command || !isOurCommand(command)) continue
          const target = commandWorkspace(command)
          if (target !== undefined && resolve(target) !== ws) continue
          out.entries.push({ file, level, event, ...(typeof group.matcher === 'string' ? { matcher: group.matcher } : {}), command, ...(target !== undefined ? { workspace: target } : {}) })
        }
      }
    }
  }
  const events = new Set(out.entries.map(e => e.event))
  out.missing = adapter.hooks.map(h => h.event).filter(e => !events.has(e))
  return out
}

/** A canonical text of `live`'s entries: equal texts mean the agent runs the same hooks of ours. */
export function liveHooksKey(live: LiveHooks): string {
  return JSON.stringify(live.entries.map(e => [e.file, e.event, e.matcher ?? null, e.command]).sort())
}
