import { readSync } from 'node:fs'

/** One line of a file region, with its byte span. */
export interface LineRead {
  /** The line without its newline, decoded as UTF-8. */
  text: string
  /** Byte offset of the line's first byte. */
  start: number
  /** Byte offset just past the line (past its newline when complete). */
  end: number
  /** 1-based line number, counted from `firstLine`. */
  line: number
  /** False for a last line with no newline (a write in progress, or torn by a crash). */
  complete: boolean
}

const NL = 0x0a

/**
 * Read the lines of `fd` between byte offsets `start` and `end`, a chunk at
 * a time, so a chain of a million entries is never held in memory at once.
 * Lines are split on bytes, then decoded, so a multi-byte character that
 * straddles a chunk boundary is never broken.
 */
export function* readLines(fd: number, start: number, end: number, firstLine = 1, chunkSize = 1 << 20): Generator<LineRead> {
  const buf = Buffer.allocUnsafe(chunkSize)
  let carry: Buffer | undefined
  let carryStart = start
  let pos = start
  let line = firstLine
  while (pos < end) {
    const n = readSync(fd, buf, 0, Math.min(chunkSize, end - pos), pos)
    if (n === 0) break
    let from = 0
    for (;;) {
      const nl = buf.indexOf(NL, from)
      if (nl === -1 || nl >= n) break
      const piece = buf.subarray(from, nl)
      const bytes = carry ? Buffer.concat([carry, piece]) : piece
      const lineStart = carry ? carryStart : pos + from
      yield { text: bytes.toString('utf8'), start: lineStart, end: pos + nl + 1, line: line++, complete: true }
      carry = undefined
      from = nl + 1
    }
    if (from < n) {
      const rest = Buffer.from(buf.subarray(from, n))
      if (!carry) carryStart = pos + from
      carry = carry ? Buffer.concat([carry, rest]) : rest
    }
    pos += n
  }
  if (carry?.length) yield { text: carry.toString('utf8'), start: carryStart, end: pos, line, complete: false }
}
