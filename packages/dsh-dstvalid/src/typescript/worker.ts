/**
 * Worker-thread entry of the TypeScript check: holds one warm
 * {@link TsProgramChecker} and answers check (and importers) requests one
 * at a time. The
 * main thread kills the worker at a check's timeout and starts a new one.
 */
import { createRequire } from 'node:module'
import { parentPort, workerData } from 'node:worker_threads'
import type * as TS from 'typescript'
import { TsProgramChecker } from './program.ts'
import type { WorkerInit, WorkerReply, WorkerRequest } from './protocol.ts'

const init = workerData as WorkerInit
const ts = createRequire(import.meta.url)(init.typescriptPath) as typeof TS
const checker = new TsProgramChecker(ts, init.root, init.configPath)

parentPort!.on('message', (request: WorkerRequest) => {
  let reply: WorkerReply
  try {
    reply = request.kind === 'importers'
      ? { id: request.id, ok: true, impact: checker.importers(request.files, request.max) }
      : { id: request.id, ok: true, result: checker.check(request.changed) }
  } catch (error) {
    reply = { id: request.id, ok: false, error: (error as Error)?.stack ?? String(error) }
  }
  parentPort!.postMessage(reply)
})
parentPort!.postMessage({ ready: true, tsVersion: ts.version })
