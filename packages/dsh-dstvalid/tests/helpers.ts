import type { Context, Fiber } from '@deepseek-ai/cordis'
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, it, onTestFinished } from 'vitest'
import { changedPathsByKind, resolveInside, scanFileStates, toPosixRelative, type FileStates } from 'dsh-common'
import type { Session } from 'dsh-session'
import type { ToolResult } from 'dsh-tools'
import type { RunRecord } from '../src/types.ts'
import DstValidService, { type Config, type DstvalidNotice, type VerifyLearning, type VerifyResult } from 'dsh-dstvalid'
import * as Snapshot from 'dsh-snapshot'
import type { CallChange, CommitRequest, RollbackRequest } from 'dsh-snapshot'
import { harness, tempDir, type PluginSpec } from 'dsh-testkit'

const here = dirname(fileURLToPath(import.meta.url))
/** The repository's node_modules (has typescript and vitest), found from this file. */
export const repoNodeModules = join(here, '..', '..', '..', 'node_modules')

/**
 * This package's own node_modules: typescript and vitest plus the tools the
 * advanced modes run in a workspace (@vitest/coverage-v8, eslint,
 * typescript-eslint, prettier), which are devDependencies of dsh-dstvalid only.
 */
export const packageNodeModules = join(here, '..', 'node_modules')

/**
 * A temp copy of a fixture (`''`: none, only `files`) with `node_modules` symlinked to the repository's
 * (or, `nodeModules: 'package'`, to this package's, for the style and coverage tools; or to the
 * `node_modules` directory at that absolute path). Removed when the test worker exits.
 */
export function makeWorkspace(fixture = 'shop', files: Record<string, string> = {}, options: { nodeModules?: 'repo' | 'package' | (string & {}) } = {}): string {
  const root = tempDir('dsh-dstvalid-')
  if (fixture) cpSync(join(here, 'fixtures', fixture), root, { recursive: true })
  for (const [rel, text] of Object.entries(files)) writeFile(root, rel, text)
  const modules = options.nodeModules === 'package' ? packageNodeModules : !options.nodeModules || options.nodeModules === 'repo' ? repoNodeModules : options.nodeModules
  if (existsSync(join(root, 'package.json'))) symlinkSync(modules, join(root, 'node_modules'))
  return root
}

export function writeFile(root: string, rel: string, text: string) {
  mkdirSync(dirname(join(root, rel)), { recursive: true })
  writeFileSync(join(root, rel), text)
}

export function readText(root: string, rel: string): string {
  return readFileSync(join(root, rel), 'utf8')
}

/** In the shop fixture: the discount rounded up, which its discount test catches (`discountTestFails`). */
export const breakDiscount = { path: 'src/money.ts', old_string: 'Math.round(amount * (1 - percent / 100))', new_string: 'Math.ceil(amount * (1 - percent / 100))' }
export const discountTestFails = 'tests/money.test.ts:6 FAIL money > applies a percentage discount — AssertionError: expected 900 to be 899 // Object.is equality'

/** The last line of a rollback whose type-check stopped at the first new errors (the rest could not change the verdict). */
export const STOPPED = '(typecheck stopped at the first new errors: possibly more in files not checked)'

/** A tool result the model sees as an error (a rollback, a regression not rolled back), one string a line. */
export function toolError(...lines: string[]): ToolResult {
  return { isError: true, content: lines.join('\n') }
}

/**
 * A write the guard must roll back: `h.exec(tool, args)` answers exactly
 * `lines` as an error, and the file at `args.path` is byte for byte what it
 * was before (or absent again, when the write created it).
 */
export async function expectRolledBack(h: Harness, tool: string, args: { path: string } & Record<string, unknown>, ...lines: string[]): Promise<void> {
  const file = join(h.root, args.path)
  const bytes = () => (existsSync(file) ? readFileSync(file) : null)
  const before = bytes()
  expect(await h.exec(tool, args)).toEqual(toolError(...lines))
  expect(bytes()).toEqual(before)
}

/**
 * A stand-in for dsh-snapshot that keeps the decided contract: captures a
 * write's paths before it runs (first capture wins), announces what each
 * write or shell call changed when its tool returns (`snapshot/changed`; a
 * shell call's by file times and sizes, nothing to put back), answers
 * `snapshot/rollback` by restoring bytes exactly, forgets on `snapshot/commit`.
 * `plugin` is what to load; `log` and `judged` what it saw.
 */
