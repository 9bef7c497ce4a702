import { findSourceMap } from 'node:module'
import { fileURLToPath } from 'node:url'
import { isInside } from 'dsh-common'

/** Why a reload failed, pointing at the source line where that is known. */
export interface LocatedError {
  /** One line: the error's own message (its first line). */
  message: string
  /** Absolute path of the source file the error points at. */
  file?: string
  line?: number
  column?: number
}

// esbuild (through tsx): "/abs/file.ts:3:14: ERROR: Expected ";" but found "x""
const TRANSFORM = /(?:^|\n)((?:file:\/\/)?\/[^\n:]+?):(\d+):(\d+): ERROR: ([^\n]*)/
// Node's own SyntaxError for plain JS: first stack line "file:///abs/file.mjs:4" or "/abs/file.mjs:4"
const NODE_SYNTAX = /^((?:file:\/\/)?\/[^\n]+?):(\d+)\n/
// A stack frame: "at fn (file:///abs/x.ts?dshv=3:1:182)" or "at fn (/abs/x.ts:5:11)"
const FRAME = /\(?((?:file:\/\/)?\/[^\s():?]+(?:\?[^\s():]*)?):(\d+):(\d+)\)?$/

// The version query `hooks.mjs` adds to the URLs of edited files.
const VERSION = /\?dshv=\d+/g

function toPath(location: string): string {
  const bare = location.replace(/[?#].*$/, '')
  return bare.startsWith('file:') ? fileURLToPath(bare) : bare
}

interface Position {
  file: string
  line: number
  column: number
}

/**
 * Node prints a frame it mapped through a source map as a plain path (the
 * original position) and an unmapped ES module frame as its URL (the
 * generated position: tsx emits each module on one line). When something
 * replaced `Error.prepareStackTrace` (a test runner), frames stay unmapped;
 * map them here through the source map tsx registered for that URL.
 */
function originalPosition(location: string, line: number, column: number): Position {
  if (location.startsWith('file:')) {
    const entry = findSourceMap(location)?.findEntry(line - 1, column - 1)
    if (entry && 'originalSource' in entry && entry.originalSource) {
      return { file: toPath(entry.originalSource), line: entry.originalLine + 1, column: entry.originalColumn + 1 }
    }
  }
  return { file: toPath(location), line, column }
}

function inScope(file: string, scopes: readonly string[]): boolean {
  return !/[\\/]node_modules[\\/]/.test(file) && (!scopes.length || scopes.some(s => isInside(s, file)))
}

/**
 * Turn a failed import or a throwing `apply` into one message and the
 * source position it points at: a transform (syntax) error names its file
 * and line; otherwise the first stack frame inside `scopes` (the plugin's
 * package; never node_modules) is used, mapped back through tsx's source
 * map when the frame is still a generated position. The `?dshv=N` version
 * suffix is stripped from paths and from the message.
 */
export function locateError(error: unknown, scopes: readonly string[] = []): LocatedError {
  const err = error instanceof Error ? error : new Error(String(error))
  const own = err.message.replace(VERSION, '')
  const text = `${own}\n${err.stack ?? ''}`
  const transform = TRANSFORM.exec(text)
  if (transform) {
    return { message: transform[4]!.trim(), file: toPath(transform[1]!), line: Number(transform[2]), column: Number(transform[3]) + 1 }
  }
  const firstLine = own.split('\n').find(l => l.trim())?.trim() ?? err.name
  const message = err.name && err.name !== 'Error' && !firstLine.startsWith(err.name) ? `${err.name}: ${firstLine}` : firstLine
  const syntax = err.name === 'SyntaxError' ? NODE_SYNTAX.exec(err.stack ?? '') : null
  if (syntax) return { message, file: toPath(syntax[1]!), line: Number(syntax[2]) }
  for (const raw of (err.stack ?? '').split('\n')) {
    const frame = FRAME.exec(raw.trim())
    if (!frame) continue
    const position = originalPosition(frame[1]!, Number(frame[2]), Number(frame[3]))
    if (!inScope(position.file, scopes)) continue
    return { message, ...position }
  }
  return { message }
}
