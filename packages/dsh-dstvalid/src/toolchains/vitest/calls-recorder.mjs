// @ts-check
/**
 * The warm test runner's second setup file in the vitest projects whose
 * test files' executions it can tell apart (`forks` or `threads` workers,
 * `sequence.hooks: 'stack'`, no coverage of their own): records which
 * functions of the workspace each test file executed, for the map that
 * selects the test files a body-only edit can reach (ADR 0021).
 * Plain JavaScript with Node built-ins only.
 *
 * V8's precise coverage in function granularity (`callCount`, not
 * `detailed`: an invocation counter per function, no block counters) is
 * started once per worker through `node:inspector` (its `post` answers
 * synchronously in the same thread). Before each test file the counters
 * are reset; the file's last `afterAll` (registered here first, so it runs
 * last under the `stack` order) takes them and writes, per workspace module,
 * the names V8 gives the functions that ran (`""` is a module's own code)
 * to `<DSH_VITEST_READS>/<sha1 of the project name, NUL, the test file>.calls.json`
 * as `{ ran, worker, hooks, setup }` (a test file two projects include runs once in each,
 * maybe down other paths; `hooks`, `setup`: the project's hook order and setup
 * files: under another order than `stack` the record misses what the file's
 * own `afterAll` hooks run, which the reader of the record checks).
 *
 * Module initialisers: in a worker that runs several test files without
 * isolation (`isolate: false`), a module is evaluated once, by the first
 * file that imports it; what its initialisers ran (at import time, maybe in
 * other modules) is in that file's interval only, yet every later file that
 * uses the module depends on it. So the worker keeps the intervals in which
 * workspace modules were evaluated (a script compiled: a new script id),
 * with what ran in them — each file is cut in two intervals, its collection
 * (imports, up to its first `beforeAll`) and its tests — in
 * `<DSH_VITEST_READS>/<pid>-<thread>.inits.jsonl`; the runner adds to a
 * file's entry what ran while each module of its import closure that it did
 * not evaluate itself was evaluated. A file that runs alone in a fresh
 * worker (isolation) evaluated all it used itself: binary coverage, one take
 * at its end, no intervals file.
 */
import { Session } from 'node:inspector'
import { appendFileSync, existsSync, writeFileSync } from 'node:fs'
import { threadId } from 'node:worker_threads'
import { createHash } from 'node:crypto'
import { resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

const dir = process.env.DSH_VITEST_READS
const root = process.env.DSH_VITEST_READS_ROOT
const KEY = Symbol.for('dsh.vitest.calls')
const STATE = Symbol.for('dsh.vitest.calls.worker')

/** @typedef {{ counts: boolean, post: (method: string, params?: object) => any }} Profiler */

/** @param {boolean} counts invocation counters (`callCount`: each take reports what ran since the last) or binary coverage (each function reported once, the first take after it ran) @returns {Profiler | undefined} */
function profiler(counts) {
  const g = /** @type {any} */ (globalThis)
  const running = g[KEY]
  if (running && counts && !running.counts) {
    // A worker thought to run one file runs another: binary coverage reports a function once per worker, counters are needed now.
    try {
      running.post('Profiler.stopPreciseCoverage')
      running.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false })
      running.counts = true
    } catch {
      g[KEY] = null
      return undefined
    }
  }
  if (running !== undefined) return running || undefined
  try {
    const session = new Session()
    session.connect()
    /** @type {Profiler} */
    const p = {
      counts,
      post(method, params) {
        let answer
        let failure
        session.post(method, params, (error, value) => { failure = error; answer = value })
        if (failure) throw failure
        return answer
      },
    }
    p.post('Profiler.enable')
    p.post('Profiler.startPreciseCoverage', { callCount: counts, detailed: false })
    g[KEY] = p
    return p
  } catch {
    // No inspector in this worker (another tool holds the profiler's coverage): nothing is recorded, the map is not used for these files.
    g[KEY] = null
    return undefined
  }
}

