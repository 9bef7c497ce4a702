import { realpathSync } from 'node:fs'
import { bootHarness, ConfigError, type Harness, type HarnessOptions } from '../harness.ts'
import { installModuleVersions, registerTypeScript } from './module-versions.ts'
import { findEntryTree, PluginReloader } from './reloader.ts'
import type { DevReport } from './report.ts'
import { SourceWatcher } from './watcher.ts'

export interface DevOptions extends HarnessOptions {
  /** Quiet time after the last save before a reload starts (ms, default 60). */
  debounceMs?: number
  /** Also track plugin entries whose source lies under these directories, even inside node_modules. */
  watch?: string[]
  /** Every reload report, as it happens. */
  onReport?(report: DevReport): void
}

/** A harness running under the watcher. */
export interface DevHarness {
  harness: Harness
  reloader: PluginReloader
  watcher: SourceWatcher
  /** Every report so far, oldest first. */
  readonly reports: readonly DevReport[]
  /** Resolves with the next report (call it before making the edit). */
  nextReport(): Promise<DevReport>
  /** Stop watching and dispose the harness. Safe to call twice. */
  close(): Promise<void>
}

/**
 * Boot the harness from cordis.yml with hot reload (Node 20 compatible):
 * registers the module version hook (after tsx's, so `.ts` plugins load),
 * boots, then watches every tracked plugin's sources and cordis.yml. Each
 * debounced batch of saves becomes one report: cordis.yml first, then the
 * plugins whose module graphs contain a changed file.
 * @throws ConfigError as `bootHarness` does (nothing is watched then).
 */
export async function startDev(options: DevOptions): Promise<DevHarness> {
  await registerTypeScript()
  const versions = installModuleVersions()
  let busy = false
  // During a batch, plugin errors are part of the report (with their location);
  // warnings still go to the log.
  const harness = await bootHarness({ ...options, log: line => { if (!busy || !line.startsWith('error ')) options.log?.(line) } })
  const tree = findEntryTree(harness.ctx)
  if (!tree) {
    await harness.dispose()
    throw new ConfigError(`${harness.configFile}: no plugin entry is running, nothing to reload`)
  }
  const configFile = realpathSync(harness.configFile)
  const reloader = new PluginReloader(harness.ctx, tree, { configFile, versions, watch: options.watch })
  await reloader.ready
  const reports: DevReport[] = []
  let waiters: ((report: DevReport) => void)[] = []
  const publish = (report: DevReport) => {
    reports.push(report)
    options.onReport?.(report)
    const current = waiters
    waiters = []
    for (const resolve of current) resolve(report)
  }

  const watcher: SourceWatcher = new SourceWatcher({
    debounceMs: options.debounceMs ?? 60,
    onError: error => options.log?.(`warn [dev] watcher: ${error.message}`),
    async onBatch(files) {
      busy = true
      const done: DevReport[] = []
      try {
        if (files.includes(configFile)) done.push(await reloader.reloadConfig())
        const sources = files.filter(f => f !== configFile)
        const report = sources.length ? await reloader.reloadFiles(sources) : undefined
        if (report) done.push(report)
      } catch (error) {
        // A bug of the reloader itself, not of a plugin: say so, keep watching.
        options.log?.(`error [dev] reload of ${files.join(', ')} failed: ${(error as Error)?.stack ?? String(error)}`)
      } finally {
        busy = false
      }
      await watcher.set(reloader.watchedFiles())
      for (const report of done) publish(report)
    },
  })
  await watcher.set(reloader.watchedFiles())

  let closed = false
  return {
    harness,
    reloader,
    watcher,
    reports,
    nextReport: () => new Promise(resolve => waiters.push(resolve)),
    async close() {
      if (closed) return
      closed = true
      await watcher.close()
      await reloader.dispose()
      await harness.dispose()
    },
  }
}
