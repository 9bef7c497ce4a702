/**
 * dsh-common — the one place for shared mechanics: running a command
 * (`runCommand`), containing a path in a workspace (`resolveInside`),
 * atomic writes (`writeFileAtomic`), and JSON Lines (`readJsonl`).
 * No Cordis imports: every core and every plugin may use it.
 */
export * from './config.ts'
export * from './run.ts'
export * from './process.ts'
export * from './process-groups.ts'
export * from './paths.ts'
export * from './fs.ts'
export * from './jsonl.ts'
export * from './text.ts'
export * from './liveness.ts'
export * from './lock.ts'
export * from './jsonl-select.ts'
export * from './xml.ts'
export * from './read-bounded.ts'
export * from './isolation.ts'
export * from './credentials.ts'
export * from './keys.ts'
export * from './skipped-dirs.ts'
export * from './file-states.ts'
