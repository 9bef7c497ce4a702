import { closeSync, createReadStream, fstatSync, openSync, readFileSync, readSync } from 'node:fs'
import { createInterface } from 'node:readline'

/** A JSON Lines file had a corrupt line that was not the torn last one. `code` is stable. */
export class JsonlError extends Error {
  readonly code = 'JSONL_CORRUPT'
  constructor(readonly file: string, readonly line: number, reason: string) {
    super(`${file}:${line}: corrupt JSON line (${reason})`)
  }
}

export interface JsonlRead<T> {
  records: T[]
  /** True when the last line was incomplete (a write torn by a crash) and was skipped. */
  torn: boolean
}

/**
 * Parse JSON Lines text. Blank lines are skipped. An unparsable LAST line
 * without a trailing newline is a torn write and is dropped (`torn: true`);
 * any other unparsable line throws {@link JsonlError} naming its number.
 */
export function parseJsonl<T = unknown>(text: string, file = '<input>'): JsonlRead<T> {
  const lines = text.split('\n')
  const endsClean = text.endsWith('\n') || text.length === 0
  const records: T[] = []
  let torn = false
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    if (!line.trim()) continue
    try {
      records.push(JSON.parse(line) as T)
    } catch (error) {
      if (i === lines.length - 1 && !endsClean) {
        torn = true
        break
      }
      throw new JsonlError(file, i + 1, (error as Error).message)
    }
  }
  return { records, torn }
}

/** Read and parse a JSON Lines file (see {@link parseJsonl}). */
export function readJsonl<T = unknown>(file: string): JsonlRead<T> {
  return parseJsonl<T>(readFileSync(file, 'utf8'), file)
}

/**
 * Stream a JSON Lines file record by record without loading it whole.
 * Same torn-last-line rule as {@link parseJsonl}; yields `[record, lineNumber]`.
 */
export async function* streamJsonl<T = unknown>(file: string): AsyncGenerator<[T, number]> {
  const rl = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity })
  let lineNo = 0
  let pending: { line: string; no: number; error: Error } | undefined
  for await (const line of rl) {
    lineNo++
    if (pending) throw new JsonlError(file, pending.no, pending.error.message)
    if (!line.trim()) continue
    try {
      yield [JSON.parse(line) as T, lineNo]
    } catch (error) {
      pending = { line, no: lineNo, error: error as Error }
    }
  }
  // A bad final line is a torn write only when the file lacks a trailing newline.
  if (pending) {
    if (lastByte(file) === 0x0a) throw new JsonlError(file, pending.no, pending.error.message)
  }
}

function lastByte(file: string): number | undefined {
  const fd = openSync(file, 'r')
  try {
    const size = fstatSync(fd).size
    if (!size) return undefined
    const buf = Buffer.alloc(1)
    readSync(fd, buf, 0, 1, size - 1)
    return buf[0]
  } finally {
    closeSync(fd)
  }
}