export function fakeSnapshot() {
  const scopes = new Map<string, Map<string, Buffer | null>>()
  const log: string[] = []
  const judged: string[] = []
  /** Per running call: its pre-images by workspace-relative path (a write), or the file states before it (a shell call). */
  const running = new Map<string, { root: string; images?: Map<string, Buffer | null>; states?: FileStates; verdict?: boolean }>()
  const plugin = (ctx: Context) => {
    ctx.on('tools/execute', async (exec, next) => {
      const effects = exec.tool?.effects
      if (effects !== 'write' && effects !== 'shell') return next()
      const root = resolveInside(exec.session.cwd, '.')
      if (effects === 'shell') {
        const call = { root, states: scanFileStates(root) } as { root: string; states: FileStates; verdict?: boolean }
        running.set(exec.callId, call)
        try {
          return await next()
        } finally {
          running.delete(exec.callId)
        }
      }
      const key = exec.step !== undefined ? `step:${exec.step}` : `call:${exec.callId}`
      const scope = scopes.get(key) ?? new Map<string, Buffer | null>()
      scopes.set(key, scope)
      scopes.set(`call:${exec.callId}`, scope)
      const images = new Map<string, Buffer | null>()
      for (const p of exec.tool!.paths?.(exec.arguments) ?? []) {
        const abs = resolveInside(exec.session.cwd, p)
        const bytes = existsSync(abs) ? readFileSync(abs) : null
        images.set(toPosixRelative(root, abs), bytes)
        if (!scope.has(abs)) scope.set(abs, bytes)
      }
      const call: { root: string; images: Map<string, Buffer | null>; verdict?: boolean } = { root, images }
      running.set(exec.callId, call)
      try {
        const result = await next()
        if (call.verdict !== true) scopes.delete(key)
        return result
      } finally {
        running.delete(exec.callId)
      }
    })
    ctx.on('tools/returned', async exec => {
      const call = running.get(exec.callId)
      if (!call) return
      let change: CallChange
      if (call.states) {
        change = { sessionId: exec.session.id, callId: exec.callId, tool: exec.name, effects: 'shell', ...changedPathsByKind(call.states, scanFileStates(call.root)) }
      } else {
        const lists = { created: [] as string[], modified: [] as string[], deleted: [] as string[] }
        for (const [path, bytes] of [...call.images!].sort(([a], [b]) => a.localeCompare(b))) {
          if (!existsSync(join(call.root, path))) lists.deleted.push(path)
          else if (bytes === null) lists.created.push(path)
          else lists.modified.push(path)
        }
        change = { sessionId: exec.session.id, callId: exec.callId, tool: exec.name, effects: 'write', ...lists, before: call.images! }
      }
      call.verdict = ctx.bail('snapshot/changed', change) === true
      if (call.verdict && !call.states) judged.push(exec.callId)
    })
    ctx.on('snapshot/rollback', async (req: RollbackRequest) => {
      const key = req.callId ? `call:${req.callId}` : `step:${req.step}`
      const scope = scopes.get(key)
      log.push(`rollback ${key}: ${req.reason}`)
      if (!scope) return { matched: false, restored: [], deleted: [], failed: [], message: `nothing to restore for ${key}` }
      const restored: string[] = []
      const deleted: string[] = []
      for (const [abs, bytes] of scope) {
        if (bytes === null) {
          if (existsSync(abs)) unlinkSync(abs)
          deleted.push(abs)
        } else {
          writeFileSync(abs, bytes)
          restored.push(abs)
        }
      }
      scopes.delete(key)
      return { matched: true, restored, deleted, failed: [], message: `restored ${restored.length}, deleted ${deleted.length}` }
    })
    ctx.on('snapshot/commit', (req: CommitRequest) => {
      log.push(`commit ${req.callId ? `call:${req.callId}` : `step:${req.step}`}`)
      scopes.delete(req.callId ? `call:${req.callId}` : `step:${req.step}`)
    })
  }
  return { plugin, log, judged }
}

export interface Harness {
  ctx: Context
  root: string
  session: Session
  notices: DstvalidNotice[]
  results: VerifyResult[]
  learnings: VerifyLearning[]
  snapshot?: { log: string[]; judged: string[] }
  /** The dsh-dstvalid fiber. */
  fiber: Fiber
  /** Run one tool call through the real `tools/execute` waterfall. */
  exec(name: string, args: Record<string, unknown>): Promise<ToolResult>
  /** Measure the baseline of the session's workspace now (as the first write would). */
  ready(): Promise<void>
  dispose(): Promise<void>
}

export interface BootOptions {
  /** The snapshot side: the stand-in (default), the real dsh-snapshot plugin with this config, or none. */
  snapshot?: false | 'fake' | { real: Partial<Snapshot.Config> }
  /** A scripted model (JSON Lines) and the agent loop. */
  script?: string
}

