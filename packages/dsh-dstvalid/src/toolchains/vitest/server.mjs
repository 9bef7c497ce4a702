// @ts-check
/**
 * The warm test runner's child process: the workspace's own vitest, created
 * once through its Node API (`vitest/node` `createVitest`), kept alive with
 * its module graph, answering runs over IPC. Plain JavaScript on purpose: it
 * runs under plain Node with no loader of ours, so the workspace's vitest
 * sees the process it would see from its own CLI.
 *
 *   node server.mjs <root> <vitest/node entry> <extra CLI arguments JSON> [<options JSON: { calls?: boolean }>]
 *
 * Messages in: { id, kind: 'run', changed: string[] | null, mode: 'related' | 'all' | 'files', files?: string[], pattern?: string, projects?: string[], list?: boolean, accepted?: Record<string, string | null> }
 *              (`list`: find the test files only, run nothing; `accepted`: absolute path → base64
 *              content (null: absent) served to the module graph in place of the disk's during this run)
 *              { kind: 'cancel' } (the run in progress is past its time limit: cancelled, what finished is answered)
 *              { kind: 'close' }
 * Messages out: { ready: true, version } | { unsupported: string }
 *               { id, ok: true, report, phases, calls?, readers?, typeOnly?, typechecked?, cancelled? } | { id, ok: false, error }
 *              (`calls`: test file → workspace module → names of the functions it executed, from the
 *              calls recorder; only for runs of whole test files on the disk's content)
 * The report is the one this package's CLI reporter writes (`dshReport`), so
 * the parent judges warm and CLI runs with one judge.
 */
