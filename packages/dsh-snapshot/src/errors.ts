/** Why a snapshot operation failed; `reason` refines the stable `code`. */
export type SnapshotFailure =
  /** A path resolves outside the workspace (symlinks included). */
  | 'escape'
  /** Over `maxFileBytes` or `maxDirBytes`. */
  | 'too-large'
  /** Not a file, symlink or directory (a socket, a device…). */
  | 'unsupported'
  /** A path could not be read (permissions, a vanished workspace…). */
  | 'io'
  /** The journal could not be written or read. */
  | 'journal'
  /** The journal was closed (the plugin was disposed). */
  | 'closed'
  /** `shell: 'git'` could not snapshot or restore the working tree. */
  | 'git'

/** The one error class of dsh-snapshot. `code` is stable; `reason` says which failure. */
export class SnapshotError extends Error {
  readonly code = 'SNAPSHOT'
  constructor(readonly reason: SnapshotFailure, message: string) {
    super(message)
  }
}
