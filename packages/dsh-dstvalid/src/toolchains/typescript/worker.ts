/**
 * Worker-thread entry of the TypeScript check: holds one warm
 * {@link TsProgramChecker} and answers check (and importers) requests one
 * at a time; with a cache directory, writes the build-info cache once idle
 * after a check (at most every 2 minutes; and when asked, before it is disposed). The main thread
 * kills the worker at a check's timeout and starts a new one.
 */
import { createRequire } from 'node:module'
import { getHeapStatistics, setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { parentPort, workerData } from 'node:worker_threads'
import type * as TS from 'typescript'
import { canParseWith, parseWith } from '../js/body-edit.ts'
import { TsProgramChecker } from './program.ts'
import type { WorkerHeap, WorkerInit, WorkerReply, WorkerRequest } from './protocol.ts'

const init = workerData as WorkerInit
const ts = createRequire(import.meta.url)(init.typescriptPath) as typeof TS
const checker = new TsProgramChecker(ts, init.root, init.configPath, { cacheDir: init.cacheDir })

/** Idle time after a check before the build-info cache is written (a check in between is not slowed by it). */
const PERSIST_IDLE_MS = 5000
/** At most one write per this long while writes keep coming (the cache only needs to be recent: file versions are content hashes). */
const PERSIST_EVERY_MS = 120_000
let persistTimer: NodeJS.Timeout | undefined
let lastPersist = 0
/** Idle time after a check that rebuilt programs before the full collection (a parse or check asked right after it does not wait for it). */
const COLLECT_IDLE_MS = 1000
let collectTimer: NodeJS.Timeout | undefined
let collectDue = false
/** Whether the body-edit parser can use this TypeScript (else it parses with its own, in the main thread). */
const parses = canParseWith(ts)

/**
 * A full garbage collection, run once a check that rebuilt programs has been
 * answered: the type-checkers it replaced are garbage by then, and V8 would
 * otherwise keep their memory (gigabytes on a large project) while the worker
 * waits — next to the test runner the guard starts meanwhile.
 */
const collect = (() => {
  try {
    setFlagsFromString('--expose-gc')
    return runInNewContext('gc') as () => void
  } catch {
    // A runtime without the flag: V8 collects on its own schedule.
    return undefined
  }
})()

/** The collection a rebuilding check left due, once the worker has been idle for {@link COLLECT_IDLE_MS}. */
function scheduleCollect(): void {
  if (!collect || !collectDue) return
  collectTimer = setTimeout(() => {
    collectDue = false
    collect()
    reportHeap()
  }, COLLECT_IDLE_MS)
}

/** The heap as it is now, for the host's status (sent after each answer). */
function reportHeap(): void {
  const stats = getHeapStatistics()
  parentPort!.postMessage({ heap: { usedBytes: stats.used_heap_size, totalBytes: stats.total_heap_size } } satisfies WorkerHeap)
}

/** `final`: the client asks before ending the worker (see {@link TsProgramChecker.persist}). */
function persist(final = false): number {
  clearTimeout(persistTimer)
  persistTimer = undefined
  lastPersist = Date.now()
  try {
    return checker.persist(final)
  } catch {
    // A cache that cannot be written (full disk, read-only vault) only costs the next start its speed.
    return 0
  }
}

parentPort!.on('message', (request: WorkerRequest) => {
  clearTimeout(collectTimer)
  if (request.kind === 'parse') {
    // A parse leaves the check's state alone (its cache write, its collection stay due).
    let reply: WorkerReply
    try {
      if (!parses) throw new Error(`TypeScript ${ts.version} lacks what the body-edit parser uses`)
      reply = { id: request.id, ok: true, parsed: parseWith(ts, request.request) }
    } catch (error) {
      reply = { id: request.id, ok: false, error: (error as Error)?.stack ?? String(error) }
    }
    parentPort!.postMessage(reply)
    scheduleCollect()
    return
  }
  clearTimeout(persistTimer)
  let reply: WorkerReply
  try {
    reply = request.kind === 'importers'
      ? { id: request.id, ok: true, impact: checker.importers(request.files, request.max) }
      : request.kind === 'persist'
        ? { id: request.id, ok: true, persisted: persist(true) }
        : request.kind === 'revert'
          ? { id: request.id, ok: true, reverted: checker.revert() }
          : request.kind === 'resume'
            ? { id: request.id, ok: true, result: checker.resume() }
            : { id: request.id, ok: true, result: checker.check(request.changed, { pause: request.pause }) }
  } catch (error) {
    reply = { id: request.id, ok: false, error: (error as Error)?.stack ?? String(error) }
  }
  parentPort!.postMessage(reply)
  if ('result' in reply && !reply.result.paused && Object.keys(reply.result.recheckedFiles).length > 0) collectDue = true
  setImmediate(reportHeap)
  scheduleCollect()
  // A paused check waits for its resume (writing the cache would stop it).
  if (init.cacheDir && (request.kind === 'check' || request.kind === 'resume') && !checker.paused) persistTimer = setTimeout(persist,
    Math.max(PERSIST_IDLE_MS, lastPersist + PERSIST_EVERY_MS - Date.now()))
})
parentPort!.postMessage({ ready: true, tsVersion: ts.version })