import { createHash } from 'node:crypto'
import fs, { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { syncBuiltinESMExports } from 'node:module'
import { availableParallelism, tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { dshReport } from './reporter.mjs'
import { loadReads, readersOf, readsSee, usesFs } from './reads.mjs'

const [root, entry, optionsJson, runnerJson] = process.argv.slice(2)
/** `calls: false`: no calls recorder (the map of executed functions is not kept). */
const runnerOptions = /** @type {{ calls?: boolean }} */ (JSON.parse(runnerJson || '{}'))
/** @type {string[]} The check's extra vitest arguments (`testArgs`), read by vitest's own CLI parser. */
const extraArgs = JSON.parse(optionsJson || '[]')

/** The setup file that records each test file's file-system reads (see reads-recorder.mjs), and where it writes them. */
const RECORDER = fileURLToPath(new URL('./reads-recorder.mjs', import.meta.url))
/** The setup file that records the functions each test file executed (see calls-recorder.mjs), in the projects where that is sound. */
const CALLS = fileURLToPath(new URL('./calls-recorder.mjs', import.meta.url))
const RECORDERS_DIR = dirname(RECORDER)
const readsDir = mkdtempSync(join(tmpdir(), 'dsh-vitest-reads-'))
// The workers inherit this process's environment.
process.env.DSH_VITEST_READS = readsDir
process.env.DSH_VITEST_READS_ROOT = root

/** @param {unknown} message */
function send(message) {
  if (process.connected) process.send?.(message)
}

/** @param {unknown} error */
function text(error) {
  return error instanceof Error ? (error.stack || error.message) : String(error)
}

// The parent is gone (crashed or killed without a goodbye): nothing may outlive it.
process.on('disconnect', () => void shutdown(0))

/** @type {any} */
let vitest
let closing = false
async function shutdown(/** @type {number} */ code) {
  if (closing) return
  closing = true
  const timer = setTimeout(() => process.exit(code), 3000)
  timer.unref()
  try {
    await vitest?.close()
  } catch {
    // Closing a half-started vitest may throw; we exit anyway.
  }
  rmSync(readsDir, { recursive: true, force: true })
  process.exit(code)
}

/**
 * The accepted content of a write's paths, served in place of what is on
 * disk while an accepted-state run transforms its modules (vite reads a
 * module's source with fs.promises.readFile): nothing is written, so no
 * other process ever sees the accepted content as the tree's state.
 * @type {Map<string, Buffer | null> | undefined}
 */
let served
/** @param {unknown} path */
function servedContent(path) {
  if (!served) return undefined
  const p = typeof path === 'string' ? path : path instanceof URL ? fileURLToPath(path) : undefined
  return p === undefined ? undefined : served.get(resolve(p))
}
/** @param {Buffer | null} content @param {unknown} options @param {unknown} path */
function serve(content, options, path) {
  if (content === null) throw Object.assign(new Error(`ENOENT: no such file or directory, open '${path}'`),
    { code: 'ENOENT', errno: -2, syscall: 'open', path })
  const encoding = typeof options === 'string' ? options : /** @type {{ encoding?: BufferEncoding } | undefined} */ (options)?.encoding
  return encoding ? content.toString(encoding) : Buffer.from(content)
}
const readFileAsync = fs.promises.readFile
const readFileFromDisk = fs.readFileSync
fs.promises.readFile = /** @type {any} */ (function (/** @type {any} */ path, /** @type {any} */ options) {
  const content = servedContent(path)
  if (content === undefined) return readFileAsync.apply(this, /** @type {any} */ (arguments))
  return new Promise(done => done(serve(content, options, path)))
})
fs.readFileSync = /** @type {any} */ (function (/** @type {any} */ path, /** @type {any} */ options) {
  const content = servedContent(path)
  return content === undefined ? readFileFromDisk.apply(this, /** @type {any} */ (arguments)) : serve(content, options, path)
})
// ES-module named imports of node:fs see the wrappers too.
syncBuiltinESMExports()

/** Forget what the module graph holds of `paths` (their next transform reads them again). */
function forget(/** @type {string[]} */ paths) {
  for (const file of paths) {
    vitest.invalidateFile(file)
    stamps.delete(file)
  }
}

const REQUIRED = ['globTestSpecifications', 'runTestSpecifications', 'invalidateFile', 'setGlobalTestNamePattern', 'resetGlobalTestNamePattern']

try {
  const mod = await import(pathToFileURL(entry).href)
  if (typeof mod.createVitest !== 'function') {
    send({ unsupported: 'vitest/node has no createVitest' })
    process.exit(0)
  }
  /** @type {Record<string, any>} */
  let cliOptions = {}
  if (extraArgs.length) {
    if (typeof mod.parseCLI !== 'function') {
      send({ unsupported: 'vitest/node has no parseCLI for the extra arguments' })
      process.exit(0)
    }
    cliOptions = mod.parseCLI(['vitest', ...extraArgs]).options
  }
  vitest = await mod.createVitest('test', {
    ...cliOptions,
    // The workspace's own coverage (\`coverage.enabled\` in its config) is never read from a warm run: its
    // workers would collect block coverage for nothing, and V8 keeps one coverage per worker (the calls
    // recorder's). Asked for in \`testArgs\` (\`--coverage\`), it stays.
    ...(cliOptions.coverage?.enabled ? {} : { coverage: { ...cliOptions.coverage, enabled: false } }),
    root,
    watch: false,
    cache: false,
    passWithNoTests: true,
    includeTaskLocation: true,
    // Results are read from the task state; nothing is printed.
    reporters: [{}],
  })
  const missing = REQUIRED.filter(name => typeof vitest[name] !== 'function')
  if (missing.length || !Array.isArray(vitest.projects) || !vitest.projects.every(canWalk)) {
    send({ unsupported: `vitest ${vitest.version ?? '?'} lacks ${missing.join(', ') || (Array.isArray(vitest.projects) ? 'a readable transform pipeline' : 'projects')}` })
    await shutdown(0)
  }
  // First setup file of every project: the reads recorder (the resolved config is serialized to the workers on each run).
  // Second: the calls recorder, where a test file's executed functions are its own (see recordsCalls).
  for (const project of vitest.projects) {
    const setup = project.config.setupFiles
    if (Array.isArray(setup) && !setup.includes(RECORDER)) project.config.setupFiles = [RECORDER, ...(recordsCalls(project) ? [CALLS] : []), ...setup]
    allowRecorders(project)
  }
  useEveryCore(vitest.config)
  await vitest.globTestSpecifications()
  send({ ready: true, version: vitest.version })
} catch (error) {
  send({ startError: text(error) })
  await shutdown(1)
}

/**
 * The recorders live outside the workspace, and a project whose tests run
 * in a browser-like environment (`jsdom`, `happy-dom`) loads its setup files
 * the way a browser would: vite serves only files under `server.fs.allow`
 * (the workspace's root by default), so every test file failed to load the
 * recorders, before a write and after it alike, and breaking writes were
 * kept. Their directory is allowed in each project's server.
 */
function allowRecorders(/** @type {any} */ project) {
  for (const server of new Set([project.vite, project.browser?.vite].filter(Boolean))) {
    const allow = server.config?.server?.fs?.allow
    try {
      if (Array.isArray(allow) && !allow.includes(RECORDERS_DIR)) allow.push(RECORDERS_DIR)
    } catch {
      // A vite that froze its resolved config: a test file that cannot load the recorders is then not judged (check.ts says so).
    }
  }
}

/**
 * Test files run on every core unless the workspace says how many may run
 * at once. vitest's own default leaves one core to its main
 * process (one worker on a 2-core machine: hono's 13 forks one after
 * another); in the warm runner that process only serves transforms it has
 * cached, and the run is what the agent waits for. A workspace that sets
 * `maxWorkers` (or vitest 3's `poolOptions.<pool>.maxForks`/`maxThreads`),
 * `VITEST_MAX_WORKERS`, or `fileParallelism: false` (resolved to one worker)
 * keeps its number; so does a project that sets its own.
 */
function useEveryCore(/** @type {any} */ config) {
  if (config.maxWorkers != null) return
  const pool = config.poolOptions?.[config.pool ?? 'forks']
  if (pool?.maxForks != null || pool?.maxThreads != null || pool?.singleFork || pool?.singleThread) return
  config.maxWorkers = availableParallelism()
}

/**
 * Whether the calls recorder can tell what each test file of a project
 * executed: in `forks` or `threads` workers (isolated or not: under
 * `isolate: false` a module evaluated by an earlier file of the worker is
 * carried by the recorder into every later file's record with what ran
 * while it was evaluated), with the hooks in the `stack` order (the
 * recorder's `afterAll` runs last), in Node (not a browser) and without
 * coverage of its own (V8 keeps one coverage per worker).
 */
function recordsCalls(/** @type {any} */ project) {
  const c = project.config
  const pool = c.pool ?? 'forks'
  if (runnerOptions.calls === false) return false
  if (c.browser?.enabled || c.coverage?.enabled || vitest.config?.coverage?.enabled) return false
  if (pool !== 'forks' && pool !== 'threads') return false
  return (c.sequence?.hooks ?? 'stack') === 'stack'
}

/** Where the calls recorder writes the record of a test file's run in one project. */
function callsFile(/** @type {string} */ project, /** @type {string} */ test) {
  return join(readsDir, `${createHash('sha1').update(`${project}\0${test}`).digest('hex')}.calls.json`)
}

/**
 * The calls records of the test files that just ran (each read once, then
 * removed): test file → module → function names, the union over every
 * project that ran the file (a file two projects include may take other
 * paths in each). A run's record is what ran while the file ran, plus the
 * initialisers of the modules of its import closure (and of its project's
 * setup files) that an earlier file of the same worker evaluated (what ran
 * while they were evaluated, kept by the worker: see calls-recorder.mjs).
 * A file is absent when one of its runs left no record (it failed before
 * its hooks, its project does not record) or the initialisers its record
 * points to cannot be read: what that run executed is unknown, so the file
 * gets no entry.
 */
async function takeCalls(/** @type {any[]} */ specs, /** @type {Record<string, number>} */ phases) {
  /**
   * Per test file: what its runs executed themselves, and the initialisers carried into them (shared between the
   * files of a worker that carry the same intervals: the whole library's, through valibot's barrels, in every file).
   * @type {Map<string, { own: Record<string, Set<string>>, carried: Map<string, string[]>[] } | null>}
   */
  const byFile = new Map()
  /** Per worker file: module → the intervals in which it was evaluated (null: unreadable). */
  /** @type {Map<string, Map<string, Interval[]> | null>} */
  const workers = new Map()
  /** @typedef {{ id: number, ran: Record<string, string[]> }} Interval */
  const inits = (/** @type {string} */ file) => {
    if (!workers.has(file)) {
      try {
        /** @type {Map<string, Interval[]>} */
        const byModule = new Map()
        let id = 0
        for (const line of readFileSync(file, 'utf8').split('\n')) {
          if (!line) continue
          const parsed = /** @type {{ evaluated: string[], ran: Record<string, string[]> }} */ (JSON.parse(line))
          const interval = { id: id++, ran: parsed.ran }
          for (const module of parsed.evaluated) {
            const list = byModule.get(module)
            if (list) list.push(interval)
            else byModule.set(module, [interval])
          }
        }
        workers.set(file, byModule)
      } catch {
        workers.set(file, null)
      }
    }
    return workers.get(file)
  }
  /** What a set of intervals of one worker ran, merged once for every file that carries that set. */
  /** @type {Map<string, Map<string, string[]>>} */
  const unions = new Map()
  const unionOf = (/** @type {string} */ worker, /** @type {Interval[]} */ intervals) => {
    const key = `${worker}\0${intervals.map(i => i.id).sort((a, b) => a - b).join(',')}`
    let union = unions.get(key)
    if (!union) {
      /** @type {Map<string, Set<string>>} */
      const sets = new Map()
      for (const { ran } of intervals) for (const [path, names] of Object.entries(ran)) {
        let set = sets.get(path)
        if (!set) sets.set(path, set = new Set())
        for (const name of names) set.add(name)
      }
      unions.set(key, union = new Map([...sets].map(([path, set]) => [path, [...set]])))
    }
    return union
  }
  const depsOf = dependencies()
  for (const spec of specs) {
    const file = spec.moduleId
    const path = callsFile(spec.project.name ?? '', file)
    /** @type {{ ran: Record<string, string[]>, evaluated: string[], worker: string | null, ms?: number }} */
    let record
    try {
      // A file whose run ended after the run was cancelled may have had tests skipped by the cancel: not a record of the file.
      if (cancelledAt !== undefined && statSync(path).mtimeMs >= cancelledAt) throw new Error('cancelled')
      record = JSON.parse(readFileSync(path, 'utf8'))
      rmSync(path, { force: true })
    } catch {
      // No record of this run: the file gets none.
      byFile.set(file, null)
      continue
    }
    phases.recorderMs = (phases.recorderMs ?? 0) + (record.ms ?? 0)
    if (byFile.get(file) === null) continue
    const entry = byFile.get(file) ?? { own: {}, carried: [] }
    for (const [module, names] of Object.entries(record.ran ?? {})) {
      const set = (entry.own[module] ??= new Set())
      for (const name of names) set.add(name)
    }
    // No worker file: the file ran alone in a fresh worker and evaluated everything it used itself.
    if (record.worker === null) {
      byFile.set(file, entry)
      continue
    }
    const worker = typeof record.worker === 'string' ? inits(record.worker) : null
    if (!worker) {
      byFile.set(file, null)
      continue
    }
    const own = new Set(record.evaluated ?? [])
    const setup = (spec.project.config.setupFiles ?? []).filter((/** @type {unknown} */ f) => typeof f === 'string' && f !== RECORDER && f !== CALLS)
    const closure = new Set()
    for (const start of [file, ...setup]) for (const module of await closureOf(depsOf, spec.project, start)) closure.add(module)
    /** @type {Set<Interval>} */
    const intervals = new Set()
    for (const module of closure) if (!own.has(module)) for (const interval of worker.get(module) ?? []) intervals.add(interval)
    if (intervals.size) entry.carried.push(unionOf(/** @type {string} */ (record.worker), [...intervals]))
    byFile.set(file, entry)
  }
  for (const file of workers.keys()) rmSync(file, { force: true })
  /** @type {Record<string, Record<string, string[]>>} */
  const out = {}
  for (const [file, entry] of byFile) {
    if (!entry) continue
    /** @type {Record<string, string[]>} */
    const modules = {}
    // A module only one part names keeps that part's list (shared with the other files that carry it): a copy only where parts meet.
    for (const union of entry.carried) for (const [module, names] of union) {
      modules[module] = modules[module] ? [...new Set([...modules[module], ...names])] : names
    }
    for (const [module, set] of Object.entries(entry.own)) modules[module] = modules[module] ? [...new Set([...modules[module], ...set])] : [...set]
    out[file] = modules
  }
  return out
}

/** mtime+size of every file the dependency walks read: an out-of-band change (a shell command, a rollback) is found by stat. */
const stamps = new Map()
function stampOf(/** @type {string} */ file) {
  try {
    const s = statSync(file)
    return `${s.mtimeMs}:${s.size}`
  } catch {
    return 'absent'
  }
}

/** Invalidate what changed on disk since it was read, plus `changed`; keep vitest's list of test files current. */
function invalidate(/** @type {string[]} */ changed) {
  const dirty = new Set(changed)
  for (const [file, stamp] of stamps) if (stampOf(file) !== stamp) dirty.add(file)
  for (const file of dirty) {
    vitest.invalidateFile(file)
    // The next transform reads the file as it is now.
    stamps.set(file, stampOf(file))
    const exists = existsSync(file)
    for (const project of vitest.projects) {
      if (!exists) project._removeCachedTestFile?.(file)
      else project.matchesTestGlob?.(file)
    }
    vitest.clearSpecificationsCache?.(file)
  }
}

/** Stamp every file vite has read that has no stamp yet (a test run reads more than the related-files walk). */
function stampGraph() {
  for (const project of vitest.projects) {
    const graph = project.vitenode ? project.vite.moduleGraph : project.vite.environments?.ssr?.moduleGraph
    for (const file of graph?.fileToModulesMap?.keys() ?? []) {
      if (!stamps.has(file) && !file.includes('/node_modules/')) stamps.set(file, stampOf(file))
    }
  }
}

/**
 * A module's transform as this vitest version keeps it: vitest 3 through
 * vite-node (`ssrTransformResult`), vitest 4 through vite's `ssr` environment.
 */
async function transformOf(/** @type {any} */ project, /** @type {string} */ file) {
  if (project.vitenode) return project.vite.moduleGraph.getModuleById(file)?.ssrTransformResult || await project.vitenode.transformRequest(file)
  const env = project.vite.environments.ssr
  return env.moduleGraph.getModuleById(file)?.transformResult || await env.transformRequest(file)
}

/** Whether every project exposes a transform pipeline the related-files walk can read. */
function canWalk(/** @type {any} */ project) {
  return !!project.vitenode?.transformRequest || typeof project.vite?.environments?.ssr?.transformRequest === 'function'
}

/**
 * File-system reads of each test file, from its runs in this runner (the
 * reads recorder; see reads.mjs).
 * @type {Map<string, import('./reads.mjs').TestReads>}
 */
const reads = new Map()

/**
 * The workspace modules a module imports (statically or dynamically), from the transforms vite keeps
 * (a module not transformed yet is transformed now); cached for the caller's walk.
 * @returns {(project: any, file: string) => Promise<string[]>}
 */
function dependencies() {
  /** @type {Map<any, Map<string, string[]>>} */
  const depsByProject = new Map()
  const depsOf = async (/** @type {any} */ project, /** @type {string} */ file) => {
    let cache = depsByProject.get(project)
    if (!cache) depsByProject.set(project, cache = new Map())
    const hit = cache.get(file)
    if (hit) return hit
    /** @type {string[]} */
    let deps = []
    try {
      const transformed = await transformOf(project, file)
      if (!stamps.has(file)) stamps.set(file, stampOf(file))
      for (const dep of [...(transformed?.deps ?? []), ...(transformed?.dynamicDeps ?? [])]) {
        const abs = dep.startsWith('/@fs/') ? dep.slice(4) : join(project.config.root, dep)
        if (!abs.includes('node_modules') && existsSync(abs)) deps.push(abs)
      }
    } catch {
      // Unparsable now: no edges out of it.
      if (!stamps.has(file)) stamps.set(file, stampOf(file))
      deps = []
    }
    cache.set(file, deps)
    return deps
  }
  return depsOf
}

/** `file` and every workspace module its imports reach. */
async function closureOf(/** @type {(project: any, file: string) => Promise<string[]>} */ depsOf, /** @type {any} */ project, /** @type {string} */ file) {
  const seen = new Set([file])
  const queue = [file]
  while (queue.length) for (const dep of await depsOf(project, /** @type {string} */ (queue.shift()))) if (!seen.has(dep)) { seen.add(dep); queue.push(dep) }
  return seen
}

/**
 * Test files whose import closure reaches one of `changed` (or that are one
 * of them), from the transformed modules vite keeps, plus the test files
 * whose recorded file-system reads see a changed path and — for a change
 * no import closure reaches (a new file, a fixture) — the test files that
 * use the file system and have not run in this runner yet (their reads are
 * unknown). A module that fails to transform (a syntax error) is a leaf: the
 * test that imports it still runs and reports the error.
 */
async function related(/** @type {any[]} */ specs, /** @type {string[]} */ changed) {
  const wanted = new Set(changed)
  /** Changed files some import closure reached. */
  const reached = new Set()
  const depsOf = dependencies()
  const out = []
  for (const spec of specs) {
    if (wanted.has(spec.moduleId)) {
      reached.add(spec.moduleId)
      out.push(spec)
      continue
    }
    const seen = new Set([spec.moduleId])
    const queue = [spec.moduleId]
    let hit = false
    while (queue.length && !hit) {
      for (const dep of await depsOf(spec.project, queue.shift())) {
        if (wanted.has(dep)) { hit = true; reached.add(dep); break }
        if (!seen.has(dep)) { seen.add(dep); queue.push(dep) }
      }
    }
    if (hit) out.push(spec)
  }
  if (!wanted.size) return out
  const unreached = changed.filter(file => !reached.has(file))
  const chosen = new Set(out)
  for (const spec of specs) {
    if (chosen.has(spec)) continue
    const entry = reads.get(spec.moduleId)
    const sees = entry ? changed.some(file => readsSee(entry, file)) : unreached.length > 0 && usesFs(spec.moduleId)
    if (sees) out.push(spec)
  }
  return out
}

/** @param {{ id: number, changed: string[] | null, mode: 'related' | 'all' | 'files', files?: string[], pattern?: string, projects?: string[], list?: boolean, accepted?: Record<string, string | null> }} request */
async function run(request, /** @type {Record<string, number>} */ phases,
  /** @type {{ calls?: Record<string, Record<string, string[]>>, readers?: string[], typeOnly?: Record<string, string[]>, typechecked?: string[] }} */ out) {
  if (!request.accepted) return runSpecs(request, phases, out)
  const paths = Object.keys(request.accepted)
  served = new Map(paths.map(p => [p, request.accepted?.[p] == null ? null : Buffer.from(/** @type {string} */ (request.accepted[p]), 'base64')]))
  forget(paths)
  try {
    // What ran on served content is not the disk's: no calls are reported.
    return await runSpecs(request, phases, {})
  } finally {
    served = undefined
    forget(paths)
  }
}

/**
 * The test files of `specs` that every project listing them runs in the typecheck mode (pool
 * `typescript`: `tsc` reports on them, nothing executes them), with the tsconfigs those projects'
 * `tsc` reads; a file one of whose projects' tsconfig is not known is left out.
 * @param {any[]} specs
 */
function typeOnly(specs) {
  /** @type {Map<string, Set<string> | null>} */
  const files = new Map()
  for (const spec of specs) {
    const config = spec.pool === 'typescript' ? typecheckConfig(spec.project) : null
    const had = files.get(spec.moduleId)
    files.set(spec.moduleId, config === null || had === null ? null : new Set([...had ?? [], config]))
  }
  /** @type {Record<string, string[]>} */
  const out = {}
  for (const [file, configs] of files) if (configs) out[file] = [...configs]
  return out
}

/**
 * The tsconfig (absolute) whose program a vitest project's typecheck mode has `tsc` check, as
 * vitest starts it: `typecheck.tsconfig` from the project's root, else the `tsconfig.json` tsc
 * finds from there up. Null when the mode is off, when its type-check is not that program as
 * `tsc` sees it (`typecheck.allowJs` adds options; another checker than tsc or vue-tsc), or
 * when there is none.
 * @param {any} project
 * @returns {string | null}
 */
function typecheckConfig(project) {
  const config = project?.config
  const typecheck = config?.typecheck
  if (!typecheck?.enabled || typecheck.allowJs || typeof config.root !== 'string') return null
  if (!['tsc', 'vue-tsc', undefined].includes(typecheck.checker)) return null
  if (typecheck.tsconfig) return resolve(config.root, typecheck.tsconfig)
  for (let dir = resolve(config.root); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'tsconfig.json'))) return join(dir, 'tsconfig.json')
    if (dirname(dir) === dir) return null
  }
}

