import type { Config } from './config.ts'

/**
 * What one capture recorded about one path, workspace-relative and posix.
 * The journal holds these; a file's bytes follow its record.
 */
export type CaptureEntry =
  /** A regular file: `size` bytes follow in the journal, restored with `mode`. */
  | { kind: 'file'; path: string; mode: number; size: number; sum: number }
  /** A symbolic link, recorded as a link (never followed). */
  | { kind: 'symlink'; path: string; target: string }
  /** Nothing was there: rollback deletes what the write created, then `dirs` (missing ancestors, outermost first) when empty. */
  | { kind: 'absent'; path: string; dirs: string[] }
  /**
   * A directory. With `walk`, it is the root of a `captureDir`: rollback
   * also deletes what appeared below it that the capture did not see
   * (except names matched by `walk.skip`).
   */
  | { kind: 'dir'; path: string; mode: number; walk?: { skip: string[] } }
  /** The working tree of a git workspace, as a tree object in the vault's object store (`shell: 'git'`). */
  | { kind: 'tree'; path: string; tree: string; index: string; objects: string; exclude: string[] }
  /**
   * The workspace as a shell call found it (`shell: 'track'`): the tracker's
   * pack up to `upto` bytes. Until the call's changes are measured (then each
   * changed path has its own capture), rollback and recovery compare the
   * whole workspace with it, leaving out `.gitignore`d paths and `skip`.
   */
  | { kind: 'manifest'; path: string; pack: string; upto: number; skip: string[] }
  /** A path a shell call changed whose earlier bytes were not kept (over the tracker's size cap): it cannot be restored. */
  | { kind: 'uncaptured'; path: string; why: string }
  /**
   * The git state a shell call found (path `.git`): HEAD as its file held it,
   * every ref's value, and the index as a hard link (`ino` -1: a copy) in
   * the vault. Rollback puts back what the call moved.
   */
  | { kind: 'refs'; path: string; gitDir: string; commonDir: string; head: string; refs: Record<string, string>; index?: { link: string; ino: number } }

export type CaptureKind = CaptureEntry['kind']

/** Which open scopes a commit or rollback means. */
export interface ScopeSelector {
  /** The scope that captured for this call (in step mode: the step scope the call joined). Wins over `step`. */
  callId?: string
  /** The open scopes of this step (of the newest turn that has one). */
  step?: number
  /** Every open scope that captured for one of these calls (a group: the unfinished change of a turn). Wins over `callId` and `step`. */
  callIds?: readonly string[]
}

/** Where a capture goes: the scope with this `key`, opened on first use. */
export interface ScopeRef {
  /** Identity of the scope while it is open, e.g. `call:<callId>` or `step:<turn>:<step>`. */
  key: string
  callId?: string
  step?: number
  turn?: number
}

/** The answer to a rollback. Paths are workspace-relative, posix; a removed directory ends with `/`. */
export interface RollbackResult {
  /** False when no open scope matched; then nothing was touched and the lists are empty. */
  matched: boolean
  restored: string[]
  deleted: string[]
  failed: { path: string; error: string }[]
  /** What was put back in git (refs a rolled-back shell call moved, the index); absent when nothing. */
  git?: string[]
  /** One line saying what was done (`nothing to restore: …` when nothing matched). */
  message: string
}

/** What a capture call did. */
export interface CaptureSummary {
  /** Id of the scope the captures went to. */
  scope: string
  /** Paths captured now, in order. */
  captured: string[]
  /** Paths this scope had already captured (first capture wins, so they were kept as they were). */
  kept: string[]
  /** Bytes of file content written to the journal. */
  bytes: number
}

/** One path held by an open scope. */
export interface CapturedPath {
  path: string
  kind: CaptureKind
  scope: string
  callIds: string[]
  step?: number
  turn?: number
}

/** One closed scope, as `commit` reports it. */
export interface ScopeSummary {
  scope: string
  key: string
  callIds: string[]
  step?: number
  turn?: number
  paths: string[]
}

/**
 * When the journal reaches the disk.
 * - `capture`: before every write runs (its undo data is durable first); a
 *   verdict is made durable by the next capture, or the OS within seconds —
 *   a power cut in between turns that last commit into a rollback, never a
 *   torn file. Restores are fsynced.
 * - `always`: also every verdict, at once.
 * - `off`: never (throwaway workspaces, tests): safe against a killed process, not a power cut.
 */
export type SyncMode = Config['fsync']

/**
 * Options of a {@link Snapshots} journal (one per session): where and whose,
 * and the capture settings of the plugin's {@link Config} (described there;
 * one left out takes its default).
 */
export interface SnapshotsOptions extends Partial<Pick<Config, 'fsync' | 'maxFileBytes' | 'maxDirBytes' | 'exclude' | 'ignore' | 'keepBytes' | 'keepDays' | 'elsewhere'>> {
  /** Workspace root; every captured path must resolve inside it. */
  root: string
  /** Vault directory; the journal lives in `<vault>/snapshots/`. */
  vault: string
  /** Session the journal belongs to (recorded in its header). */
  sessionId: string
}

/** `snapshot/rollback`: which scope(s) of which session to put back, and why. */
export interface RollbackRequest {
  sessionId: string
  callId?: string
  step?: number
  /** A group: every open scope of these calls, put back newest first (so each path ends as before the oldest). */
  callIds?: readonly string[]
  reason: string
}

/** `snapshot/commit`: which scope(s) of which session to close, keeping the files. */
export interface CommitRequest {
  sessionId: string
  callId?: string
  step?: number
  /** A group: every open scope of these calls. */
  callIds?: readonly string[]
}

/** `snapshot/restored`: a rollback that matched, and what it did. */
export interface RestoredInfo {
  sessionId: string
  callId?: string
  step?: number
  callIds?: readonly string[]
  reason: string
  restored: string[]
  deleted: string[]
  failed: { path: string; error: string }[]
}

/** What a rollback or recovery put back: paths restored, paths deleted (created by the write), and failures. */
export interface RestoreOutcome {
  restored: string[]
  deleted: string[]
  failed: { path: string; error: string }[]
  /** What was put back in git (refs a shell call moved, the index), e.g. `main back to 1a2b3c4 (from 9f8e7d6)`; absent when nothing. */
  git?: string[]
}

/**
 * `snapshot/changed`: what one guarded call changed, announced once, when
 * its tool returned (before any judge sees the result). Paths are
 * workspace-relative, posix, sorted.
 */
export interface CallChange {
  sessionId: string
  callId: string
  /** The tool's name. */
  tool: string
  effects: 'write' | 'shell'
  /**
   * Paths that did not exist before the call and do now. A writer's lists
   * hold every path it named (one it left as it was is `modified`); a shell
   * call's hold what was measured changed.
   */
  created: string[]
  /** Paths that existed before the call and still do. */
  modified: string[]
  /** Paths that existed before the call and do not now. */
  deleted: string[]
  /**
   * What each listed path held before the call (`null`: nothing), by path.
   * Absent when one of them was not kept as bytes: a directory, a symlink,
   * a file over a size cap, or a shell call measured by file times only
   * (`shell: 'git'` or `'off'`).
   */
  before?: ReadonlyMap<string, Buffer | null>
}

/** `snapshot/outside`: files that changed while no tool call ran (a background process, an editor), found before the call `callId`. */
export interface OutsideChanges {
  sessionId: string
  callId: string
  /** Workspace-relative posix paths of files created, modified or deleted. */
  paths: string[]
}
