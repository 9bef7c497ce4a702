/**
 * What the host tells the model in the agent's context. Strings the model
 * sees are API: the tests assert them exactly. The hook client
 * (`bin/dsh-hook`) words its own fail-open notes the same way.
 */
export const MESSAGES = {
  notVerified: (why: string) => `dsh: not verified: ${why}. What was written meanwhile is kept unchecked; check the project yourself (type-check, tests) before relying on it.`,
  unreadable: (problem: string) => `dsh: not verified: the guard could not read this hook's input (${problem}).`,
  outside: (path: string, workspace: string) => `refused: path "${path}" is outside the workspace ${workspace}`,
  unseen: (tool: string) => `${tool} ran while the guard was starting or restarting, so no snapshot of it was taken and it was not checked`,
  recovered: (undone: readonly string[], left: readonly string[]) => [
    'dsh: the guard stopped in the middle of a call and was restarted.',
    ...(undone.length ? [`Undone, never judged: the write to ${undone.join(', ')} (redo it if you still want it).`] : []),
    ...(left.length ? [`Kept unchecked, written after the guard stopped: ${left.join(', ')}; check the project yourself (type-check, tests) before relying on it.`] : []),
  ].join(' '),
  late: (tool: string) => `the guard was still measuring the project when ${tool} ran (longer than the hook's timeout)`,
  noResult: 'the agent reported no result for this call (it did not run, or failed before writing anything)',
  noResultButWrote: (files: readonly string[]) => `the agent reported no result for this call, but ${files.join(', ')} changed after its snapshot`,
  settled: (tool: string, what: string) => `dsh: ${tool} (no result reported by the agent): ${what}`,
  afterSettle: (tool: string, files: readonly string[]) => `${tool} wrote ${files.join(', ')} after the guard had settled it as not run (its result came only after the agent's next call)`,
  configGuarded: (tool: string, files: readonly string[]) => `rolled back: ${tool} changed the dsh guard's own configuration in ${files.join(', ')}, which is not the agent's to change (only the user sets up or removes the guard); ${files.length === 1 ? 'it was' : 'they were'} put back and the rest of the call rolled back. Go on with the task without touching those entries.`,
  configNotRestored: (tool: string, why: string) => `${tool} changed the dsh guard's own configuration and it could NOT be put back (${why}); tell the user to set the guard up again (dsh-guard setup, or dsh hooks install from the dsh repo)`,
  chainRewritten: (why: string) => `dsh: ${why}; its entries are no longer evidence of what ran (dsh proof verify reports it)`,
  noSession: 'no session of this workspace has reached the guard yet (are the hooks installed? see `dsh-guard status`, or `dsh hooks status` from the dsh repo)',
} as const
