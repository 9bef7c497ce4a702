/**
 * Shell tokens: words (quotes and escapes removed; `$(…)`, `` `…` `` and
 * `<(…)` kept whole inside their word) and operators. Comments, line
 * continuations, redirections (with their targets) and here-document bodies
 * produce no token.
 */

export type Op = '&&' | '||' | '|' | '|&' | ';' | '&' | '\n' | '(' | ')'
export type Token = { kind: 'word'; text: string } | { kind: 'op'; op: Op }

/** Split a command line into tokens. Never throws: unterminated quotes end at the end of input. */
export function tokenize(src: string): Token[] {
  const tokens: Token[] = []
  const heredocs: { delim: string; strip: boolean }[] = []
  let i = 0
  let word: string | undefined

  const endWord = () => {
    if (word !== undefined) tokens.push({ kind: 'word', text: word })
    word = undefined
  }
  const pushOp = (op: Op) => {
    endWord()
    tokens.push({ kind: 'op', op })
  }

  /** Read `$(…)`, `<(…)`, `((…))`-style balanced text starting at an opening paren; returns the end index. */
  const balanced = (start: number): number => {
    let depth = 0
    let j = start
    for (; j < src.length; j++) {
      const c = src[j]
      if (c === '\\') { j++; continue }
      if (c === "'") { const k = src.indexOf("'", j + 1); j = k === -1 ? src.length : k; continue }
      if (c === '"') { j = skipDouble(src, j); continue }
      if (c === '(') depth++
      else if (c === ')' && --depth === 0) return j + 1
    }
    return src.length
  }

  /** Read one word at `i` (for a redirection target) without emitting it. */
  const readTarget = (): string => {
    while (src[i] === ' ' || src[i] === '\t') i++
    let text = ''
    while (i < src.length && !/[\s;&|<>()]/.test(src[i]!)) {
      const c = src[i]!
      if (c === "'") {
        const k = src.indexOf("'", i + 1)
        text += src.slice(i + 1, k === -1 ? src.length : k)
        i = k === -1 ? src.length : k + 1
      } else if (c === '"') {
        const k = skipDouble(src, i)
        text += unescapeDouble(src.slice(i + 1, k))
        i = k + 1
      } else if (c === '\\') {
        text += src[i + 1] ?? ''
        i += 2
      } else {
        text += c
        i++
      }
    }
    return text
  }

  while (i < src.length) {
    const c = src[i]!
    if (c === '\\' && src[i + 1] === '\n') { i += 2; continue }
    if (c === ' ' || c === '\t' || c === '\r') { endWord(); i++; continue }
    if (c === '\n') {
      pushOp('\n')
      i++
      // Skip here-document bodies that start after this newline.
      while (heredocs.length) {
        const { delim, strip } = heredocs.shift()!
        for (;;) {
          if (i >= src.length) break
          const nl = src.indexOf('\n', i)
          const line = src.slice(i, nl === -1 ? src.length : nl)
          i = nl === -1 ? src.length : nl + 1
          if ((strip ? line.replace(/^\t+/, '') : line) === delim) break
        }
      }
      continue
    }
    if (c === '#' && word === undefined) {
      const nl = src.indexOf('\n', i)
      i = nl === -1 ? src.length : nl
      continue
    }
    if (c === "'") {
      const k = src.indexOf("'", i + 1)
      word = (word ?? '') + src.slice(i + 1, k === -1 ? src.length : k)
      i = k === -1 ? src.length : k + 1
      continue
    }
    if (c === '"') {
      const k = skipDouble(src, i)
      word = (word ?? '') + unescapeDouble(src.slice(i + 1, k))
      i = k + 1
      continue
    }
    if (c === '`') {
      const k = src.indexOf('`', i + 1)
      const end = k === -1 ? src.length : k + 1
      word = (word ?? '') + src.slice(i, end)
      i = end
      continue
    }
    if (c === '\\') {
      word = (word ?? '') + (src[i + 1] ?? '')
      i += 2
      continue
    }
    if (c === '$' && src[i + 1] === '(') {
      const end = balanced(i + 1)
      word = (word ?? '') + src.slice(i, end)
      i = end
      continue
    }
    if ((c === '<' || c === '>') && src[i + 1] === '(') {
      const end = balanced(i + 1)
      word = (word ?? '') + src.slice(i, end)
      i = end
      continue
    }
    // Redirections, with an optional fd number glued in front (`2>&1`).
    const redir = /^(?:&>>|&>|<<<|<<-|<<|<>|<&|>&|>>|>\||<|>)/.exec(src.slice(i, i + 3))
    if (redir) {
      if (word !== undefined && /^\d+$/.test(word)) word = undefined
      endWord()
      const op = redir[0]
      i += op.length
      if ((op === '>&' || op === '<&') && /[\d-]/.test(src[i] ?? '')) {
        while (/[\d-]/.test(src[i] ?? '')) i++
        continue
      }
      const target = readTarget()
      if (op === '<<' || op === '<<-') heredocs.push({ delim: target, strip: op === '<<-' })
      continue
    }
    if (c === '&') {
      if (src[i + 1] === '&') { pushOp('&&'); i += 2 } else { pushOp('&'); i++ }
      continue
    }
    if (c === '|') {
      if (src[i + 1] === '|') { pushOp('||'); i += 2 } else if (src[i + 1] === '&') { pushOp('|&'); i += 2 } else { pushOp('|'); i++ }
      continue
    }
    if (c === ';') {
      pushOp(';')
      i += src[i + 1] === ';' || src[i + 1] === '&' ? 2 : 1
      continue
    }
    if (c === '(' || c === ')') {
      if (word !== undefined && c === '(') {
        // `name()` function definitions or arrays: keep in the word.
        word += c
        i++
        continue
      }
      pushOp(c)
      i++
      continue
    }
    word = (word ?? '') + c
    i++
  }
  endWord()
  return tokens
}

function skipDouble(src: string, open: number): number {
  for (let j = open + 1; j < src.length; j++) {
    if (src[j] === '\\') { j++; continue }
    if (src[j] === '"') return j
  }
  return src.length
}

function unescapeDouble(text: string): string {
  return text.replace(/\\([\\"$`\n])/g, (_, ch: string) => (ch === '\n' ? '' : ch))
}
