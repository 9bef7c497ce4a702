import { writevSync } from 'node:fs'

/** Write every buffer at `position`, retrying what a short `writev` left. */
export function writeAllAt(fd: number, buffers: Uint8Array[], position: number) {
  let pending = buffers
  let at = position
  while (pending.length) {
    let written = writevSync(fd, pending, at)
    at += written
    // writev may write less than asked: drop what went out and retry the rest.
    const rest: Uint8Array[] = []
    for (const buf of pending) {
      if (written >= buf.length) {
        written -= buf.length
        continue
      }
      rest.push(written ? buf.subarray(written) : buf)
      written = 0
    }
    pending = rest
  }
}
