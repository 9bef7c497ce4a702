/**
 * A small shell-syntax reader: enough of POSIX sh / bash to find the simple
 * commands of a command line and how they are joined, so a run can be keyed
 * and its exit status attributed. It never executes or expands anything.
 *
 * Understood: quotes and backslashes, `$(…)`, `` `…` `` and `<(…)` kept inside
 * their word, comments, line continuations, redirections (dropped with their
 * target), here-documents (their body is skipped), `&&`, `||`, `|`, `|&`, `;`,
 * `&`, newlines, `( … )` / `{ … }` groups (flattened) and `!`.
 * Control flow (`if`, `for`, `while`, `case`, …) is recognised only so that
 * its commands are marked as having no attributable status.
 */

/** One element of a pipeline: a simple command's words, or a `( … )` / `{ … }` group. */
export type ShellCommand = { words: string[] } | { group: ShellScript }

/** One pipeline: `a | b | c`; `negated` for `! a | b`. */
export interface Pipeline {
  commands: ShellCommand[]
  negated: boolean
}

/** An and-or list: pipelines joined by `&&` / `||`, ended by `;`, `&` or a newline. */
export interface AndOrList {
  pipelines: Pipeline[]
  /** `ops[i]` joins `pipelines[i]` and `pipelines[i + 1]`. */
  ops: ('&&' | '||')[]
  /** Ended by `&`: run in the background, its status never reaches the caller. */
  background: boolean
}

/** A command line, or the inside of a group. */
export interface ShellScript {
  lists: AndOrList[]
  /** Control-flow keywords were present: no command's status in it can be attributed. */
  control: boolean
}

type Op = '&&' | '||' | '|' | '|&' | ';' | '&' | '\n' | '(' | ')'
type Token = { kind: 'word'; text: string } | { kind: 'op'; op: Op }

const CONTROL_WORDS = new Set(['if', 'then', 'else', 'elif', 'fi', 'for', 'while', 'until', 'do', 'done', 'case', 'esac', 'select', 'function', '[[', ']]'])
/** Reserved words that may open a command; the command proper follows them. */
const LEADING_WORDS = new Set(['then', 'else', 'do', 'if', 'elif', 'while', 'until'])
/** Commands that only close a construct or introduce a loop header; they are dropped whole. */
const DROPPED_CONSTRUCTS = new Set(['fi', 'done', 'esac', 'for', 'select', 'case', 'function', '}', ']]'])

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

/**
 * Parse a command line into and-or lists of pipelines of simple commands
 * (each a list of unquoted words) and groups. Reserved words that open a
 * command (`then`, `do`…) are removed from it. Never throws: unbalanced
 * groups close at the end of input.
 */
export function parseShell(src: string): ShellScript {
  return new Parser(tokenize(src)).script(undefined)
}

/** Every simple command of a script, groups included, in textual order. */
export function simpleCommands(script: ShellScript): string[][] {
  const out: string[][] = []
  for (const list of script.lists) {
    for (const pipeline of list.pipelines) {
      for (const command of pipeline.commands) {
        if ('words' in command) out.push(command.words)
        else out.push(...simpleCommands(command.group))
      }
    }
  }
  return out
}

class Parser {
  private at = 0
  constructor(private readonly tokens: Token[]) {}

  /** Parse until `closing` (`)` op or `}` word at a command start) or the end; consumes the closer. */
  script(closing: ')' | '}' | undefined): ShellScript {
    const lists: AndOrList[] = []
    let control = false
    let list: AndOrList = { pipelines: [], ops: [], background: false }
    let pipeline: Pipeline = { commands: [], negated: false }
    let words: string[] = []

    const endCommand = () => {
      while (words.length && LEADING_WORDS.has(words[0]!)) {
        control ||= CONTROL_WORDS.has(words[0]!)
        words.shift()
      }
      if (words.length && words[0] === '!' && !pipeline.commands.length) {
        pipeline.negated = true
        words.shift()
      }
      if (words.length && CONTROL_WORDS.has(words[0]!)) control = true
      if (words.length && !DROPPED_CONSTRUCTS.has(words[0]!)) pipeline.commands.push({ words })
      words = []
    }
    const endPipeline = (op?: '&&' | '||') => {
      endCommand()
      if (pipeline.commands.length) {
        list.pipelines.push(pipeline)
        if (op) list.ops.push(op)
      }
      pipeline = { commands: [], negated: false }
    }
    const endList = (background: boolean) => {
      endPipeline()
      // A dangling operator at the end of input.
      if (list.ops.length >= list.pipelines.length) list.ops.length = Math.max(0, list.pipelines.length - 1)
      if (list.pipelines.length) {
        list.background = background
        lists.push(list)
      }
      list = { pipelines: [], ops: [], background: false }
    }
    const atCommandStart = () => words.every(w => LEADING_WORDS.has(w) || w === '!')

    while (this.at < this.tokens.length) {
      const token = this.tokens[this.at++]!
      if (token.kind === 'word') {
        if (token.text === '}' && closing === '}' && atCommandStart()) break
        if (token.text === '{' && atCommandStart()) {
          this.openGroup(words, pipeline, '}')
          words = []
          continue
        }
        words.push(token.text)
        continue
      }
      switch (token.op) {
        case '|':
        case '|&':
          endCommand()
          break
        case '&&':
        case '||':
          endPipeline(token.op)
          // `a &&` then a newline: the list continues on the next line.
          while (this.peekOp() === '\n') this.at++
          break
        case ';':
        case '\n':
          endList(false)
          break
        case '&':
          endList(true)
          break
        case '(':
          if (atCommandStart()) {
            this.openGroup(words, pipeline, ')')
            words = []
          }
          break
        case ')':
          if (closing === ')') {
            endList(false)
            return { lists, control }
          }
          break
      }
    }
    endList(false)
    return { lists, control }
  }

  /** A group opens where a command starts: reserved words before it still apply. */
  private openGroup(before: string[], pipeline: Pipeline, closing: ')' | '}') {
    const flags = before.filter(w => w === '!')
    if (flags.length && !pipeline.commands.length) pipeline.negated = true
    pipeline.commands.push({ group: this.script(closing) })
  }

  private peekOp(): Op | undefined {
    const next = this.tokens[this.at]
    return next?.kind === 'op' ? next.op : undefined
  }
}
