// @ts-check
/**
 * The warm test runner's second setup file in the vitest projects whose
 * test files each run alone (isolated workers, `sequence.hooks: 'stack'`,
 * no coverage of their own): records which functions of the workspace each
 * test file executed, for the map that selects the test files a body-only
 * edit can reach (ADR 0021). Plain JavaScript with Node built-ins only.
 *
 * V8's precise coverage in function granularity (`callCount`, not
 * `detailed`: an invocation counter per function, no block counters) is
 * started once per worker through `node:inspector` (its `post` answers
 * synchronously in the same thread). Before each test file the counters
 * are reset; the file's last `afterAll` (registered here first, so it runs
 * last under the `stack` order) takes them and writes, per workspace module
 * the file loaded, the names V8 gives the functions that ran (`""` is the
 * module's own code, which always ran once it loaded) to
 * `<DSH_VITEST_READS>/<sha1 of the project name, NUL, the test file>.calls.json`
 * (a test file two projects include runs once in each, maybe down other paths).
 */
import { Session } from 'node:inspector'
import { writeFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

const dir = process.env.DSH_VITEST_READS
const root = process.env.DSH_VITEST_READS_ROOT
const KEY = Symbol.for('dsh.vitest.calls')

/** @typedef {{ post: (method: string, params?: object) => any }} Profiler */

/** @returns {Profiler | undefined} */
function profiler() {
  const g = /** @type {any} */ (globalThis)
  if (g[KEY] !== undefined) return g[KEY] || undefined
  try {
    const session = new Session()
    session.connect()
    /** @type {Profiler} */
    const p = {
      post(method, params) {
        let answer
        let failure
        session.post(method, params, (error, value) => { failure = error; answer = value })
        if (failure) throw failure
        return answer
      },
    }
    p.post('Profiler.enable')
    p.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false })
    g[KEY] = p
    return p
  } catch {
    // No inspector in this worker (another tool holds the profiler's coverage): nothing is recorded, the map is not used for these files.
    g[KEY] = null
    return undefined
  }
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

/** @param {Profiler} p @param {string} test */
function write(p, test) {
  /** @type {{ result: { url: string, functions: { functionName: string, ranges: { count: number }[] }[] }[] }} */
  const coverage = p.post('Profiler.takePreciseCoverage')
  /** @type {Record<string, string[]>} */
  const ran = {}
  for (const script of coverage.result) {
    const path = workspacePath(script.url)
    if (!path) continue
    const names = new Set(ran[path] ?? [])
    for (const f of script.functions) if ((f.ranges[0]?.count ?? 0) > 0) names.add(f.functionName)
    if (names.size) ran[path] = [...names]
  }
  try {
    writeFileSync(resolve(/** @type {string} */ (dir), `${createHash('sha1').update(`${project}\0${test}`).digest('hex')}.calls.json`), JSON.stringify(ran))
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
const p = dir && root && typeof test === 'string' && typeof afterAll === 'function' ? profiler() : undefined
if (p) {
  // What ran before this file (an earlier file in this worker, the worker's start) is not this file's.
  p.post('Profiler.takePreciseCoverage')
  afterAll(() => write(p, test))
}
