/** Cap a text at `max` bytes (UTF-8), keeping the head and tail and saying how much was cut. */
export function capText(text: string, max: number): string {
  const bytes = Buffer.byteLength(text)
  if (bytes <= max) return text
  const buf = Buffer.from(text)
  const half = Math.max(0, Math.floor((max - 40) / 2))
  const head = buf.subarray(0, half).toString('utf8').replace(/\uFFFD$/, '')
  const tail = buf.subarray(buf.length - half).toString('utf8').replace(/^\uFFFD/, '')
  return `${head}\n[… ${bytes - half * 2} bytes truncated]\n${tail}`
}

/** Keep at most `max` lines, appending "… N more" when lines were dropped. */
export function capLines(lines: readonly string[], max: number, maxBytes = 4096): string[] {
  const out: string[] = []
  let used = 0
  for (const line of lines) {
    if (out.length >= max || used + Buffer.byteLength(line) + 1 > maxBytes) break
    out.push(line)
    used += Buffer.byteLength(line) + 1
  }
  if (out.length < lines.length) out.push(`… ${lines.length - out.length} more`)
  return out
}
