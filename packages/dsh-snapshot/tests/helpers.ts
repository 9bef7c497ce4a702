import * as Snapshot from 'dsh-snapshot'
import { currentOwner, type CallChange, type JournalOwner } from 'dsh-snapshot'
import { harness, tempDir, type Harness, type HarnessOptions, type PluginSpec } from 'dsh-testkit'
import type { Context } from '@deepseek-ai/cordis'
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { afterEach } from 'vitest'

export type Tree = Record<string, string | Buffer | { mode: number; data: string | Buffer } | { symlink: string }>

/** A fresh temp workspace holding `files`. */
export function workspace(files: Tree = {}): string {
  const dir = tempDir('dsh-snap-')
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

/** dsh-snapshot with `config` and fsync off (throwaway workspaces), for `harness({ plugins })` or `load`. */
export function snapshot(config: Partial<Snapshot.Config> = {}): PluginSpec {
  return [Snapshot, Snapshot.Config({ fsync: 'off', ...config })]
}

const booted: Harness[] = []
afterEach(async () => {
  for (const h of booted.splice(0)) await h.dispose()
})

/** The kit's harness on `root` with dsh-snapshot loaded; disposed after the test. */
export async function boot(root: string, config: Partial<Snapshot.Config> = {}, options: Omit<HarnessOptions, 'workspace'> = {}): Promise<Harness> {
  const h = await harness({ ...options, workspace: root, plugins: [snapshot(config), ...(options.plugins ?? [])] })
  booted.push(h)
  return h
}

/** Declare a judge: every guarded call's scope waits for an explicit verdict. Returns what was announced, by call id. */
export function judgeAll(ctx: Context): Map<string, CallChange> {
  const announced = new Map<string, CallChange>()
  ctx.on('snapshot/changed', change => {
    announced.set(change.callId, change)
    return true
  })
  return announced
}

let dead = 0

/** An owner identity that reads as a dead process (another boot of this host). */
export function deadOwner(): JournalOwner {
  return { ...currentOwner(), pid: 2 ** 22 + 17, boot: 'a-previous-boot', instance: `dead-${++dead}` }
}
