import { basename, dirname, join } from 'node:path'
import { readSeal, realpathNearest, writeSeal } from 'dsh-common'

/**
 * The chain's seal: its newest entry as this machine's dsh wrote it, kept
 * outside the vault (in dsh's key store, `stateDir()`) and MACed with the
 * key there. The agent's tools can rewrite the vault (the chain, its head
 * record) but neither read the key nor reach the seal (the bash tool hides
 * the key store), so a chain rewritten with recomputed hashes, cut short,
 * extended or deleted no longer matches it. `frozen` is set — and the seal
 * never moved again — once an appender finds the chain no longer ends at
 * the sealed entry, so the evidence survives later appends.
 *
 * A batch is sealed in two steps: before it is written, the seal names the
 * entry it will end with (`next`); after, that entry becomes the sealed one.
 * A dsh stopped between the two leaves a chain ending at `next`, which still
 * counts as sealed (its hash was sealed before it was written), so a crash is
 * never mistaken for a forgery.
 */
export interface ChainSeal {
  seq: number
  hash: string
  time: number
  /** The entry the batch being written will end with. */
  next?: { seq: number; hash: string }
  frozen?: string
}

/** What the seal is kept under: the chain's real path (the file itself may be gone). */
function sealName(file: string): string {
  return `proofchain:${join(realpathNearest(dirname(file)), basename(file))}`
}

/** The chain's seal; `'forged'` when one is there but its MAC does not verify; undefined when never sealed here. */
export function readChainSeal(file: string): ChainSeal | 'forged' | undefined {
  const fields = readSeal(sealName(file))
  if (fields === undefined || fields === 'forged') return fields
  const { seq, hash, time, frozen, nextSeq, nextHash } = fields
  if (typeof seq !== 'number' || typeof hash !== 'string' || typeof time !== 'number') return 'forged'
  return {
    seq, hash, time,
    ...(typeof nextSeq === 'number' && typeof nextHash === 'string' ? { next: { seq: nextSeq, hash: nextHash } } : {}),
    ...(typeof frozen === 'string' ? { frozen } : {}),
  }
}

export function writeChainSeal(file: string, seal: ChainSeal): void {
  writeSeal(sealName(file), {
    seq: seal.seq, hash: seal.hash, time: seal.time,
    ...(seal.next ? { nextSeq: seal.next.seq, nextHash: seal.next.hash } : {}),
    ...(seal.frozen ? { frozen: seal.frozen } : {}),
  })
}

/** Whether the chain ending at `tail` ends where the seal says: at the sealed entry, or at the one sealed as next. */
export function endsAtSeal(seal: ChainSeal, tail: { seq: number; hash: string }): boolean {
  return (seal.seq === tail.seq && seal.hash === tail.hash) || (seal.next?.seq === tail.seq && seal.next.hash === tail.hash)
}

/**
 * Under the chain's lock, before appending after `tail`: may this batch
 * move the seal? Yes when there is none yet or the chain still ends at the
 * sealed entry. Otherwise someone other than dsh wrote the chain since it
 * was sealed (or dsh stopped between writing and sealing): the seal is
 * frozen with the reason, and a warning returned.
 */
export function reconcileSeal(file: string, tail: { seq: number; hash: string }): { update: boolean; warning?: string } {
  const seal = readChainSeal(file)
  if (seal === undefined) return { update: true }
  if (seal === 'forged') return { update: false, warning: `${file}: its seal does not verify with this machine's key; it is left as found (run dsh proof verify)` }
  if (seal.frozen) return { update: false }
  if (endsAtSeal(seal, tail)) return { update: true }
  const frozen = seal.seq > tail.seq
    ? `the chain ended at seq ${tail.seq} although dsh had sealed seq ${seal.seq}`
    : seal.seq === tail.seq
      ? `seq ${tail.seq} in the chain is not the entry dsh sealed`
      : `entries after seq ${seal.seq} (to seq ${tail.seq}) were not sealed by dsh: written by something else, or dsh stopped before sealing them`
  writeChainSeal(file, { ...seal, frozen })
  return { update: false, warning: `${file}: ${frozen}; the seal is frozen as evidence (run dsh proof verify)` }
}
