/** Misuse of a proof chain (no chain at a path, an entry that cannot be recorded). `code` is stable. */
export class ProofChainError extends Error {
  readonly code = 'PROOFCHAIN'
}
