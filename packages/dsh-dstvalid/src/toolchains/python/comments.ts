import { onlyComments } from '../only-comments.ts'
import { firstSourceMatching } from '../source-files.ts'
import type { Change } from '../../types.ts'
import { NOT_SOURCE_DIRS } from 'dsh-common'

/** A line break in the token stream (a line's end is code in Python). */
const NL = '\n'

/** An encoding declaration (PEP 263): a comment in the first two lines that the interpreter reads. */
const CODING = /^#.*?coding[:=]/

/** A formatted string literal: from Python 3.12 it may nest quotes of its own kind, so a `#` in it can look like a comment. */
const F_STRING = /(?:^|[^\w])(?:[fF][rR]?|[rR][fF])['"]/

/**
 * The tokens of Python source that the interpreter sees, comments left out,
 * or undefined when the source cannot be judged by its tokens (a string
 * left open). Each line that holds code starts with its indentation (a
 * token: indentation is code), words are split on blanks (a reformatted line
 * counts as changed code), string literals are kept whole (docstrings are
 * code: doctests and `__doc__` read them), and a line that is only a comment
 * or blank adds nothing. A line with a formatted string keeps its comment
 * too.
 */
function pyTokens(source: string): string[] | undefined {
  const tokens: string[] = []
  let word = ''
  const flush = () => {
    if (word) tokens.push(word)
    word = ''
  }
  let i = 0
  let line = 0
  while (i < source.length) {
    // The start of a physical line: blank and comment-only lines add nothing; any other starts with its indentation.
    const end = source.indexOf('\n', i)
    const text = source.slice(i, end < 0 ? source.length : end)
    const code = text.trimStart()
    line++
    if (!code || (code.startsWith('#') && !(line <= 2 && CODING.test(code)))) {
      i += text.length + 1
      continue
    }
    tokens.push(`${NL}${text.slice(0, text.length - code.length)}`)
    const keepComment = F_STRING.test(text) || (line <= 2 && CODING.test(code))
    i += text.length - code.length
    // The rest of the logical line's text, up to a line break outside a string.
    while (i < source.length && source[i] !== '\n') {
      const c = source[i]!
      if (c === '#' && !keepComment) {
        while (i < source.length && source[i] !== '\n') i++
        break
      }
      if (c === '"' || c === '\'') {
        const triple = source.startsWith(c.repeat(3), i)
        const quote = triple ? c.repeat(3) : c
        let j = i + quote.length
        for (;;) {
          if (j >= source.length) return undefined
          if (source[j] === '\\') {
            j += 2
            continue
          }
          if (!triple && source[j] === '\n') return undefined
          if (source.startsWith(quote, j)) break
          j++
        }
        const literal = source.slice(i, j + quote.length)
        // A string spanning lines counts its line breaks, so the physical line count stays right for the encoding rule.
        line += literal.split('\n').length - 1
        word += literal
        i = j + quote.length
        continue
      }
      if (c === ' ' || c === '\t' || c === '\r' || c === '\f') flush()
      else word += c
      i++
    }
    flush()
    i++
  }
  return tokens
}

/**
 * Whether a change of a Python file's text changed nothing the interpreter
 * sees but comments and blank lines (an encoding declaration, and every
 * comment on a line with a formatted string, count as code).
 */
export function pyCommentOnly(file: string, before: string, after: string): boolean {
  if (!file.endsWith('.py')) return false
  const was = pyTokens(before)
  const now = pyTokens(after)
  return !!was && !!now && was.length === now.length && was.every((t, k) => t === now[k])
}

/**
 * What in a project's Python code may see a comment's text or the line
 * numbers it shifts: source read or parsed (`inspect`, `linecache`, `ast`,
 * `tokenize`, a `.py` file named in a string), tracebacks and frames
 * (`traceback`, `f_lineno`, `tb_lineno`, `co_firstlineno`), doctest.
 */
const SEES_SOURCE = /\b(?:inspect|linecache|traceback|tokenize|doctest)\b|\bast\.parse\b|\b(?:f|tb)_lineno\b|\bco_firstlineno\b|\.py['"]/

/** The first `.py` file under `root` (workspace-relative) whose code may see a comment's text or line, or undefined. */
export function pySourceSeer(root: string): string | undefined {
  return firstSourceMatching(root, '.py', NOT_SOURCE_DIRS, SEES_SOURCE)
}

/**
 * Why a write cannot change what Python compiles or runs: it changed
 * nothing but comments and blank lines in existing `.py` files (see
 * {@link pyCommentOnly}) — or undefined when it may. What a test sees of a
 * comment is only the text read as a file, and line numbers (the test check
 * asks about those too, {@link pySourceSeer}).
 */
export function pyUnchanged(change: Change): Promise<string | undefined> {
  return onlyComments(change, /\.py$/, async (file, was, now) => pyCommentOnly(file, was, now))
}
