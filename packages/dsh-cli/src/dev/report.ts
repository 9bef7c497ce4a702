import { relative } from 'node:path'
import { isInside } from 'dsh-common'
import type { ConfigDiff } from './config-diff.ts'
import type { LocatedError } from './error-location.ts'

/** What happened to one loader entry in a reload. */
export type EntryReload =
  | { id: string; outcome: 'reloaded' }
  /** Enabled but not running: waits for a service it injects. */
  | { id: string; outcome: 'waiting' }
  | { id: string; outcome: 'skipped'; reason: 'disabled' }
  | {
    id: string
    outcome: 'failed'
    /** `import`: the new source did not load; `apply`: it loaded and its plugin failed to start. */
    stage: 'import' | 'apply'
    error: LocatedError
    /** What runs for this entry now: the version before the edit, or nothing. */
    running: 'previous' | 'none'
  }

/** A batch of plugin source edits, handled. */
export interface PluginReloadReport {
  kind: 'plugins'
  /** The changed files of the batch that belong to a tracked entry. */
  files: string[]
  entries: EntryReload[]
  /** Other entries that restarted because a reloaded one provides a service they inject. */
  restarted: string[]
  /** Errors plugins logged while the reload ran (e.g. a restarted dependent failing). */
  errors: LocatedError[]
  durationMs: number
}

/** A cordis.yml edit, handled. */
export interface ConfigReloadReport {
  kind: 'config'
  file: string
  /** Absent when the file could not be used (see `error`): nothing changed. */
  diff?: ConfigDiff
  /** Why the new file was not applied (unreadable, invalid YAML, unknown plugin). */
  error?: LocatedError
  /** Entries the change (re)started that failed, or were replaced by a renamed plugin. */
  entries: EntryReload[]
  restarted: string[]
  errors: LocatedError[]
  durationMs: number
}

export type DevReport = PluginReloadReport | ConfigReloadReport

/** `file` for a person reading the terminal: relative to `base` when inside it. */
export function displayPath(file: string, base: string): string {
  return file !== base && isInside(base, file) ? relative(base, file) : file
}

/** `file:line:col: message`, as far as the location is known. */
export function formatLocated(error: LocatedError, base: string): string {
  if (!error.file) return error.message
  const where = [displayPath(error.file, base), error.line, error.column].filter(v => v !== undefined).join(':')
  return `${where}: ${error.message}`
}

function ms(value: number): string {
  return `${Math.round(value)} ms`
}

function formatFailure(entry: Extract<EntryReload, { outcome: 'failed' }>, base: string): string {
  const now = entry.running === 'previous'
    ? 'the previous version keeps running'
    : `${entry.id} is stopped`
  return `reload of ${entry.id} failed: ${formatLocated(entry.error, base)} — ${now}; fix it and save again`
}

function formatTail(report: { restarted: string[]; errors: LocatedError[] }, base: string): string[] {
  const lines: string[] = []
  if (report.restarted.length) lines.push(`  also restarted (they inject a reloaded service): ${report.restarted.join(', ')}`)
  for (const error of report.errors) lines.push(`  error: ${formatLocated(error, base)}`)
  return lines
}

/**
 * The terminal lines for a report: what reloaded and how long it took,
 * or what failed, where, and what is running now.
 */
export function formatReport(report: DevReport, base: string = process.cwd()): string[] {
  const lines: string[] = []
  if (report.kind === 'plugins') {
    const reloaded = report.entries.filter(e => e.outcome === 'reloaded' || e.outcome === 'waiting').map(e => e.id)
    const files = report.files.map(f => displayPath(f, base)).join(', ')
    if (reloaded.length) lines.push(`reloaded ${reloaded.join(', ')} (${files}) in ${ms(report.durationMs)}`)
    for (const e of report.entries) {
      if (e.outcome === 'waiting') lines.push(`  ${e.id} waits for a service it injects`)
      if (e.outcome === 'skipped') lines.push(`${e.id} is disabled: ${files} will load when it is enabled`)
      if (e.outcome === 'failed') lines.push(formatFailure(e, base))
    }
    return [...lines, ...formatTail(report, base)]
  }
  const name = displayPath(report.file, base)
  if (report.error) return [`${formatLocated(report.error, base)} — not applied, the running plugins are unchanged; fix it and save again`]
  const diff = report.diff!
  const parts = [
    diff.added.length && `added ${diff.added.join(', ')}`,
    diff.removed.length && `removed ${diff.removed.join(', ')}`,
    diff.enabled.length && `enabled ${diff.enabled.join(', ')}`,
    diff.disabled.length && `disabled ${diff.disabled.join(', ')}`,
    diff.reconfigured.length && `restarted ${diff.reconfigured.join(', ')} with new config`,
    diff.renamed.length && `replaced the plugin of ${diff.renamed.join(', ')}`,
  ].filter((p): p is string => !!p)
  lines.push(parts.length ? `${name}: ${parts.join('; ')} in ${ms(report.durationMs)}` : `${name}: no entry changed`)
  for (const e of report.entries) {
    if (e.outcome === 'failed') lines.push(formatFailure(e, base))
    if (e.outcome === 'waiting') lines.push(`  ${e.id} waits for a service it injects`)
  }
  return [...lines, ...formatTail(report, base)]
}