/** @param {{ id: number, changed: string[] | null, mode: 'related' | 'all' | 'files', files?: string[], pattern?: string, projects?: string[], list?: boolean }} request */
async function runSpecs(request, /** @type {Record<string, number>} */ phases,
  /** @type {{ calls?: Record<string, Record<string, string[]>>, readers?: string[], typeOnly?: Record<string, string[]>, typechecked?: string[] }} */ extra) {
  let t = performance.now()
  const lap = (/** @type {string} */ name) => {
    const now = performance.now()
    phases[name] = Math.round(now - t)
    t = now
  }
  invalidate(request.changed ?? [])
  lap('invalidateMs')
  const all = await vitest.globTestSpecifications()
  lap('globMs')
  let specs
  if (request.mode === 'all') specs = all
  else if (request.mode === 'files') {
    const files = new Set(request.files ?? [])
    specs = all.filter((/** @type {any} */ s) => files.has(s.moduleId))
  } else specs = await related(all, request.changed ?? [])
  if (request.projects) {
    const only = new Set(request.projects)
    specs = specs.filter((/** @type {any} */ s) => only.has(s.project.name))
  }
  lap('relatedMs')
  phases.files = specs.length
  /** Every test file of the run as never run. */
  const never = () => dshReport(vitest.projects, specs.map((/** @type {any} */ s) => ({ projectName: s.project.name, filepath: s.moduleId, tasks: [] })), [])
  // Only which test files a run would run: every one as never run; and which of them may read a changed path as a
  // file (their code's recorded reads see it — not the runner loading it as a module; not run in this runner yet,
  // they use the file system): what they do with its text no map of executed functions can tell.
  if (request.list) {
    const changed = request.changed ?? []
    extra.readers = readersOf(reads, specs.map((/** @type {any} */ s) => s.moduleId), changed)
    extra.typeOnly = typeOnly(specs)
    extra.typechecked = [...new Set(specs.filter((/** @type {any} */ s) => s.pool === 'typescript').map((/** @type {any} */ s) => s.moduleId))]
    return never()
  }
  if (!specs.length) return dshReport(vitest.projects, [], [])
  if (request.pattern) vitest.setGlobalTestNamePattern(new RegExp(request.pattern))
  const files = specs.map((/** @type {any} */ s) => s.moduleId)
  for (const spec of specs) rmSync(callsFile(spec.project.name ?? '', spec.moduleId), { force: true })
  // Cancelled while globbing or walking: run nothing (every file left for later). Vitest forgets a cancel that comes
  // before its run begins, so one that came then is sent again once the run is under way.
  if (cancelledAt !== undefined) return never()
  const again = setInterval(() => {
    if (cancelledAt !== undefined && vitest.isCancelling === false) void vitest.cancelCurrentRun('keyboard-input').catch(() => {})
  }, 50)
  try {
    const result = await vitest.runTestSpecifications(specs, request.mode === 'all').finally(() => clearInterval(again))
    lap('runMs')
    stampGraph()
    loadReads(readsDir, files, reads)
    // A run limited by a test-name pattern executed part of each file, a run on served content not the disk's: not a file's calls.
    if (request.pattern || served) for (const spec of specs) rmSync(callsFile(spec.project.name ?? '', spec.moduleId), { force: true })
    else extra.calls = await takeCalls(specs, phases)
    lap('recordMs')
    const key = (/** @type {string} */ project, /** @type {string} */ file) => `${project}\0${file}`
    const ran = new Set(specs.map((/** @type {any} */ s) => key(s.project.name, s.moduleId)))
    // The task state keeps earlier runs' modules: report only what this run ran.
    const modules = result.testModules.filter((/** @type {any} */ m) => ran.has(key(m.project.name, m.moduleId)))
    const reported = new Set(modules.map((/** @type {any} */ m) => key(m.project.name, m.moduleId)))
    // A file that never reached the task state (its project could not start) is reported as never run.
    const missing = specs.filter((/** @type {any} */ s) => !reported.has(key(s.project.name, s.moduleId)))
      .map((/** @type {any} */ s) => ({ projectName: s.project.name, filepath: s.moduleId, tasks: [] }))
    // Where a run's time went, summed over its test files (vitest's own per-module diagnostics).
    for (const m of modules) {
      const d = m.diagnostic?.()
      if (!d) continue
      phases.prepareMs = Math.round((phases.prepareMs ?? 0) + d.prepareDuration)
      phases.environmentMs = Math.round((phases.environmentMs ?? 0) + d.environmentSetupDuration)
      phases.collectMs = Math.round((phases.collectMs ?? 0) + d.collectDuration)
      phases.testsMs = Math.round((phases.testsMs ?? 0) + d.duration)
    }
    const out = dshReport(vitest.projects, [...modules.map((/** @type {any} */ m) => m.task), ...missing], result.unhandledErrors ?? [])
    lap('reportMs')
    return out
  } finally {
    if (request.pattern) vitest.resetGlobalTestNamePattern()
  }
}

