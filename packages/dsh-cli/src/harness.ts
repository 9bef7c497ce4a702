import { Context } from '@deepseek-ai/cordis'
import Loader from '@deepseek-ai/cordis-plugin-loader'
import Include, { type PatchOptions } from '@deepseek-ai/cordis-plugin-include'
import type { EntryTree } from '@deepseek-ai/cordis-plugin-loader'
import { Logger, type Message } from '@deepseek-ai/cordis'
import { existsSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { sessionLogPath, type Session } from 'dsh-session'
import type { Agent } from 'dsh-agent'
import { loadScript } from 'dsh-llm'
import type {} from 'dsh-agent'
import { checkConfigFile, ConfigError } from './config-check.ts'

export { ConfigError }

/** The repo's default harness definition. */
export const DEFAULT_CONFIG = fileURLToPath(new URL('../../../cordis.yml', import.meta.url))

export interface HarnessOptions {
  /** cordis.yml to boot from (default: the repo's). Plugin names resolve to the installed suite wherever it lives. */
  config?: string
  /** Workspace root the session's tools act on. */
  workspace: string
  /** Vault directory (default `<workspace>/.dsh`). */
  vault?: string
  /** A scripted-model JSON Lines file: replaces the configured model. */
  script?: string
  /** Extra loader patches (insert entries, override config of an entry by id). */
  patches?: PatchOptions[]
  /** Log sink (warnings and errors of plugins); default: none. */
  log?: (line: string) => void
}

export interface Harness {
  ctx: Context
  configFile: string
  workspace: string
  vault: string
  /** Create a session on the workspace and its agent loop. */
  createSession(id?: string): { session: Session; agent: Agent }
  /** Dispose every plugin (persistence drains). Safe to call twice. */
  dispose(): Promise<void>
}

/**
 * Boot the harness from a cordis.yml through the loader/include plugins,
 * every plugin by name. Bad input (missing workspace, unreadable or invalid
 * config, unknown plugin, malformed script, a plugin failing to start)
 * throws `ConfigError` — one line naming the problem — before anything is
 * written.
 */
export async function bootHarness(options: HarnessOptions): Promise<Harness> {
  const workspace = resolve(options.workspace)
  if (!existsSync(workspace) || !statSync(workspace).isDirectory()) throw new ConfigError(`workspace ${workspace} does not exist or is not a directory`)
  const configFile = resolve(options.config ?? DEFAULT_CONFIG)
  const rows = checkConfigFile(configFile)
  const patches: PatchOptions[] = [...(options.patches ?? [])]
  if (options.script) {
    const script = resolve(options.script)
    loadScript(script) // throws ScriptError with file:line before anything runs
    if (rows.some(r => r.id === 'model')) patches.push({ id: 'model', disabled: true })
    patches.push({ insert: [{ id: 'scripted-model', name: 'dsh-llm/scripted', config: { path: script } }] })
  }
  const vault = resolve(options.vault ?? join(workspace, '.dsh'))

  const ctx = new Context()
  const errors: string[] = []
  ctx.logger.exporter({
    colors: false,
    // Cordis ranks WARN (2) above INFO (1): ask for warnings explicitly.
    levels: { default: 2 },
    export(message: Message) {
      if (message.type !== 'error' && message.type !== 'warn') return
      const line = `${message.type} [${message.name}] ${Logger.format(this, message)}`
      if (message.type === 'error') errors.push(line)
      options.log?.(line)
    },
  })
  await ctx.plugin(Loader, { baseUrl: pathToFileURL(configFile).href })
  // Patches are not supported on a missing `id`; keep only well-formed ones (checked above).
  await ctx.plugin(Include, { path: pathToFileURL(configFile).href, patches: patches.length ? patches : undefined })
  // The entries live in the Include's tree, not the loader's root: wait on it.
  await ctx.loader.await()
  await findEntryTree(ctx)?.await()
  let disposed = false
  const dispose = async () => {
    if (disposed) return
    disposed = true
    await ctx.fiber.dispose()
  }
  if (errors.length) {
    await dispose()
    throw new ConfigError(`${configFile}: a plugin failed to start: ${errors[0]!.split('\n')[0]}`)
  }
  for (const service of ['sessions', 'tools', 'llm', 'agents'] as const) {
    if (!ctx.get(service)) {
      await dispose()
      throw new ConfigError(`${configFile}: no "${service}" service after loading (is its plugin listed and enabled?)`)
    }
  }
  return {
    ctx,
    configFile,
    workspace,
    vault,
    createSession(id) {
      const session = ctx.sessions.create(id, { cwd: workspace, vault })
      return { session, agent: ctx.agents.create(session) }
    },
    dispose,
  }
}

/** The root entry tree of a harness booted by `bootHarness` (the Include of its cordis.yml). */
export function findEntryTree(ctx: Context): Include | undefined {
  for (const runtime of ctx.registry.values()) {
    for (const fiber of runtime.fibers) {
      let tree: EntryTree | undefined = fiber.entry?.parent.tree
      while (tree?.ctx.fiber.entry) tree = tree.ctx.fiber.entry.parent.tree
      if (tree instanceof Include) return tree
    }
  }
  return undefined
}

/** Where a session's log was saved, or why it was not (`saveError`: its last flush failed; no file: dsh-session/jsonl not loaded). */
export function describeSavedLog(vault: string, sessionId: string, saveError?: string): string {
  if (saveError) return `log NOT saved: ${saveError}`
  const file = sessionLogPath(vault, sessionId)
  return existsSync(file) ? `log ${file}` : 'log not saved (dsh-session/jsonl is not loaded)'
}

/** Flush a session's log; the reason when it could not be written (a full disk), else undefined. */
export async function saveSessionLog(session: Session): Promise<string | undefined> {
  try {
    await session.flush()
    return undefined
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
}
