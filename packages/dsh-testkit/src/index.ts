/**
 * dsh-testkit — the one test set-up of the suite (private, tests only):
 * `tempDir()` that cleans up after the test file, `harness()` — a real
 * Context with the real core plugins and a scripted model — and
 * `waitFor(session, type)` instead of fixed sleeps; `listenerCounts(ctx)`
 * for leak checks; `logged(ctx, type)` for what a plugin logged; `smallDisk()`
 * (a real tmpfs to fill up); `writeScript` and `CORE_ENTRIES` for specs that run the
 * real `dsh` on a scripted model and a cordis.yml of their own; scripted
 * model servers speaking real agents' APIs (`startModelServer` with
 * `responsesModel` for Codex, `geminiModel` for Gemini CLI) and
 * `runInLoopback` to run an agent CLI where it reaches only them;
 * `readTree`/`treeChanges` to byte-compare what an install touched after its
 * uninstall; `generateLayout` — realistic TypeScript project layouts (vite app,
 * library, pnpm monorepo, Jest) with the edits a guard must judge, shared
 * by dsh-dstvalid's specs and the benchmarks.
 */
export * from './temp.ts'
export * from './disk.ts'
export * from './harness.ts'
export * from './wait.ts'
export * from './listeners.ts'
export * from './logs.ts'
export * from './script.ts'
export * from './models/index.ts'
export * from './loopback.ts'
export * from './agent-clis.ts'
export * from './file-tree.ts'
export { generateLayout, LAYOUT_KINDS, repoNodeModules, type Edit, type Layout, type LayoutKind, type LayoutOptions, type LayoutScenarios, type NewFile } from './layouts.ts'
