import { closeSync, fstatSync, openSync, readSync } from 'node:fs'

/** An entry of a proof chain, as far as the witness needs it. */
export interface WitnessHead {
  seq: number
  hash: string
}

/** What the host answers on `GET /proof/head`: per chain file, the head it wrote last, and the first rewrite it saw. */
export interface WitnessReport {
  pid: number
  chains: Record<string, { head: WitnessHead; rewritten?: string }>
}

/** The last whole line of `file` as a chain entry's seq and hash (reads only the file's end). */
export function readChainTail(file: string): WitnessHead | undefined {
  let fd: number
  try {
    fd = openSync(file, 'r')
  } catch {
    return undefined
  }
  try {
    const size = fstatSync(fd).size
    const len = Math.min(size, 65_536)
    const buf = Buffer.alloc(len)
    readSync(fd, buf, 0, len, size - len)
    const text = buf.toString('utf8')
    const lines = text.split('\n').filter(Boolean)
    const last = text.endsWith('\n') ? lines.at(-1) : lines.at(-2)
    if (!last) return undefined
    const v = JSON.parse(last) as Partial<WitnessHead>
    return typeof v.seq === 'number' && typeof v.hash === 'string' ? { seq: v.seq, hash: v.hash } : undefined
  } catch {
    // A line that is not an entry: the chain's end is not one this host wrote.
    return { seq: -1, hash: 'unreadable' }
  } finally {
    closeSync(fd)
  }
}

const short = (h: WitnessHead | undefined) => (h ? `seq ${h.seq} ${h.hash.slice(0, 12)}` : 'no entry')

/**
 * The hooks host's own record of the proof chains its suite writes: the
 * head of each as the suite appended it (`proofchain/appended`), in the
 * host's memory only. A hook-driven agent's shell runs as the user, so it
 * can rewrite the chain and re-seal it with the key in dsh's key store;
 * it cannot change what the running host remembers. Each hook call and
 * each `dsh proof verify` compares the chain's end with it.
 */
export class ChainWitness {
  private readonly heads = new Map<string, WitnessHead>()
  private readonly rewritten = new Map<string, string>()

  /** The suite appended `entry` to `file`. */
  appended(file: string, entry: WitnessHead): void {
    const known = this.heads.get(file)
    if (!known || entry.seq > known.seq) this.heads.set(file, { seq: entry.seq, hash: entry.hash })
  }

  /**
   * Compare each chain's end with what the suite wrote. A difference that
   * persists past `settleMs` (an append of the suite's own still on its way
   * to its event) is a rewrite from outside: returned once, kept as evidence.
   */
  async check(settleMs = 50): Promise<string[]> {
    const found: string[] = []
    for (const file of this.heads.keys()) {
      if (this.rewritten.has(file) || this.matches(file)) continue
      await new Promise(r => setTimeout(r, settleMs))
      if (this.matches(file)) continue
      const why = `${file} ends at ${short(readChainTail(file))}, but this host's suite last wrote ${short(this.heads.get(file))}: the chain was rewritten outside dsh`
      this.rewritten.set(file, why)
      found.push(why)
    }
    return found
  }

  private matches(file: string): boolean {
    const tail = readChainTail(file)
    const head = this.heads.get(file)!
    return !!tail && tail.seq === head.seq && tail.hash === head.hash
  }

  report(): WitnessReport {
    const chains: WitnessReport['chains'] = {}
    for (const [file, head] of this.heads) {
      const rewritten = this.rewritten.get(file)
      chains[file] = { head, ...(rewritten ? { rewritten } : {}) }
    }
    return { pid: process.pid, chains }
  }
}
