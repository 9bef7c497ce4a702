import { createReadStream } from 'node:fs'
import { JsonlError } from './jsonl.ts'

const TYPE_KEY = '"type":"'

/**
 * True when a JSON line can be skipped unparsed: the text `"type":"` occurs in
 * it exactly once — so it is the record's own `type` key (a string value
 * holding that text is escaped, and a nested `type` would make two) — and
 * names a type not in `types`. Any other line must be parsed to be judged.
 */
export function skippableJsonLine(line: string, types: ReadonlySet<string>): boolean {
  const at = line.indexOf(TYPE_KEY)
  if (at === -1 || line.indexOf(TYPE_KEY, at + TYPE_KEY.length) !== -1) return false
  const start = at + TYPE_KEY.length
  const end = line.indexOf('"', start)
  if (end === -1) return false
  const name = line.slice(start, end)
  return !name.includes('\\') && !types.has(name)
}

/**
 * Stream the records of a JSON Lines file whose top-level `type` is one of
 * `types`, yielding `[record, lineNumber]`, without parsing the other lines
 * (see {@link skippableJsonLine}) — several times cheaper than parsing every
 * line when most records are of other types. Torn-last-line rule as
 * `streamJsonl`; a corrupt line is reported (`JsonlError`) only when it had
 * to be parsed.
 */
export async function* streamJsonlOfTypes<T extends { type?: unknown }>(file: string, types: ReadonlySet<string>): AsyncGenerator<[T, number]> {
  let rest = ''
  let lineNo = 0
  let bad: { no: number; error: Error } | undefined
  const batch: [T, number][] = []
  let corrupt: JsonlError | undefined
  /** Judge one line; a bad line is held until the next line shows it was not the torn last one. */
  const judge = (line: string) => {
    lineNo++
    if (bad) {
      corrupt = new JsonlError(file, bad.no, bad.error.message)
      return
    }
    if (!line.trim() || skippableJsonLine(line, types)) return
    let record: T
    try {
      record = JSON.parse(line) as T
    } catch (error) {
      bad = { no: lineNo, error: error as Error }
      return
    }
    if (typeof record?.type === 'string' && types.has(record.type)) batch.push([record, lineNo])
  }
  for await (const chunk of createReadStream(file, { encoding: 'utf8', highWaterMark: 256 << 10 })) {
    const text = rest + (chunk as string)
    let start = 0
    for (let nl = text.indexOf('\n'); nl !== -1 && !corrupt; nl = text.indexOf('\n', start)) {
      judge(text.slice(start, nl > start && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl))
      start = nl + 1
    }
    rest = text.slice(start)
    // Yield per chunk, not per line: one await per chunk keeps the per-line cost at a parse.
    for (const entry of batch) yield entry
    batch.length = 0
    if (corrupt) throw corrupt
  }
  // A last line without a newline: a bad one is a torn write and is dropped.
  if (rest) {
    judge(rest)
    if (corrupt) throw corrupt
    bad = undefined
    for (const entry of batch) yield entry
  }
  if (bad) throw new JsonlError(file, bad.no, bad.error.message)
}
