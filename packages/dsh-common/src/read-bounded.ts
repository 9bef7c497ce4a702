import { constants, promises as fsp, type Stats } from 'node:fs'

/** Error raised when a path is not a regular file (a FIFO, a socket, a device, a directory). `code` is stable. */
export class NotRegularFileError extends Error {
  readonly code = 'NOT_REGULAR_FILE'
  constructor(readonly path: string, readonly kind: string) {
    super(`not a regular file (${kind})`)
  }
}

/** Error raised when a read was aborted through its signal. `code` is stable. */
export class ReadAbortedError extends Error {
  readonly code = 'READ_ABORTED'
  constructor(readonly path: string) {
    super('read aborted')
  }
}

function fileKind(st: Stats): string {
  if (st.isFIFO()) return 'a FIFO'
  if (st.isSocket()) return 'a socket'
  if (st.isCharacterDevice()) return 'a character device'
  if (st.isBlockDevice()) return 'a block device'
  if (st.isDirectory()) return 'a directory'
  return 'not a file'
}

const CHUNK = 1 << 16

export interface BoundedReadOptions {
  /** Keep at most this many bytes: the head and tail halves, with a `[… N bytes truncated]` line between (as `capText`). */
  maxBytes?: number
  signal?: AbortSignal
}

/**
 * Read a regular file's text without ever blocking on what is not one:
 * the file is opened non-blocking (opening a FIFO with no writer would
 * otherwise hang a thread-pool thread — and with it the process's exit),
 * checked with `fstat` on the open descriptor (no swap between check and
 * read), and read in chunks that stop when `signal` aborts. With
 * `maxBytes`, only the kept head and tail are read, whatever the file's size.
 * @throws NotRegularFileError, ReadAbortedError; ENOENT and the like as thrown by `open`.
 */
export async function readRegularText(abs: string, options: BoundedReadOptions = {}): Promise<string> {
  const handle = await fsp.open(abs, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY)
  try {
    const st = await handle.stat()
    if (!st.isFile()) throw new NotRegularFileError(abs, fileKind(st))
    const readRange = async (start: number, length: number): Promise<Buffer> => {
      const buf = Buffer.alloc(length)
      let got = 0
      while (got < length) {
        if (options.signal?.aborted) throw new ReadAbortedError(abs)
        const { bytesRead } = await handle.read(buf, got, Math.min(CHUNK, length - got), start + got)
        if (bytesRead === 0) break
        got += bytesRead
      }
      return buf.subarray(0, got)
    }
    const max = options.maxBytes
    if (max === undefined || st.size <= max) return (await readRange(0, st.size)).toString('utf8')
    // The same cut as capText: half the budget (less the note's room) from each end.
    const half = Math.max(0, Math.floor((max - 40) / 2))
    const head = (await readRange(0, half)).toString('utf8').replace(/\uFFFD$/, '')
    const tail = (await readRange(st.size - half, half)).toString('utf8').replace(/^\uFFFD/, '')
    return `${head}\n[… ${st.size - half * 2} bytes truncated]\n${tail}`
  } finally {
    await handle.close()
  }
}
