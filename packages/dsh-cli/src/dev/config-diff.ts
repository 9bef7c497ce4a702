/**
 * What one loader entry looked like at a moment: enough to say what a
 * cordis.yml change did to it. `disabled` is the effective value (`!!js`
 * expressions evaluated), `config` the raw config as JSON.
 */
export interface EntryState {
  id: string
  name: string
  disabled: boolean
  config: string
}

/** What a cordis.yml change did, entry ids in file order. */
export interface ConfigDiff {
  added: string[]
  removed: string[]
  /** Was running or enabled, now disabled. */
  disabled: string[]
  /** Was disabled, now enabled. */
  enabled: string[]
  /** Still enabled, with another config: restarted with it. */
  reconfigured: string[]
  /** Same id, another plugin name: the new plugin replaced the old. */
  renamed: string[]
}

/** The raw-config key of an entry (stable across equal configs). */
export function configKey(config: unknown): string {
  return JSON.stringify(config ?? null, (_key, value: unknown) => {
    if (!value || typeof value !== 'object' || Array.isArray(value)) return value
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
  })
}

/** Compare entry states before and after a config change. */
export function diffEntryStates(before: readonly EntryState[], after: readonly EntryState[]): ConfigDiff {
  const old = new Map(before.map(s => [s.id, s]))
  const now = new Map(after.map(s => [s.id, s]))
  const diff: ConfigDiff = { added: [], removed: [], disabled: [], enabled: [], reconfigured: [], renamed: [] }
  for (const state of after) {
    const prev = old.get(state.id)
    if (!prev) {
      diff.added.push(state.id)
      continue
    }
    if (prev.name !== state.name) diff.renamed.push(state.id)
    if (!prev.disabled && state.disabled) diff.disabled.push(state.id)
    else if (prev.disabled && !state.disabled) diff.enabled.push(state.id)
    else if (!state.disabled && prev.config !== state.config && prev.name === state.name) diff.reconfigured.push(state.id)
  }
  for (const state of before) if (!now.has(state.id)) diff.removed.push(state.id)
  return diff
}

/** Ids present before and missing from `nextIds`: the entries a change removes. */
export function removedIds(before: Iterable<string>, nextIds: Iterable<string>): string[] {
  const keep = new Set(nextIds)
  return [...before].filter(id => !keep.has(id))
}
