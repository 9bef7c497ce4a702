import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { crc32 } from 'node:zlib'
import { SnapshotError } from './errors.ts'
import { describeRecord, JOURNAL_FORMAT, payloadSize, type JournalHeader, type JournalRecord, type ParsedJournal } from './journal-format.ts'

/** Reading a journal back: recovery, adoption, tests. */

export function readPayloadFd(fd: number, file: string, offset: number, size: number, sum: number): Buffer {
  const buf = Buffer.allocUnsafe(size)
  let got = 0
  while (got < size) {
    const n = readSync(fd, buf, got, size - got, offset + got)
    if (n === 0) throw new SnapshotError('journal', `${file}: captured bytes at ${offset} end early`)
    got += n
  }
  if (crc32(buf) !== sum) throw new SnapshotError('journal', `${file}: captured bytes at ${offset} are damaged (checksum mismatch)`)
  return buf
}

/** Read one line starting at `pos`; undefined when the file ends before a newline. */
function readLine(fd: number, pos: number, size: number): { text: string; next: number } | undefined {
  let chunk = 4096
  for (;;) {
    const want = Math.min(chunk, size - pos)
    if (want <= 0) return undefined
    const buf = Buffer.allocUnsafe(want)
    const n = readSync(fd, buf, 0, want, pos)
    const nl = buf.subarray(0, n).indexOf(0x0a)
    if (nl !== -1) return { text: buf.subarray(0, nl).toString('utf8'), next: pos + nl + 1 }
    if (pos + n >= size) return undefined
    chunk *= 4
  }
}

/**
 * The file ends inside a line at `pos`. A whole record that lacks only its
 * newline is used (a capture's bytes then are all missing: a torn capture);
 * anything else is a torn line, with the record type its text names, if any.
 */
function readTail(fd: number, pos: number, size: number, gen: number, parsed: ParsedJournal) {
  const buf = Buffer.alloc(size - pos)
  readSync(fd, buf, 0, buf.length, pos)
  const text = buf.toString('utf8')
  let record: (JournalRecord & { g?: number }) | undefined
  try {
    record = JSON.parse(text)
  } catch {
    // Cut inside the JSON: a torn line.
  }
  if (record && typeof record === 'object') {
    // Another generation's record ends the journal, as in the loop.
    if (record.g !== gen) return
    delete record.g
    const psize = payloadSize(record)
    if (!psize) {
      parsed.records.push({ record })
      // `end` stays before it: a writer that adopts the journal drops it, as it drops an unframed capture.
      parsed.unframed = describeRecord(record)
      return
    }
    parsed.torn = true
    if (record.t === 'cap') parsed.tornCapture = { path: record.entry.path, size: psize, have: 0, offset: size }
    return
  }
  parsed.torn = true
  const type = /^\{"t":"(\w+)"/.exec(text)?.[1]
  parsed.tornLine = { offset: pos, bytes: size - pos, ...(type ? { type } : {}) }
}

function isHeader(value: unknown): value is JournalHeader {
  const h = value as JournalHeader
  return !!h && h.format === JOURNAL_FORMAT && h.version === 1 && Number.isInteger(h.gen) && Number.isInteger(h.len) && typeof h.root === 'string' && !!h.owner
}

/**
 * Read a journal without loading captured bytes. A record cut short at the
 * end is a torn write (dropped, `torn`); records of a stale generation end
 * the journal; anything else unreadable is `damage`.
 */
export function readJournal(file: string): ParsedJournal {
  const fd = openSync(file, 'r')
  try {
    const size = fstatSync(fd).size
    const parsed: ParsedJournal = { file, records: [], end: 0, torn: false }
    const first = readLine(fd, 0, size)
    if (!first) {
      parsed.torn = size > 0
      return parsed
    }
    let header: unknown
    try {
      header = JSON.parse(first.text)
    } catch {
      parsed.damage = 'unreadable header'
      return parsed
    }
    if (!isHeader(header)) {
      parsed.damage = 'not a dsh-snapshot journal header'
      return parsed
    }
    parsed.header = header
    let pos = header.len
    parsed.end = Math.min(pos, size)
    while (pos < size) {
      const line = readLine(fd, pos, size)
      if (!line) {
        readTail(fd, pos, size, header.gen, parsed)
        break
      }
      let record: JournalRecord & { g?: number }
      try {
        record = JSON.parse(line.text)
      } catch {
        parsed.damage = `unreadable record at byte ${pos}`
        break
      }
      if (record.g !== header.gen) break
      delete record.g
      const psize = payloadSize(record)
      let next = line.next
      let payloadOffset: number | undefined
      if (psize) {
        if (next + psize === size && record.t === 'cap') {
          // Only the closing newline is missing: the bytes are whole (checked against their checksum when used).
          parsed.records.push({ record, payloadOffset: next })
          parsed.unframed = describeRecord(record)
          break
        }
        if (next + psize + 1 > size) {
          parsed.torn = true
          if (record.t === 'cap') parsed.tornCapture = { path: record.entry.path, size: psize, have: size - next, offset: next }
          break
        }
        const end = Buffer.alloc(1)
        readSync(fd, end, 0, 1, next + psize)
        if (end[0] !== 0x0a) {
          parsed.damage = `captured bytes of ${describeRecord(record)} at byte ${next} are not framed`
          break
        }
        payloadOffset = next
        next += psize + 1
      }
      parsed.records.push(payloadOffset === undefined ? { record } : { record, payloadOffset })
      pos = next
      parsed.end = next
    }
    return parsed
  } finally {
    closeSync(fd)
  }
}