/**
 * The test kit's real harness on `root` (session, tools, workspace tools; with
 * `script`, the scripted model and the agent loop), then the snapshot side and
 * dsh-dstvalid — and a session on `root`, created after every plugin loaded.
 */
async function start(root: string, config: Partial<Config>, options: BootOptions): Promise<Harness> {
  const snapshot = options.snapshot === undefined || options.snapshot === 'fake' ? fakeSnapshot() : undefined
  const real = options.snapshot && options.snapshot !== 'fake' ? options.snapshot.real : undefined
  const plugins: PluginSpec[] = [
    ...(snapshot ? [snapshot.plugin] : []),
    ...(real ? [[Snapshot, real] as PluginSpec] : []),
  ]
  const kit = await harness({
    workspace: root,
    plugins,
    ...(options.script !== undefined ? { script: options.script, agent: { maxSteps: 20 } } : {}),
  })
  const ctx = kit.ctx
  // Related test files by imports unless a spec asks for the map of executed functions (test-map.spec.ts):
  // these specs make comment and body edits to have their related tests run.
  // Strict verdicts unless a spec asks for turn verdicts (turn-verdicts.spec.ts): these specs judge one write's mechanism at a time.
  // Each write's whole verdict in its own result unless a spec asks for background verdicts (background-verdicts.spec.ts).
  const fiber = await kit.load([DstValidService, { warmOnStart: false, testArgs: ['--pool=threads'], testSelection: 'files', verdicts: 'strict', background: false, ...config }])
  const notices: DstvalidNotice[] = []
  const results: VerifyResult[] = []
  const learnings: VerifyLearning[] = []
  ctx.on('dstvalid/notice', n => { notices.push(n) })
  ctx.on('verify/result', r => { results.push(r) })
  ctx.on('verify/learning', l => { learnings.push(l) })
  const session = kit.session
  return {
    ctx, root, session, notices, results, learnings, fiber, exec: (name, args) => kit.call(name, args), dispose: kit.dispose,
    ...(snapshot ? { snapshot: { log: snapshot.log, judged: snapshot.judged } } : {}),
    ready: async () => {
      const guard = ctx.dstvalid.guardFor(root)
      await guard.queue.run(() => guard.prepare({ record: run => { session.append('verify/run', run) }, notice: () => {} }))
    },
  }
}

/**
 * In a test: dsh-dstvalid with `config` on a harness over `root` (and, unless
 * `snapshot: false`, the stand-in snapshot), disposed when the test finishes.
 */
export async function boot(root: string, config: Partial<Config> = {}, options: BootOptions = {}): Promise<Harness> {
  const h = await start(root, config, options)
  onTestFinished(() => h.dispose())
  return h
}

/**
 * In a `describe`: one harness (as `boot` makes it) shared by its tests —
 * booted before the first on the workspace `root()` makes, disposed after the
 * last. Tests read it as `suite.h`.
 */
export function bootForSuite(root: () => string, config: Partial<Config> = {}, options: BootOptions = {}): { readonly h: Harness } {
  let h: Harness | undefined
  beforeAll(async () => { h = await start(root(), config, options) })
  afterAll(() => h?.dispose())
  return {
    get h(): Harness {
      if (!h) throw new Error('bootForSuite: the harness is booted in beforeAll; read suite.h inside a test')
      return h
    },
  }
}

/** `verify/run` events of a session. */
export function runs(session: Session) {
  return session.ofType('verify/run').map(e => e.data)
}

/**
 * The test commands a session ran (`go list` left out; an overlay file's
 * and a JUnit report's paths elided), each with what it found — and, with
 * `where`, whether it ran in the workspace or in a copy of it.
 */
export function testRuns(h: Harness, where = false): string[][] {
  return runs(h.session).filter(r => r.check === 'test' && r.argv[1] !== 'list').map(r => [
    r.argv.filter(a => !a.startsWith('--junitxml=')).map(a => a.replace(/^-overlay=.*/, '-overlay')).join(' '),
    ...(where ? [r.cwd === h.root ? 'workspace' : 'copy'] : []),
    r.outcome,
  ])
}

/**
 * What one test runner's toolchain answers on the small sum / total / legacy
 * project every runner spec builds in its own module system (`src/sum.js`,
 * `src/total.js` importing it, `src/legacy.js` whose test always failed),
 * for {@link runnerScenarios}.
 */
