/**
 * `dsh dev` — hot reload for the harness on Node 20.
 *
 * - `module-versions.ts` + `hooks.mjs`: a `module.register` resolve hook
 *   (chained after tsx's) that gives each edited file a fresh URL.
 * - `import-graph.ts`: which files an entry's plugin reaches, and who must
 *   be re-imported when one of them changes (pure).
 * - `config-diff.ts`: what a cordis.yml change did to the entries (pure).
 * - `reloader.ts`: swaps an entry's fiber for its new module, applies a
 *   changed cordis.yml, reports what happened.
 * - `watcher.ts`: chokidar over an exact file set, debounced into batches.
 * - `dev-harness.ts`: `startDev` — the harness, the reloader and the watcher.
 * - `report.ts`: report types and their terminal lines.
 */
export * from './module-versions.ts'
export * from './import-graph.ts'
export * from './config-diff.ts'
export * from './error-location.ts'
export * from './report.ts'
export * from './reloader.ts'
export * from './watcher.ts'
export * from './dev-harness.ts'
