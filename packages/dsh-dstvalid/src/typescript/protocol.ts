import type { TsCheckResult } from './program.ts'

/** What the worker is started with. */
export interface WorkerInit {
  root: string
  configPath: string
  /** Absolute path of the workspace's own `typescript` module entry. */
  typescriptPath: string
}

export interface WorkerRequest {
  id: number
  changed: string[]
}

export type WorkerReply =
  | { id: number; ok: true; result: TsCheckResult }
  | { id: number; ok: false; error: string }

export interface WorkerReady {
  ready: true
  tsVersion: string
}
