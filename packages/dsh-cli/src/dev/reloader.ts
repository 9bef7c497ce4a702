import type { Context, Fiber, FiberState, Message } from '@deepseek-ai/cordis'
import type { Entry, EntryOptions, EntryTree } from '@deepseek-ai/cordis-plugin-loader'
import Include, { applyEntryPatches, entryListSchema } from '@deepseek-ai/cordis-plugin-include'
import { readFileSync, realpathSync } from 'node:fs'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import yaml from 'js-yaml'
import { isInside } from 'dsh-common'
import { checkConfigFile, resolvePluginName } from '../config-check.ts'
import { findEntryTree } from '../harness.ts'
export { findEntryTree }
import { configKey, diffEntryStates, removedIds, type EntryState } from './config-diff.ts'
import { locateError, type LocatedError } from './error-location.ts'
import { buildImportGraph, scopeOf, staleFiles, type ImportGraph } from './import-graph.ts'
import type { ModuleVersions } from './module-versions.ts'
import type { ConfigReloadReport, EntryReload, PluginReloadReport } from './report.ts'

export interface PluginReloaderOptions {
  /** The cordis.yml the harness booted from (its Include tree is found in `ctx`). */
  configFile: string
  versions: ModuleVersions
  /**
   * Directories whose plugin entries are tracked even inside node_modules
   * (by default an entry is tracked when its source resolves outside any
   * node_modules directory: the repo's packages and local plugin files).
   */
  watch?: string[]
}

/** A loader entry whose plugin source is on disk and tracked. */
export interface TrackedEntry {
  id: string
  name: string
  graph: ImportGraph
}

/** What plugins did while a reload ran. */
interface Window {
  ids: Set<string>
  restarted: Set<string>
  errors: LocatedError[]
}


// FiberState is a const enum (declared, not emitted): its two values used here.
const LOADING = 1 as FiberState
const ACTIVE = 2 as FiberState

/**
 * Dispose an entry's fiber the way the loader disposes a disabled entry's.
 * The loader persists `disabled: true` (rewrites cordis.yml) when an
 * enabled entry's fiber goes away — meant for a plugin that disposes
 * itself — so the entry reads as disabled for the moment of the disposal,
 * then gets its own raw `disabled` value (an expression stays one) back.
 */
async function stopEntry(entry: Entry): Promise<void> {
  const fiber: Fiber | undefined = entry.fiber
  if (!fiber || fiber.uid === null) return
  const had = Object.hasOwn(entry.options, 'disabled')
  const raw = entry.options.disabled
  entry.options.disabled = true
  try {
    await fiber.dispose()
  } finally {
    if (had) entry.options.disabled = raw
    else delete entry.options.disabled
  }
}

/**
 * Hot reload for a running harness on Node 20: re-imports an edited
 * plugin's module graph under fresh URLs and swaps its fiber, and applies a
 * changed cordis.yml to the running entry tree, while sessions, agents and
 * the other plugins keep running.
 *
 * Nothing is ever written back to cordis.yml: the loader would persist a
 * stopped entry as disabled (see `stopEntry`), and dump the patched tree
 * over the user's file.
 */
export class PluginReloader {
  private readonly _graphs = new Map<string, ImportGraph>()
  /** The entries as last applied (boot or cordis.yml reload); `!!js` toggles evaluated then. */
  private _applied: EntryState[]
  private _window?: Window
  /** The reloader's own listeners, in a child fiber: disposing it removes them all. */
  private readonly _listeners: Fiber
  /** Resolves once the listeners are in place (a plugin applies on a later tick). */
  readonly ready: Promise<void>

  constructor(private readonly ctx: Context, private readonly tree: Include, private readonly options: PluginReloaderOptions) {
    this._listeners = ctx.plugin((ctx: Context) => {
      ctx.effect(() => ctx.logger.exporter({
        colors: false,
        export: (message: Message) => {
          if (message.type !== 'error' || !this._window) return
          const error = message.args.find((a): a is Error => a instanceof Error)
          this._window.errors.push(error ? locateError(error) : { message: String(message.args[0] ?? '') })
        },
      }), 'dsh dev error capture')
      ctx.on('internal/status', (fiber) => {
        const id = fiber.entry?.id
        if (!this._window || !id || this._window.ids.has(id)) return
        if (fiber.state === LOADING) this._window.restarted.add(id)
      })
    })
    this.ready = Promise.resolve(this._listeners).then(() => {})
    this.track()
    this._applied = this.states()
  }

  /** Every non-group entry of the tree (nested groups and includes too). */
  entries(): Entry[] {
    return [...this.tree.entries()].filter(e => !e.options.group)
  }

