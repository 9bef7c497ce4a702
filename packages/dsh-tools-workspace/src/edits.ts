/** One exact-string replacement. */
export interface Edit {
  old_string: string
  new_string: string
}

/** Thrown when an edit does not match exactly once. `code` is stable. */
export class EditError extends Error {
  readonly code = 'EDIT'
}

function countOccurrences(haystack: string, needle: string): number {
  let count = 0
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length)) count++
  return count
}

/**
 * Apply edits in order to `text`. Each `old_string` must match exactly once
 * in the text as the earlier edits left it.
 * @throws EditError naming the edit and how many times it matched.
 */
export function applyEdits(text: string, edits: readonly Edit[], label: string): string {
  edits.forEach((edit, i) => {
    const which = edits.length > 1 ? ` (edit ${i + 1} of ${edits.length})` : ''
    if (edit.old_string === '') throw new EditError(`${label}${which}: old_string is empty`)
    if (edit.old_string === edit.new_string) throw new EditError(`${label}${which}: old_string and new_string are identical`)
    const n = countOccurrences(text, edit.old_string)
    if (n !== 1) {
      throw new EditError(`${label}${which}: old_string must match exactly once, found ${n} matches${n > 1 ? ' — add surrounding lines to make it unique' : ''}`)
    }
    const at = text.indexOf(edit.old_string)
    text = text.slice(0, at) + edit.new_string + text.slice(at + edit.old_string.length)
  })
  return text
}
