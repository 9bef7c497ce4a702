/** Outcome of one proof: the check passed (`ok`) or did not (`fail`). */
export type ProofOutcome = 'ok' | 'fail'

/**
 * Kinds the suite writes. Open-ended: any lowercase word is accepted
 * (`anchor` is reserved for the pruning record).
 */
export type ProofKind = 'typecheck' | 'compile' | 'test' | 'lint' | 'coverage' | 'claim' | 'restore' | 'write' | (string & {})

/** What a caller hands to `append`; the chain adds seq, time, prevHash and hash. */
export interface ProofInput {
  sessionId: string
  kind: ProofKind
  /** What was checked, e.g. `typecheck src/auth.ts`; the summary deduplicates by it. One line. */
  subject: string
  outcome: ProofOutcome
  /** Why, in a few lines (capped by the chain). */
  detail?: string
  /** Milliseconds since the epoch; defaults to the chain's clock at `append`. */
  time?: number
}

/**
 * One line of `proofchain.jsonl`. `hash` is the SHA-256 of the canonical
 * encoding of every other field; `prevHash` is the previous entry's hash
 * (or the genesis hash, or an anchor's `prevHash` after pruning).
 */
export interface ProofEntry {
  seq: number
  time: number
  sessionId: string
  kind: ProofKind
  subject: string
  outcome: ProofOutcome
  detail: string
  prevHash: string
  hash: string
}

/**
 * First line of a pruned chain. Entries up to and including `seq` were
 * dropped; the first kept entry has seq `seq + 1` and links to `prevHash`
 * (the hash of the last dropped entry, never recomputed). `carried` keeps
 * the newest dropped entry of each subject the kept entries do not
 * supersede, so the summary survives pruning; each still verifies by its
 * own hash, and the anchor's `hash` covers them all.
 */
export interface ProofAnchor {
  kind: 'anchor'
  seq: number
  time: number
  prevHash: string
  /** Entries dropped by this and every earlier prune. */
  pruned: number
  /** Hash of the anchor this prune replaced, or null for the first prune. */
  prevAnchor: string | null
  carried: ProofEntry[]
  hash: string
}

export type ProofRecord = ProofEntry | ProofAnchor

/** Why a chain failed verification. */
export type ChainProblemKind =
  | 'hash mismatch' | 'broken link' | 'bad anchor' | 'torn line' | 'corrupt line' | 'malformed entry'
  /** The head record names a newer entry than the file holds: entries were cut off the end. */
  | 'missing entries'
  /** The head record beside the chain cannot be read. */
  | 'bad head record'
  /** The seal in dsh's key store does not verify, or was frozen when the chain stopped matching it. */
  | 'bad seal'
  /** Entries after the sealed one that dsh did not seal. */
  | 'not sealed'

/** The first bad record of a chain, named by 1-based line number (and seq when it could be read). */
export interface ChainProblem {
  line: number
  seq?: number
  kind: ChainProblemKind
  message: string
}
