import { structuredPatch } from 'diff'
import type { KeptChange, KeptState, KeptStore } from 'dsh-snapshot'

/** One line of a hunk, with its numbers on each side. */
export interface DiffLine {
  kind: 'add' | 'del' | 'ctx'
  sign: '+' | '-' | ' '
  text: string
  old?: number
  new?: number
}

/** One changed path as the page shows it: a line diff (jsdiff) when both sides are text. */
export interface FileDiff {
  path: string
  /** `modified`, `created`, `deleted`, `mode 644 → 755`, `binary, 1.2 KiB → 1.3 KiB`, `earlier bytes pruned`… */
  summary: string
  hunks: { header: string; lines: DiffLine[] }[]
}

/** Bytes of a state, '' for absent, undefined when not known (not kept, pruned, not a file). */
function textOf(store: KeptStore, s: KeptState): { text?: string; why?: string } {
  if (s.k === 'absent') return { text: '' }
  if (s.k === 'symlink') return { text: `→ ${s.target}\n` }
  if (s.k === 'dir') return { why: 'a directory' }
  if (s.k === 'unknown') return { why: s.why }
  const data = store.get(s.sha)
  if (!data) return { why: 'its bytes were pruned' }
  if (data.subarray(0, 8192).includes(0)) return { why: `binary, ${data.length} bytes` }
  return { text: data.toString('utf8') }
}

function describe(change: KeptChange): string {
  const { before: b, after: a } = change
  if (b.k === 'absent') return a.k === 'dir' ? 'directory created' : 'created'
  if (a.k === 'absent') return b.k === 'dir' ? 'directory deleted' : 'deleted'
  if (b.k === 'file' && a.k === 'file' && b.mode !== a.mode) return `modified, mode ${b.mode.toString(8)} → ${a.mode.toString(8)}`
  return 'modified'
}

/** The diff of one kept change, read from the store. */
export function diffChange(store: KeptStore, change: KeptChange, context = 3): FileDiff {
  const summary = describe(change)
  const before = textOf(store, change.before)
  const after = textOf(store, change.after)
  if (before.text === undefined || after.text === undefined) {
    return { path: change.path, summary: `${summary} (${[before.why && `before: ${before.why}`, after.why && `after: ${after.why}`].filter(Boolean).join('; ')})`, hunks: [] }
  }
  const patch = structuredPatch(change.path, change.path, before.text, after.text, undefined, undefined, { context })
  return {
    path: change.path, summary,
    hunks: patch.hunks.map(h => {
      let o = h.oldStart
      let n = h.newStart
      const lines: DiffLine[] = []
      for (const raw of h.lines) {
        const sign = raw[0]
        const text = raw.slice(1)
        if (sign === '\\') continue
        if (sign === '+') lines.push({ kind: 'add', sign: '+', text, new: n++ })
        else if (sign === '-') lines.push({ kind: 'del', sign: '-', text, old: o++ })
        else lines.push({ kind: 'ctx', sign: ' ', text, old: o++, new: n++ })
      }
      return { header: `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`, lines }
    }),
  }
}
