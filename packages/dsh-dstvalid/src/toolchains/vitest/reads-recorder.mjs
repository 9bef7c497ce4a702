// @ts-check
/**
 * The warm test runner's first setup file in every vitest project: records
 * the file-system reads each test file makes while it runs (a fixture it
 * reads, a directory it lists, a path it checks for), so a write that
 * creates, deletes or changes such a file runs that test even though no
 * import reaches it. Plain JavaScript with Node built-ins only: it runs in
 * the workspace's vitest workers, whatever their version.
 *
 * What it sees: calls of `node:fs`, `node:fs/promises` (and the `fs.promises`
 * object) that name a path — read, list, stat, exists, access, open, read
 * streams — made by the test file, its imports and setup files, from any
 * pool that shares these module objects (threads, forks). Not seen: child
 * processes the test starts, native addons, `vmThreads`/`vmForks` pools,
 * paths outside the workspace or under `node_modules`.
 *
 * Records are appended, one JSON array `[testFile, kind, path, by]` a line,
 * to `<DSH_VITEST_READS>/<sha1 of the test file>.jsonl`; kind is `read`
 * (the path itself), `list` (a directory's entries) or `tree` (a recursive
 * listing); `by` is `runner` when the call came from vitest's own module
 * loading (vite-node, vite, vitest resolving an import: the module is then
 * loaded, not read as a file), else `code`.
 */
import { appendFileSync } from 'node:fs'
import * as fs from 'node:fs'
import { createHash } from 'node:crypto'
import { syncBuiltinESMExports } from 'node:module'
import { resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

const dir = process.env.DSH_VITEST_READS
const root = process.env.DSH_VITEST_READS_ROOT
const INSTALLED = Symbol.for('dsh.vitest.reads')

/** @type {Record<string, 'read' | 'list'>} */
const SYNC = {
  readFileSync: 'read', existsSync: 'read', statSync: 'read', lstatSync: 'read', accessSync: 'read', openSync: 'read',
  readdirSync: 'list', opendirSync: 'list',
}
/** @type {Record<string, 'read' | 'list'>} */
const CALLBACK = {
  readFile: 'read', exists: 'read', stat: 'read', lstat: 'read', access: 'read', open: 'read', createReadStream: 'read',
  readdir: 'list', opendir: 'list',
}
/** @type {Record<string, 'read' | 'list'>} */
const PROMISES = { readFile: 'read', stat: 'read', lstat: 'read', access: 'read', open: 'read', readdir: 'list', opendir: 'list' }

/** The test file running now in this worker (vitest sets it before each file). */
function currentTestFile() {
  // @ts-expect-error vitest's worker state, present in every version this suite supports
  const state = globalThis.__vitest_worker__
  return typeof state?.filepath === 'string' ? state.filepath : undefined
}

/** @param {unknown} path */
function absolute(path) {
  if (typeof path === 'string') return resolve(path)
  if (path instanceof URL) return path.protocol === 'file:' ? resolve(fileURLToPath(path)) : undefined
  if (Buffer.isBuffer(path)) return resolve(path.toString())
  return undefined
}

/** @type {Set<string>} */
const seen = new Set()

/** The test runner's own packages: their file-system calls resolve and load modules. */
const RUNNER = /[\\/]node_modules[\\/](?:\.pnpm[\\/][^\\/]+[\\/]node_modules[\\/])?(?:vite-node|vitest|vite|@vitest[\\/][\w.-]+)[\\/]/

/** Who made the file-system call being recorded: the runner loading a module, or code (the test, its imports, a library it calls). */
function caller() {
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = 4
  const stack = new Error().stack ?? ''
  Error.stackTraceLimit = limit
  // Frames: this function, note, the wrapper, the caller.
  const frame = stack.split('\n')[4] ?? ''
  return RUNNER.test(frame) ? 'runner' : 'code'
}

/** @param {'read' | 'list' | 'tree'} kind @param {unknown} path */
function note(kind, path) {
  if (!dir || !root) return
  const test = currentTestFile()
  const abs = absolute(path)
  if (!test || !abs || !(abs === root || abs.startsWith(root + sep)) || abs.includes(`${sep}node_modules${sep}`)) return
  const by = caller()
  const key = `${test}\u0000${kind}\u0000${abs}\u0000${by}`
  if (seen.has(key)) return
  seen.add(key)
  try {
    appendFileSync(resolve(dir, `${createHash('sha1').update(test).digest('hex')}.jsonl`), `${JSON.stringify([test, kind, abs, by])}\n`)
  } catch {
    // The runner removed its directory (it is closing): nothing to record into.
  }
}

/**
 * @param {Record<string, any>} target
 * @param {Record<string, 'read' | 'list'>} names
 */
function wrap(target, names) {
  for (const [name, kind] of Object.entries(names)) {
    const original = target[name]
    if (typeof original !== 'function') continue
    /** @param {unknown[]} args */
    const wrapped = function (/** @type {unknown} */ path, /** @type {unknown[]} */ ...args) {
      const options = args[0]
      const recursive = kind === 'list' && typeof options === 'object' && options !== null && /** @type {{ recursive?: boolean }} */ (options).recursive
      note(recursive ? 'tree' : kind, path)
      // @ts-expect-error forwarding `this` and every argument unchanged
      return original.call(this, path, ...args)
    }
    Object.defineProperties(wrapped, Object.getOwnPropertyDescriptors(original))
    target[name] = wrapped
  }
}

if (dir && root && !(/** @type {any} */ (globalThis)[INSTALLED])) {
  /** @type {any} */ (globalThis)[INSTALLED] = true
  wrap(/** @type {any} */ (fs).default ?? fs, SYNC)
  wrap(/** @type {any} */ (fs).default ?? fs, CALLBACK)
  wrap(/** @type {any} */ ((fs).default ?? fs).promises, PROMISES)
  // Named imports (`import { readFileSync } from 'node:fs'`, `node:fs/promises`) see the wrappers too.
  syncBuiltinESMExports()
}
