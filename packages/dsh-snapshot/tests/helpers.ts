import { Context } from '@deepseek-ai/cordis'
import SessionService, { type Session } from 'dsh-session'
import ToolService, { type ToolResult } from 'dsh-tools'
import * as WorkspaceTools from 'dsh-tools-workspace'
import * as SnapshotPlugin from 'dsh-snapshot'
import { currentOwner, type JournalOwner } from 'dsh-snapshot'
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterEach } from 'vitest'

const made: string[] = []

afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
})

export type Tree = Record<string, string | Buffer | { mode: number; data: string | Buffer } | { symlink: string }>

/** A fresh temp workspace (removed after the test) holding `files`. */
export function workspace(files: Tree = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-snap-'))
  made.push(dir)
  writeTree(dir, files)
  return dir
}

export function writeTree(root: string, files: Tree) {
  for (const [rel, spec] of Object.entries(files)) {
    const abs = join(root, rel)
    mkdirSync(dirname(abs), { recursive: true })
    if (typeof spec === 'string' || Buffer.isBuffer(spec)) {
      writeFileSync(abs, spec)
    } else if ('symlink' in spec) {
      symlinkSync(spec.symlink, abs)
    } else {
      writeFileSync(abs, spec.data)
      chmodSync(abs, spec.mode)
    }
  }
}

export interface Entry {
  kind: 'file' | 'dir' | 'symlink'
  mode: number
  data?: string
  target?: string
}

/**
 * Everything below `root` (skipping `.dsh`): path → kind, mode, content
 * (base64, so binary compares exactly) or link target. Directories included.
 */
export function listTree(root: string, skip: readonly string[] = ['.dsh']): Record<string, Entry> {
  const out: Record<string, Entry> = {}
  const visit = (dir: string, prefix: string) => {
    for (const name of readdirSync(dir).sort()) {
      const rel = prefix ? `${prefix}/${name}` : name
      if (skip.includes(rel)) continue
      const abs = join(dir, name)
      const st = lstatSync(abs)
      const mode = st.mode & 0o7777
      if (st.isSymbolicLink()) out[rel] = { kind: 'symlink', mode: 0, target: readlinkSync(abs) }
      else if (st.isDirectory()) {
        out[rel + '/'] = { kind: 'dir', mode }
        visit(abs, rel)
      } else out[rel] = { kind: 'file', mode, data: readFileSync(abs).toString('base64') }
    }
  }
  visit(root, '')
  return out
}

export function read(root: string, rel: string): string {
  return readFileSync(join(root, rel), 'utf8')
}

export interface Harness {
  ctx: Context
  session: Session
  /** Run one tool call through `ctx.tools.execute`. */
  call(name: string, args: Record<string, unknown>, extra?: { callId?: string; step?: number; turn?: number }): Promise<ToolResult>
  dispose(): Promise<void>
}

let nextCall = 0

/**
 * A real Context with the real session, tools, workspace-tools and
 * dsh-snapshot plugins, and one session on `root`.
 */
export async function boot(root: string, config: Partial<SnapshotPlugin.Config> = {}, options: { sessionId?: string; vault?: string; ctx?: Context; beforeSession?: (ctx: Context) => void } = {}): Promise<Harness> {
  const ctx = options.ctx ?? new Context()
  if (!options.ctx) {
    await ctx.plugin(SessionService)
    await ctx.plugin(ToolService)
    await ctx.plugin(WorkspaceTools, {})
  }
  const fiber = ctx.plugin(SnapshotPlugin, { fsync: 'off', ...config })
  await fiber
  await new Promise(resolve => setTimeout(resolve, 0))
  options.beforeSession?.(ctx)
  const session = ctx.sessions.create(options.sessionId ?? `s${++nextCall}`, { cwd: root, ...(options.vault ? { vault: options.vault } : {}) })
  return {
    ctx,
    session,
    call: (name, args, extra = {}) => ctx.tools.execute({ session, callId: extra.callId ?? `c${++nextCall}`, name, arguments: args, ...(extra.step === undefined ? {} : { step: extra.step }), ...(extra.turn === undefined ? {} : { turn: extra.turn }) }),
    async dispose() {
      await fiber.dispose()
    },
  }
}

/** Declare a judge: every write call's scope waits for an explicit verdict. */
export function judgeAll(ctx: Context): () => boolean {
  return ctx.on('snapshot/judge', () => true)
}

/** An owner identity that reads as a dead process (another boot of this host). */
export function deadOwner(): JournalOwner {
  return { ...currentOwner(), pid: 2 ** 22 + 17, boot: 'a-previous-boot', instance: `dead-${++nextCall}` }
}
