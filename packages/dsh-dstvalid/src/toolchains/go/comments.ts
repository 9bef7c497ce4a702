import { onlyComments } from '../only-comments.ts'
import { firstSourceMatching } from '../source-files.ts'
import type { Change } from '../../types.ts'
import { NOT_SOURCE_DIRS } from 'dsh-common'

/**
 * A comment that is code to the Go toolchain: `//go:…` and other
 * `//name:…` directives, `//line` and `/*line` position directives, cgo's
 * `//export` and gccgo's `//extern`.
 */
const DIRECTIVE = /^(?:\/\/[a-z0-9]+:[a-z]|\/\/(?:line|export|extern)\s|\/\*line\s)/

/** Newline marker in a token stream (Go inserts semicolons at newlines, so where lines break is code). */
const NL = '\n'

/**
 * The tokens of Go source that the compiler sees, comments left out (except
 * directives), or undefined when the source cannot be judged by its tokens:
 * an unterminated comment or string, or cgo (`import "C"`: the comment
 * before it is C code). Words are split on blanks, not re-tokenised, so a
 * reformatted line (`a+b` to `a + b`) counts as changed code; newlines are
 * one token however many follow each other (a comment on its own line
 * adds none).
 */
function goTokens(source: string): string[] | undefined {
  const tokens: string[] = []
  let word = ''
  const flush = () => {
    if (word) tokens.push(word)
    word = ''
  }
  const newline = () => {
    flush()
    if (tokens.length && tokens.at(-1) !== NL) tokens.push(NL)
  }
  let i = 0
  while (i < source.length) {
    const c = source[i]!
    if (c === '/' && source[i + 1] === '/') {
      const end = source.indexOf('\n', i)
      const text = source.slice(i, end < 0 ? source.length : end)
      if (DIRECTIVE.test(text)) {
        flush()
        tokens.push(text.trimEnd())
      }
      i += text.length
      continue
    }
    if (c === '/' && source[i + 1] === '*') {
      const end = source.indexOf('*/', i + 2)
      if (end < 0) return undefined
      const text = source.slice(i, end + 2)
      flush()
      if (DIRECTIVE.test(text)) tokens.push(text)
      // A general comment with a newline in it acts as a newline.
      if (text.includes('\n')) newline()
      i = end + 2
      continue
    }
    if (c === '"' || c === '\'' || c === '`') {
      let j = i + 1
      while (j < source.length && source[j] !== c) {
        if (c !== '`' && source[j] === '\\') j++
        else if (c !== '`' && source[j] === '\n') return undefined
        j++
      }
      if (j >= source.length) return undefined
      word += source.slice(i, j + 1)
      i = j + 1
      continue
    }
    if (c === '\n') newline()
    else if (c === ' ' || c === '\t' || c === '\r') flush()
    else word += c
    i++
  }
  flush()
  if (tokens.at(-1) === NL) tokens.pop()
  return tokens
}

/**
 * Whether a change of a Go file's text changed nothing the compiler, vet or
 * a test binary sees but comments and blanks. Not for `_test.go` files (an
 * example's `// Output:` comment is its assertion), nor for cgo files; the
 * text before the `package` clause must not change at all (build
 * constraints, and the blank line that makes a `//go:build` line one).
 */
export function goCommentOnly(file: string, before: string, after: string): boolean {
  if (!file.endsWith('.go') || file.endsWith('_test.go')) return false
  const header = (text: string) => text.slice(0, Math.max(0, text.search(/^package\s/m)))
  if (header(before) !== header(after)) return false
  const was = goTokens(before)
  const now = goTokens(after)
  if (!was || !now || was.includes('"C"') || now.includes('"C"')) return false
  return was.length === now.length && was.every((t, k) => t === now[k])
}

/**
 * What in a module's Go code may see a comment's text or the line numbers
 * it shifts: source read as a file or parsed (`os.ReadFile`, `go/parser`,
 * walking directories), `embed`, and call-site positions
 * (`runtime.Caller`, stack traces) — a logger's test comparing `file.go:42`.
 */
const SEES_SOURCE = /\bruntime\.Callers?\b|\bruntime\/debug\b|\bdebug\.Stack\b|\bos\.(?:ReadFile|Open|OpenFile|ReadDir)\b|\bioutil\.(?:ReadFile|ReadDir)\b|\bfilepath\.Walk(?:Dir)?\b|\bfs\.WalkDir\b|"go\/(?:parser|build|scanner)"|"golang\.org\/x\/tools\/go\/packages"|"embed"/

/** The first `.go` file under `root` (workspace-relative) whose code may see a comment's text or line, or undefined. */
export function goSourceSeer(root: string): string | undefined {
  return firstSourceMatching(root, '.go', NOT_SOURCE_DIRS, SEES_SOURCE)
}

/**
 * Why a write cannot change what `go build`, `go vet` or a test binary
 * sees — it changed nothing but comments and blanks in existing non-test Go
 * files (directives, cgo, `_test.go` files and the text before `package`
 * count as code: see `goCommentOnly`) — or undefined when it may. What a
 * test sees of a comment is only the text read as a file, and line numbers
 * (the test check asks about those too).
 */
export function goUnchanged(change: Change): Promise<string | undefined> {
  return onlyComments(change, /\.go$/, async (file, was, now) => goCommentOnly(file, was, now))
}