  /** The entry file of an entry's plugin, when it is on disk and tracked. */
  sourceOf(entry: Entry): string | undefined {
    const name = entry.options.name
    if (!name || name.startsWith('cordis:')) return undefined
    const baseUrl = entry.parent.tree.ctx.baseUrl
    const configDir = baseUrl?.startsWith('file:') ? fileURLToPath(new URL('.', baseUrl)) : dirname(this.options.configFile)
    const resolved = resolvePluginName(name, configDir)
    if (!resolved || resolved.startsWith('cordis:')) return undefined
    let file: string
    try {
      file = realpathSync(resolved)
    } catch {
      return undefined // resolved but gone: nothing to watch until it is back
    }
    const outsideDeps = !/[\\/]node_modules[\\/]/.test(file)
    return outsideDeps || (this.options.watch ?? []).some(root => isInside(root, file)) ? file : undefined
  }

  /**
   * Rebuild the import graph of every tracked entry (from the sources on
   * disk). An entry whose file is gone keeps its last graph, so it stays
   * watched and its return reloads it.
   */
  track(): TrackedEntry[] {
    const tracked: TrackedEntry[] = []
    const previous = new Map(this._graphs)
    this._graphs.clear()
    for (const entry of this.entries()) {
      const file = this.sourceOf(entry)
      const graph = file ? buildImportGraph(file, scopeOf(file)) : previous.get(entry.id)
      if (!graph) continue
      this._graphs.set(entry.id, graph)
      tracked.push({ id: entry.id, name: entry.options.name, graph })
    }
    return tracked
  }

  /** The files to watch: every tracked entry's sources, and cordis.yml. */
  watchedFiles(): string[] {
    const files = new Set<string>([realpathSync(this.options.configFile)])
    for (const graph of this._graphs.values()) for (const file of graph.files) files.add(file)
    return [...files].sort()
  }

  /**
   * Reload every entry whose module graph contains one of `changed`: new
   * versions for the changed files and their importers, then per entry:
   * import the new source (a failure leaves the running version alone),
   * stop the running version, start the new one.
   * @returns undefined when no tracked entry uses any of the files.
   */
  async reloadFiles(changed: readonly string[]): Promise<PluginReloadReport | undefined> {
    const start = performance.now()
    const before = new Map(this._graphs)
    const tracked = this.track()
    const hits = tracked.filter(t => changed.some(f => t.graph.files.has(f) || before.get(t.id)?.files.has(f)))
    if (!hits.length) return undefined
    const stale = new Set<string>()
    for (const t of hits) {
      for (const file of staleFiles(t.graph, changed)) stale.add(file)
      stale.add(t.graph.entry) // a new entry URL is what makes the loader's import fresh
    }
    await this.options.versions.bump([...stale])
    const byId = new Map(this.entries().map(e => [e.id, e]))
    const targets = hits.map(t => byId.get(t.id)).filter((e): e is Entry => !!e)
    const { result: entries, window } = await this.observe(targets, () => this.restartEntries(targets))
    return {
      kind: 'plugins',
      files: changed.filter(f => hits.some(t => t.graph.files.has(f) || before.get(t.id)?.files.has(f))),
      entries,
      restarted: [...window.restarted],
      errors: window.errors.filter(e => !entries.some(r => r.outcome === 'failed' && r.error.message === e.message)),
      durationMs: performance.now() - start,
    }
  }

  /**
   * Apply the current cordis.yml to the running tree: entries added,
   * removed, enabled, disabled, reconfigured (restarted with the new
   * config) or given another plugin name. An unusable file changes nothing.
   */
  async reloadConfig(): Promise<ConfigReloadReport> {
    const start = performance.now()
    const file = this.options.configFile
    let data: EntryOptions[]
    try {
      checkConfigFile(file)
      data = yaml.load(readFileSync(file, 'utf8'), { schema: entryListSchema }) as EntryOptions[]
    } catch (error) {
      return { kind: 'config', file, error: { message: (error as Error).message }, entries: [], restarted: [], errors: [], durationMs: performance.now() - start }
    }
    const before = this._applied
    const next = applyEntryPatches(data, this.tree.config.patches, () => {})
    // The loader persists `disabled: true` for an entry whose fiber stops while it
    // is enabled (meant for a plugin disposing itself); an entry about to be
    // removed is marked first, so removal never rewrites the user's file.
    for (const id of removedIds(Object.keys(this.tree.store), flattenIds(next))) {
      this.tree.store[id]!.options.disabled = true
    }
    const { window, result: entries } = await this.observe([], async () => {
      await this.tree.refresh()
      await this.tree.await()
      const after = this._applied = this.states()
      const diff = diffEntryStates(before, after)
      const byId = new Map(this.entries().map(e => [e.id, e]))
      // The loader keeps the old plugin running when only the name changed.
      const renamed = diff.renamed.map(id => byId.get(id)).filter((e): e is Entry => !!e && !e.disabled)
      const results = await this.restartEntries(renamed)
      for (const id of [...diff.added, ...diff.enabled, ...diff.reconfigured]) {
        const entry = byId.get(id)
        if (entry) results.push(await this.outcomeOf(entry, 'previous'))
      }
      return { diff, results }
    })
    this.track()
    const changed = new Set([...entries.diff.added, ...entries.diff.enabled, ...entries.diff.reconfigured, ...entries.diff.renamed])
    return {
      kind: 'config',
      file,
      diff: entries.diff,
      entries: entries.results.filter(r => r.outcome === 'failed' || r.outcome === 'waiting'),
      restarted: [...window.restarted].filter(id => !changed.has(id)),
      errors: window.errors,
      durationMs: performance.now() - start,
    }
  }

