import type { ImpactList } from '../../impact.ts'
import type { ParseRequest } from '../js/body-edit.ts'
import type { TsCheckResult } from './program.ts'

/** What the worker is started with. */
export interface WorkerInit {
  root: string
  configPath: string
  /** Absolute path of the workspace's own `typescript` module entry. */
  typescriptPath: string
  /** Directory of the build-info cache (the session's vault); absent: none. */
  cacheDir?: string
}

/**
 * A type-check (`changed`: absolute paths a write touched; `pause`: it may
 * answer part-way, at a file with a new error), going on with a paused one,
 * the importers of workspace-relative `files`, a write of the build-info
 * cache now, forgetting the last check (a byte-identical rollback), or a
 * parse for the body-edit parser (with the worker's TypeScript). Any
 * request but `resume` stops a paused check (see `TsProgramChecker.check`).
 */
export type WorkerRequest =
  | { id: number; kind: 'check'; changed: string[]; pause?: boolean }
  | { id: number; kind: 'resume' }
  | { id: number; kind: 'importers'; files: string[]; max: number }
  | { id: number; kind: 'persist' }
  | { id: number; kind: 'revert' }
  | { id: number; kind: 'parse'; request: ParseRequest }

export type WorkerReply =
  | { id: number; ok: true; result: TsCheckResult }
  | { id: number; ok: true; impact: ImpactList }
  | { id: number; ok: true; persisted: number }
  | { id: number; ok: true; reverted: number }
  | { id: number; ok: true; parsed: unknown }
  | { id: number; ok: false; error: string }

/** Sent by the worker on its own after each answer (and after the collection that follows it): its heap then. */
export interface WorkerHeap {
  heap: { usedBytes: number; totalBytes: number }
}

export interface WorkerReady {
  ready: true
  tsVersion: string
}