export interface RunnerAnswers {
  /** Where the test files are (`test`, `tests`). */
  testDir: string
  /** What the runs of a good edit of `src/total.js` look like (its related tests after the write: they pass, so no accepted state is measured). */
  goodEditRuns(runs: RunRecord[]): void
  /** The failure lines of `return a - b` in `src/sum.js` (after the rollback line). */
  behaviourBreak: string[]
  /** Some argument of the runs that says the failing test was re-run alone. */
  rerunAlone: string
  /** The failure lines of `return a +` in `src/sum.js`. */
  syntaxError: string[]
  /** A test-first test file (written to `<testDir>/<name>`) and the lines of its warning. */
  testFirst: { name: string; content: string; failure: string }
}

/**
 * The scenarios every test runner must pass, as `it`s of the calling
 * `describe` on its booted `suite`: a good edit kept next to a pre-existing
 * failure (only related test files run), a behaviour change rolled back byte
 * for byte after a re-run alone, a syntax error rolled back, a test-first
 * test file kept with the warning.
 */
/** The last argument of a run recorded on the accepted content served in a mount namespace (ADR 0019). */
const ACCEPTED_IN_NAMESPACE = '(the content before the write, in a mount namespace)'

export function runnerScenarios(suite: { readonly h: Harness }, answers: RunnerAnswers): void {
  it('keeps an unrelated good edit next to a pre-existing failure, running only the related test files', async () => {
    const { h } = suite
    const r = await h.exec('edit_file', { path: 'src/total.js', old_string: 'list.reduce(sum, 0)', new_string: 'list.reduce((a, b) => sum(a, b), 0)' })
    expect(r).toEqual({ content: 'edited src/total.js' })
    answers.goodEditRuns(runs(h.session))
  })

  it('rolls back a behaviour change failing tests through an import, byte for byte: the failing test measured on the content before the write in a mount namespace, then re-run alone', async () => {
    const { h } = suite
    const from = runs(h.session).length
    await expectRolledBack(h, 'edit_file', { path: 'src/sum.js', old_string: 'return a + b', new_string: 'return a - b' },
      'rolled back: test failed after edit_file on src/sum.js', ...answers.behaviourBreak)
    const ran = runs(h.session).slice(from)
    expect(ran.flatMap(x => x.argv)).toContain(answers.rerunAlone)
    // After the write; the accepted state of sum's test file (total's passed after the last kept write: known); the re-runs alone.
    expect(ran.map(x => [x.argv.at(-1) === ACCEPTED_IN_NAMESPACE, x.outcome]).slice(0, 2)).toEqual([[false, 'fail'], [true, 'pass']])
    expect(ran.filter(x => x.argv.at(-1) === ACCEPTED_IN_NAMESPACE).flatMap(x => x.argv).filter(a => a.includes('.test.js'))).toEqual([`${answers.testDir}/sum.test.js`])
  })

  it('a test failing before and after the write is not the write\'s: measured in the mount namespace, it failed there too, so the write is kept', async () => {
    const { h } = suite
    const from = runs(h.session).length
    expect(await h.exec('edit_file', { path: 'src/legacy.js', old_string: '() => 1', new_string: '() => 0 + 1' })).toEqual({ content: 'edited src/legacy.js' })
    expect(runs(h.session).slice(from).map(x => [x.argv.at(-1) === ACCEPTED_IN_NAMESPACE, x.outcome])).toEqual([[false, 'fail'], [true, 'fail']])
  })

  it('rolls back a syntax error in an edited source file: the test files that load it, and the parse error itself', async () => {
    await expectRolledBack(suite.h, 'edit_file', { path: 'src/sum.js', old_string: 'return a + b', new_string: 'return a +' },
      'rolled back: test failed after edit_file on src/sum.js', ...answers.syntaxError)
  })

  it('keeps a test-first test file with the warning', async () => {
    const { name, content, failure } = answers.testFirst
    const path = `${answers.testDir}/${name}`
    expect(await suite.h.exec('write_file', { path, content })).toEqual({
      content: [
        `created ${path} (${Buffer.byteLength(content)} bytes)`,
        'warning: kept, but test has new problems in tests (test-first work? make them pass):',
        failure,
      ].join('\n'),
    })
  })
}

/** A module with each kind of function V8 names (declaration, arrow, class field, getter, method, callback): body-edit fixtures start from it. */
export const BODY_EDIT_LINES: readonly string[] = [
  "import { x } from './x'",
  '/** doc */',
  'export function add(a: number, b: number): number { return a + b }',
  'export const mul = (a: number, b: number) => a * b',
  'export class Box { f = () => 1; constructor(public v: number) {} get double() { return this.v * 2 } scale(k: number) { const h = () => k; return new Box(mul(this.v, h())) } }',
  'const t = [1].map(v => v + 1)',
]
