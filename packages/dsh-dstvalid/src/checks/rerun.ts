import { FILE_LEVEL } from '../accepted.ts'
import type { Measurement, Problem } from '../types.ts'

/** `text` as a literal inside a regular expression. */
function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** One re-run: a test file (and, for vitest projects, its project), with the `-t` pattern naming its failing tests. */
export interface Rerun {
  file: string
  /** What the group shares beyond the file (the vitest project; '' when none). */
  group: string
  /** `^(name|name)$`; undefined when the whole file failed, or no test names are known. */
  pattern?: string
}

/**
 * Flaky-test confirmation shared by the test runners: newly failing tests
 * are re-run alone, one run per file (and group), and the ones that still
 * fail are returned. A re-run that could not be judged confirms nothing:
 * undefined, and the caller keeps every failure.
 */
export async function confirmAlone(
  problems: readonly Problem[],
  nameOf: (p: Problem) => string | undefined,
  run: (rerun: Rerun) => Promise<Measurement | undefined>,
  groupOf: (p: Problem) => string = () => '',
): Promise<Problem[] | undefined> {
  const groups = new Map<string, Problem[]>()
  for (const p of problems) {
    const id = `${groupOf(p)}\u0000${p.file}`
    groups.set(id, [...(groups.get(id) ?? []), p])
  }
  const still: Problem[] = []
  for (const [id, group] of groups) {
    const [name, file] = id.split('\u0000') as [string, string]
    const whole = group.some(p => p.key.endsWith(FILE_LEVEL))
    const names = group.map(nameOf).filter((n): n is string => !!n)
    const pattern = whole || !names.length ? undefined : `^(${names.map(escapeRegExp).join('|')})$`
    const m = await run({ file, group: name, ...(pattern ? { pattern } : {}) })
    if (!m || m.status !== 'ok') return undefined
    const failing = new Set(m.problems.map(p => p.key))
    still.push(...group.filter(p => failing.has(p.key)))
  }
  return still
}