  /** Stop tracking and listening. The harness itself is the caller's. */
  async dispose(): Promise<void> {
    await this._listeners.dispose()
  }

  private states(): EntryState[] {
    return this.entries().map(e => ({ id: e.id, name: e.options.name, disabled: e.disabled, config: configKey(e.options.config) }))
  }

  private async observe<T>(targets: Entry[], run: () => Promise<T>): Promise<{ result: T; window: Window }> {
    const window: Window = { ids: new Set(targets.map(e => e.id)), restarted: new Set(), errors: [] }
    this._window = window
    try {
      return { result: await run(), window }
    } finally {
      this._window = undefined
    }
  }

  private async restartEntries(targets: Entry[]): Promise<EntryReload[]> {
    const results: EntryReload[] = []
    for (const entry of targets) results.push(await this.restartEntry(entry))
    return results
  }

  private async restartEntry(entry: Entry): Promise<EntryReload> {
    const id = entry.id
    if (entry.disabled) return { id, outcome: 'skipped', reason: 'disabled' }
    const scopes = [this._graphs.get(id)?.scope].filter((s): s is string => !!s)
    const running = (): 'previous' | 'none' => (entry.fiber && entry.fiber.uid !== null && entry.fiber.state === ACTIVE ? 'previous' : 'none')
    // 1. Load the new source before touching the running version.
    let exports: unknown
    try {
      exports = await entry.parent.tree.import(entry.options.name)
    } catch (error) {
      return { id, outcome: 'failed', stage: 'import', error: locateError(error, scopes), running: running() }
    }
    const callback = this.ctx.registry.resolve(entry.loader.unwrapExports(exports))
    const old = entry.fiber?.runtime?.callback
    if (!callback) {
      return { id, outcome: 'failed', stage: 'import', error: { message: `${entry.options.name} exports no plugin (a function, a class or an object with apply)` }, running: running() }
    }
    if (callback === old) {
      return { id, outcome: 'failed', stage: 'import', error: { message: `${entry.options.name} came back from the module cache unchanged (is it CommonJS? only ES modules reload); restart dsh dev to load it` }, running: running() }
    }
    // 2. Stop the running version, 3. start the new one (the loader imports
    // the same, now cached, module).
    await stopEntry(entry)
    await entry.init()
    return this.outcomeOf(entry, 'none', scopes)
  }

  private async outcomeOf(entry: Entry, ifFailed: 'previous' | 'none', scopes: string[] = []): Promise<EntryReload> {
    const id = entry.id
    const fiber = entry.fiber
    if (entry.disabled) return { id, outcome: 'skipped', reason: 'disabled' }
    if (!fiber || fiber.uid === null) {
      return { id, outcome: 'failed', stage: 'import', error: { message: `${entry.options.name} did not load` }, running: 'none' }
    }
    try {
      await fiber.await()
    } catch (error) {
      return { id, outcome: 'failed', stage: 'apply', error: locateError(error, scopes.length ? scopes : [this._graphs.get(id)?.scope].filter((s): s is string => !!s)), running: fiber.state === ACTIVE ? ifFailed : 'none' }
    }
    return { id, outcome: fiber.state === ACTIVE ? 'reloaded' : 'waiting' }
  }
}

function flattenIds(entries: EntryOptions[]): string[] {
  const ids: string[] = []
  for (const entry of entries) {
    if (entry.id) ids.push(entry.id)
    if (entry.group && Array.isArray(entry.config)) ids.push(...flattenIds(entry.config as EntryOptions[]))
  }
  return ids
}