/**
 * Warm-up, before the first run: walk every test file's import closure once
 * (vite transforms and caches each module), so the first judged write pays
 * for its related tests, not for transforming the project.
 */
async function prewalk() {
  try {
    await related(await vitest.globTestSpecifications(), [])
  } catch {
    // A module that cannot be transformed now is transformed (and reported) by the run that needs it.
  }
}

/** A run is in progress; when it was cancelled (ms since the epoch). */
let running = false
/** @type {number | undefined} */
let cancelledAt
/** Runs received and not begun (behind the pre-walk or another run); a cancel for one of them: it answers at once, having run nothing. */
let queued = 0
let cancelQueued = false

let chain = prewalk()
process.on('message', (/** @type {any} */ message) => {
  if (message?.kind === 'close') {
    void shutdown(0)
    return
  }
  // The run is past its time limit: stop it, keep what finished (the parent kills the process group if this does not end it).
  if (message?.kind === 'cancel') {
    if (running && cancelledAt === undefined && typeof vitest?.cancelCurrentRun === 'function') {
      cancelledAt = Date.now()
      void vitest.cancelCurrentRun('keyboard-input').catch(() => {})
    } else if (!running && queued) {
      cancelQueued = true
    }
    return
  }
  if (message?.kind !== 'run') return
  queued++
  chain = chain.then(async () => {
    queued--
    if (cancelQueued) {
      cancelQueued = false
      send({ id: message.id, ok: true, report: { projects: [], modules: [], errors: [] }, phases: {}, cancelled: true })
      return
    }
    running = true
    cancelledAt = undefined
    try {
      /** @type {Record<string, number>} */
      const phases = {}
      /** @type {{ calls?: Record<string, Record<string, string[]>>, readers?: string[], typeOnly?: Record<string, string[]>, typechecked?: string[] }} */
      const out = {}
      const r = await run(message, phases, out)
      send({ id: message.id, ok: true, report: r, phases, ...(out.calls ? { calls: out.calls } : {}), ...(out.readers ? { readers: out.readers } : {}), ...(out.typeOnly ? { typeOnly: out.typeOnly } : {}), ...(out.typechecked ? { typechecked: out.typechecked } : {}), ...(cancelledAt !== undefined ? { cancelled: true } : {}) })
    } catch (error) {
      send({ id: message.id, ok: false, error: text(error) })
    } finally {
      running = false
    }
  })
})
