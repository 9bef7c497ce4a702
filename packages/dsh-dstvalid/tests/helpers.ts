import { Context, type Fiber } from '@deepseek-ai/cordis'
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { resolveInside, toPosixRelative } from 'dsh-common'
import SessionService, { type Session } from 'dsh-session'
import ToolService, { type ToolResult } from 'dsh-tools'
import * as WorkspaceTools from 'dsh-tools-workspace'
import LlmService from 'dsh-llm'
import * as Scripted from 'dsh-llm/scripted'
import AgentService from 'dsh-agent'
import DstValidService, { type Config, type DstvalidNotice, type VerifyLearning, type VerifyResult } from 'dsh-dstvalid'
import * as Snapshot from 'dsh-snapshot'
import type { CommitRequest, RollbackRequest } from 'dsh-snapshot'

const here = dirname(fileURLToPath(import.meta.url))
/** The repository's node_modules (has typescript and vitest), found from this file. */
export const repoNodeModules = join(here, '..', '..', '..', 'node_modules')

const dirs: string[] = []

/**
 * This package's own node_modules: typescript and vitest plus the tools the
 * advanced modes run in a workspace (@vitest/coverage-v8, eslint,
 * typescript-eslint, prettier), which are devDependencies of dsh-dstvalid only.
 */
export const packageNodeModules = join(here, '..', 'node_modules')

/**
 * A temp copy of a fixture (`''`: none, only `files`) with `node_modules` symlinked to the repository's
 * (or, `nodeModules: 'package'`, to this package's, for the style and coverage tools).
 */
export function makeWorkspace(fixture = 'shop', files: Record<string, string> = {}, options: { nodeModules?: 'repo' | 'package' } = {}): string {
  const root = mkdtempSync(join(tmpdir(), 'dsh-dstvalid-'))
  dirs.push(root)
  if (fixture) cpSync(join(here, 'fixtures', fixture), root, { recursive: true })
  for (const [rel, text] of Object.entries(files)) writeFile(root, rel, text)
  if (existsSync(join(root, 'package.json'))) symlinkSync(options.nodeModules === 'package' ? packageNodeModules : repoNodeModules, join(root, 'node_modules'))
  return root
}

export function writeFile(root: string, rel: string, text: string) {
  mkdirSync(dirname(join(root, rel)), { recursive: true })
  writeFileSync(join(root, rel), text)
}

export function readText(root: string, rel: string): string {
  return readFileSync(join(root, rel), 'utf8')
}

export function cleanupWorkspaces() {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
}

/**
 * A stand-in for dsh-snapshot that keeps the decided contract: captures a
 * write's paths before it runs (first capture wins), answers
 * `snapshot/rollback` by restoring bytes exactly, forgets on `snapshot/commit`.
 */
export function fakeSnapshot(ctx: Context) {
  const scopes = new Map<string, Map<string, Buffer | null>>()
  const log: string[] = []
  const judged: string[] = []
  ctx.on('tools/execute', async (exec, next) => {
    if (exec.tool?.effects !== 'write') return next()
    const verdict = ctx.bail('snapshot/judge', exec)
    if (verdict === true) judged.push(exec.callId)
    const key = exec.step !== undefined ? `step:${exec.step}` : `call:${exec.callId}`
    const scope = scopes.get(key) ?? new Map<string, Buffer | null>()
    scopes.set(key, scope)
    scopes.set(`call:${exec.callId}`, scope)
    for (const p of exec.tool.paths?.(exec.arguments) ?? []) {
      const abs = resolveInside(exec.session.cwd, p)
      if (!scope.has(abs)) scope.set(abs, existsSync(abs) ? readFileSync(abs) : null)
    }
    const result = await next()
    if (verdict !== true) scopes.delete(key)
    return result
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
  return { log, judged }
}

export interface Harness {
  ctx: Context
  root: string
  session: Session
  notices: DstvalidNotice[]
  results: VerifyResult[]
  learnings: VerifyLearning[]
  snapshot?: ReturnType<typeof fakeSnapshot>
  /** The dsh-dstvalid fiber. */
  fiber: Fiber
  /** Run one tool call through the real `tools/execute` waterfall. */
  exec(name: string, args: Record<string, unknown>): Promise<ToolResult>
  /** Measure the baseline of the session's workspace now (as the first write would). */
  ready(): Promise<void>
  dispose(): Promise<void>
}

let callSeq = 0

export interface BootOptions {
  /** The snapshot side: the stand-in (default), the real dsh-snapshot plugin with this config, or none. */
  snapshot?: false | 'fake' | { real: Partial<Snapshot.Config> }
  /** A scripted model (JSON Lines) and the agent loop. */
  script?: string
}

/** A real Context with the real session, tools, workspace-tools and dstvalid plugins (and, unless `snapshot: false`, the stand-in snapshot). */
export async function boot(root: string, config: Partial<Config> = {}, options: BootOptions = {}): Promise<Harness> {
  const ctx = new Context()
  const fibers: Fiber[] = []
  const load = async (plugin: Parameters<Context['plugin']>[0], cfg?: unknown) => {
    const fiber = ctx.plugin(plugin, cfg)
    fibers.push(fiber)
    await fiber.await()
    return fiber
  }
  await load(SessionService)
  await load(ToolService)
  await load(WorkspaceTools, {})
  if (options.script !== undefined) {
    await load(LlmService)
    await load(Scripted, { script: options.script })
    await load(AgentService, { maxSteps: 20 })
  }
  const snapshot = options.snapshot === undefined || options.snapshot === 'fake' ? fakeSnapshot(ctx) : undefined
  if (options.snapshot && options.snapshot !== 'fake') await load(Snapshot, { ...options.snapshot.real })
  const fiber = await load(DstValidService, { warmOnStart: false, testArgs: ['--pool=threads'], ...config })
  const notices: DstvalidNotice[] = []
  const results: VerifyResult[] = []
  const learnings: VerifyLearning[] = []
  ctx.on('dstvalid/notice', n => { notices.push(n) })
  ctx.on('verify/result', r => { results.push(r) })
  ctx.on('verify/learning', l => { learnings.push(l) })
  const session = ctx.sessions.create(undefined, { cwd: root })
  return {
    ctx, root, session, notices, results, learnings, snapshot, fiber,
    exec: (name, args) => ctx.tools.execute({ session, callId: `c${++callSeq}`, name, arguments: args }),
    ready: async () => {
      const guard = ctx.dstvalid.guardFor(root)
      await guard.queue.run(() => guard.prepare({ record: run => { session.append('verify/run', run) }, notice: () => {} }))
    },
    dispose: async () => {
      for (const f of fibers.reverse()) await f.dispose()
    },
  }
}

/** `verify/run` events of a session. */
export function runs(session: Session) {
  return session.ofType('verify/run').map(e => e.data)
}

export function rel(root: string, abs: string) {
  return toPosixRelative(root, abs)
}