/** How many modules the worker's module runner holds evaluated (vitest 4: `evaluatedModules`, 3: `moduleCache`); undefined: unknown. */
function evaluatedCount() {
  // @ts-expect-error vitest's worker state, see below
  const state = globalThis.__vitest_worker__
  const modules = state?.evaluatedModules?.idToModuleMap ?? state?.moduleCache
  if (!modules || typeof modules.values !== 'function') return undefined
  let n = 0
  for (const m of modules.values()) if (m?.evaluated) n++
  return n
}

/** @param {string} url */
function workspacePath(url) {
  let path = url
  if (path.startsWith('file://')) {
    try {
      path = fileURLToPath(path)
    } catch {
      return undefined
    }
  }
  path = path.replace(/[?#].*$/, '')
  if (!path.startsWith('/')) return undefined
  path = resolve(path)
  return path.startsWith(root + sep) && !path.includes(`${sep}node_modules${sep}`) ? path : undefined
}

/**
 * What this worker evaluated: the scripts it compiled so far (a new script id is a module evaluated), and
 * the intervals in which workspace modules were evaluated — which ones, and what ran then — of which the
 * first `written` are in its file (JSON Lines, one interval a line).
 * @typedef {{ evaluated: string[], ran: Record<string, string[]> }} Interval
 * @typedef {{ seen: Set<string>, paths: Map<string, string | null>, intervals: Interval[], written: number, file: string, ms: number }} WorkerState
 */

/**
 * Take the counters (reset by V8): the functions of workspace modules that ran since the last take.
 * Every workspace module but `own` (the running test file) evaluated in the interval is noted with them.
 * @param {Profiler} p @param {WorkerState} state @param {string} own
 */
function take(p, state, own) {
  const started = performance.now()
  /** @type {{ result: { scriptId: string, url: string, functions: { functionName: string, ranges: { count: number }[] }[] }[] }} */
  const coverage = p.post('Profiler.takePreciseCoverage')
  /** @type {Record<string, Set<string>>} */
  const ran = {}
  /** @type {string[]} */
  const evaluated = []
  for (const script of coverage.result) {
    const fresh = !state.seen.has(script.scriptId)
    if (fresh) state.seen.add(script.scriptId)
    // Each take lists every script that ran (jsdom's hundreds under a browser-like environment): their paths are worked out once.
    let path = state.paths.get(script.url)
    if (path === undefined) state.paths.set(script.url, path = workspacePath(script.url) ?? null)
    if (!path) continue
    if (fresh && path !== own) evaluated.push(path)
    for (const f of script.functions) if ((f.ranges[0]?.count ?? 0) > 0) (ran[path] ??= new Set()).add(f.functionName)
  }
  // What ran in the interval in which modules were evaluated (the test file's own code aside).
  if (evaluated.length) state.intervals.push({ evaluated,
    ran: Object.fromEntries(Object.entries(ran).filter(([path]) => path !== own).map(([path, set]) => [path, [...set]])) })
  state.ms += performance.now() - started
  return { ran, evaluated }
}

/** @param {Record<string, Set<string>>} into @param {Record<string, Set<string>>} from */
function merge(into, from) {
  for (const [path, names] of Object.entries(from)) {
    const set = (into[path] ??= new Set())
    for (const name of names) set.add(name)
  }
}

/**
 * Write a test file's record: what ran in its intervals, the modules it evaluated itself (their initialisers
 * are in what it ran) and where the worker keeps the intervals in which modules were evaluated (none: the file
 * ran alone in a fresh worker, so it evaluated everything it used itself).
 * @param {WorkerState} state @param {string} test @param {{ ran: Record<string, Set<string>>, evaluated: string[] }[]} parts @param {boolean} alone
 */
function write(state, test, parts, alone) {
  /** @type {Record<string, Set<string>>} */
  const all = {}
  for (const part of parts) merge(all, part.ran)
  const ran = Object.fromEntries(Object.entries(all).map(([path, names]) => [path, [...names]]))
  const evaluated = [...new Set(parts.flatMap(part => part.evaluated))]
  try {
    if (!alone) {
      // The runner removes the file after reading it (a worker may live on into its next run): then written again whole.
      if (!existsSync(state.file)) state.written = 0
      const lines = state.intervals.slice(state.written).map(i => `${JSON.stringify(i)}\n`).join('')
      if (lines) appendFileSync(state.file, lines)
      state.written = state.intervals.length
    }
    writeFileSync(resolve(/** @type {string} */ (dir), `${createHash('sha1').update(`${project}\0${test}`).digest('hex')}.calls.json`),
      JSON.stringify({ ran, evaluated, worker: alone ? null : state.file, ms: Math.round(state.ms), hooks: config.sequence?.hooks ?? 'stack',
      setup: config.setupFiles ?? [] }))
  } catch {
    // The runner removed its directory (it is closing): nothing to record into.
  }
}

// @ts-expect-error vitest's worker state and index, present in every version the warm runner supports
const test = globalThis.__vitest_worker__?.filepath
// @ts-expect-error see above: the project this run of the file belongs to (a file two projects include runs in each)
const project = String(globalThis.__vitest_worker__?.config?.name ?? '')
// @ts-expect-error see above
const afterAll = globalThis.__vitest_index__?.afterAll
// @ts-expect-error see above
const beforeAll = globalThis.__vitest_index__?.beforeAll
// @ts-expect-error see above: whether this worker runs several test files in one module graph
const config = globalThis.__vitest_worker__?.config ?? {}
const shared = config.isolate === false || config.poolOptions?.[config.pool]?.isolate === false
const g = /** @type {any} */ (globalThis)
// A fresh worker that runs this file alone (isolation): binary coverage, taken once at the end (cheaper: ~20 % of a run's
// CPU on hono with counters and three takes). Otherwise counters, taken after the file's collection and at its end.
const alone = !shared && g[KEY] === undefined
// Workers whose test files' executions can be told apart (the warm runner adds this file only to those; the CLI's config
// adds it everywhere): `forks`/`threads`, no coverage of their own (V8 keeps one coverage per worker).
const recordable = (config.pool ?? 'forks') === 'forks' || config.pool === 'threads' ? !config.coverage?.enabled : false
const p = recordable && dir && root && typeof test === 'string' && typeof afterAll === 'function' && typeof beforeAll === 'function' ? profiler(!alone) : undefined
if (p) {
  /** @type {WorkerState} */
  const state = (g[STATE] ??= { seen: new Set(), paths: new Map(), intervals: [], written: 0, ms: 0,
    file: resolve(/** @type {string} */ (dir), `${process.pid}-${threadId}.inits.jsonl`) })
  state.ms = 0
  if (alone) afterAll(() => write(state, test, [take(p, state, test)], true))
  else {
    // Not reset here: the last take was the previous file's last (or the counters just started). What ran in between
    // (the runner, a timer an earlier file left) counts as this file's: more than it ran, never less.
    /** @type {{ ran: Record<string, Set<string>>, evaluated: string[] }} */
    let collected = { ran: {}, evaluated: [] }
    const before = evaluatedCount()
    // Registered first: the first of the file's `beforeAll` hooks. What ran until then is the file's collection (its imports),
    // taken apart only when it evaluated a module besides the test file and the setup files (taking costs ~10 ms in a worker
    // that has loaded a project; two intervals taken as one are kept as one: more for the modules evaluated in them, never less).
    beforeAll(() => {
      const after = evaluatedCount()
      if (before === undefined || after === undefined || after - before > 1 + (config.setupFiles?.length ?? 0)) collected = take(p, state, test)
    })
    afterAll(() => write(state, test, [collected, take(p, state, test)], false))
  }
}
