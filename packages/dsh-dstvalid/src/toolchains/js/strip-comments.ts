/**
 * Comments blanked out (a block comment keeps its line breaks, so positions
 * by line still hold), strings and template literals kept, so `'//'` in a
 * string survives. For TypeScript sources and for JSONC (tsconfig).
 */
export function stripComments(text: string): string {
  let out = ''
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (c === '"' || c === "'" || c === '`') {
      const start = i
      for (i++; i < text.length && text[i] !== c; i++) if (text[i] === '\\') i++
      out += text.slice(start, i + 1)
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++
      out += '\n'
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2)
      const skipped = text.slice(i, end < 0 ? text.length : end + 2)
      out += skipped.replace(/[^\n]/g, ' ')
      i = end < 0 ? text.length : end + 1
    } else out += c
  }
  return out
}
