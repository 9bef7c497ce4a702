import { writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** Scripted model steps as JSON Lines (what `dsh-llm/scripted` and `dsh run --script` read). */
export function scriptLines(steps: readonly object[]): string {
  return steps.map(s => JSON.stringify(s)).join('\n') + '\n'
}

/** Write scripted model steps to `dir/name` as JSON Lines; returns the file's path (for `--script`). */
export function writeScript(dir: string, steps: readonly object[], name = 'script.jsonl'): string {
  const file = join(dir, name)
  writeFileSync(file, scriptLines(steps))
  return file
}

/**
 * The core plugins as `cordis.yml` entries, by package name — the top of a
 * config a spec writes for a real `dsh run` (which adds the scripted model
 * itself with `--script`); append the plugins under test after it.
 */
export const CORE_ENTRIES = `- id: sessions
  name: dsh-session
- id: tools
  name: dsh-tools
- id: workspace-tools
  name: dsh-tools-workspace
- id: llm
  name: dsh-llm
- id: agents
  name: dsh-agent
`
