/**
 * A small shell-syntax reader: enough of POSIX sh / bash to find the simple
 * commands of a command line and how they are joined, so a run can be keyed
 * and its exit status attributed. It never executes or expands anything.
 *
 * Understood: everything `tokenize` reads (quotes, `$(…)`, comments,
 * redirections, here-documents), `&&`, `||`, `|`, `|&`, `;`, `&`, newlines,
 * `( … )` / `{ … }` groups (kept as groups: a group's status is its inside's)
 * and `!`.
 * Control flow (`if`, `for`, `while`, `case`, …) is recognised only so that
 * its commands are marked as having no attributable status.
 */

import { tokenize, type Op, type Token } from './tokenize.ts'

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


const CONTROL_WORDS = new Set(['if', 'then', 'else', 'elif', 'fi', 'for', 'while', 'until', 'do', 'done', 'case', 'esac', 'select', 'function', '[[', ']]'])
/** Reserved words that may open a command; the command proper follows them. */
const LEADING_WORDS = new Set(['then', 'else', 'do', 'if', 'elif', 'while', 'until'])
/** Commands that only close a construct or introduce a loop header; they are dropped whole. */
const DROPPED_CONSTRUCTS = new Set(['fi', 'done', 'esac', 'for', 'select', 'case', 'function', '}', ']]'])


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
