import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureVault, writeFileAtomicSync } from 'dsh-common'
import type { ConfigEdit, HookAdapter, HookEntry, InstallTarget } from './adapter.ts'
import { DSH_LAUNCHER } from './launch.ts'
import { MESSAGES } from './messages.ts'
import { hookPaths } from './paths.ts'

/** The hook client shipped with this package (a POSIX sh script). */
export const HOOK_CLIENT = fileURLToPath(new URL('../bin/dsh-hook', import.meta.url))

/** What `install` recorded: each file it wrote, as it was before and as it left it, and the directories it created. */
interface Manifest {
  agent: string
  files: { file: string; before: string | null; after: string | null }[]
  createdDirs: string[]
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`
}

/**
 * The command line an agent runs for one hook entry: the client, the
 * workspace, the agent, the event, the seconds it may take, the seconds it
 * waits for a starting host.
 */
export function hookCommand(workspace: string, agent: string, entry: HookEntry): string {
  // The client answers two seconds before the agent would give up on it; a boot wait leaves room for the call itself.
  const max = Math.max(1, entry.timeoutSeconds - 2)
  const wait = Math.min(entry.bootWaitSeconds, Math.floor(max / 2))
  return `sh ${shellQuote(HOOK_CLIENT)} ${shellQuote(workspace)} ${agent} ${entry.event} ${max} ${wait}`
}

/** A hook command line of ours (any checkout, any workspace, any agent): it runs this package's client. */
export function isOurCommand(command: string): boolean {
  return /\/dsh-host-hooks\/bin\/dsh-hook'? /.test(command)
}

function installTarget(adapter: HookAdapter, workspace: string, node = process.execPath): InstallTarget {
  return {
    workspace,
    hookCommand: entry => hookCommand(workspace, adapter.agent, entry),
    isOurs: isOurCommand,
    mcp: { command: node, args: [DSH_LAUNCHER, 'hooks', 'mcp', '--workspace', workspace] },
  }
}

/**
 * The fail-open note of each context-taking tool event (one that waits for
 * the host to boot), as the agent's reply with `@WHY@` where the client puts
 * the reason: the client fills it in when the host cannot answer (it has no
 * runtime to word replies with).
 */
export function writeNoteTemplates(adapter: HookAdapter, vault: string): void {
  const paths = hookPaths(vault)
  mkdirSync(paths.dir, { recursive: true, mode: 0o700 })
  for (const entry of adapter.hooks) {
    const file = join(paths.dir, `note-${adapter.agent}-${entry.event}.json`)
    const reply = entry.context && entry.bootWaitSeconds > 0 ? adapter.reply(entry.event, { kind: 'continue', context: MESSAGES.notVerified('@WHY@') }) : undefined
    if (reply === undefined) rmSync(file, { force: true })
    else writeFileAtomicSync(file, JSON.stringify(reply) + '\n')
  }
}

function readManifest(file: string): Manifest | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Manifest
  } catch {
    return undefined
  }
}

function currentText(file: string): string | null {
  return existsSync(file) ? readFileSync(file, 'utf8') : null
}

function apply(edit: { file: string; after: string | undefined | null }): void {
  if (edit.after === undefined || edit.after === null) rmSync(edit.file, { force: true })
  else writeFileAtomicSync(edit.file, edit.after)
}

/** Directories above `file` up to `root` that do not exist yet, outermost first. */
function missingDirs(root: string, file: string): string[] {
  const dirs: string[] = []
  for (let d = dirname(file); d !== root && !relative(root, d).startsWith('..') && !existsSync(d); d = dirname(d)) dirs.unshift(d)
  return dirs
}

export interface InstallReport {
  /** Files written (workspace-relative), with what happened to each. */
  files: { file: string; change: 'created' | 'updated' | 'unchanged' | 'removed' | 'restored' }[]
}

/**
 * Write the agent's project configuration for the host, merged with what is
 * there (idempotent), and record in the vault what it was before, so
 * `uninstallHooks` can put it back exactly.
 * @throws SettingsError (nothing written) when a file is not JSON the merge can work with.
 */
export function installHooks(adapter: HookAdapter, workspace: string, options: { vault?: string; node?: string } = {}): InstallReport {
  const ws = resolve(workspace)
  const vault = resolve(options.vault ?? join(ws, '.dsh'))
  const edits = adapter.install(installTarget(adapter, ws, options.node))
  ensureVault(vault)
  const paths = hookPaths(vault)
  const previous = readManifest(paths.installed(adapter.agent))
  const manifest: Manifest = { agent: adapter.agent, files: [], createdDirs: [...(previous?.createdDirs ?? [])] }
  const report: InstallReport = { files: [] }
  for (const edit of edits) {
    const earlier = previous?.files.find(f => f.file === edit.file)
    // Installed before and untouched since: what it was before that install is still the original.
    const before = earlier && currentText(edit.file) === earlier.after ? earlier.before : edit.before ?? null
    for (const dir of missingDirs(ws, edit.file)) {
      mkdirSync(dir)
      manifest.createdDirs.push(dir)
    }
    if (edit.after !== edit.before) apply(edit)
    manifest.files.push({ file: edit.file, before, after: edit.after ?? null })
    report.files.push({ file: relative(ws, edit.file), change: edit.before === undefined ? 'created' : edit.after === edit.before ? 'unchanged' : 'updated' })
  }
  mkdirSync(paths.dir, { recursive: true, mode: 0o700 })
  writeFileAtomicSync(paths.installed(adapter.agent), JSON.stringify(manifest, null, 2) + '\n')
  writeNoteTemplates(adapter, vault)
  return report
}

/**
 * Take out what `installHooks` added: a file untouched since is restored
 * byte for byte (or removed, if install created it); a file edited since
 * loses only the host's entries. Directories install created go when empty.
 */
export function uninstallHooks(adapter: HookAdapter, workspace: string, options: { vault?: string } = {}): InstallReport {
  const ws = resolve(workspace)
  const vault = resolve(options.vault ?? join(ws, '.dsh'))
  const paths = hookPaths(vault)
  const manifest = readManifest(paths.installed(adapter.agent))
  const report: InstallReport = { files: [] }
  for (const edit of adapter.uninstall(ws, isOurCommand)) {
    const recorded = manifest?.files.find(f => f.file === edit.file)
    const rel = relative(ws, edit.file)
    if (recorded && currentText(edit.file) === recorded.after) {
      if (recorded.before !== recorded.after) apply({ file: edit.file, after: recorded.before })
      report.files.push({ file: rel, change: recorded.before === recorded.after ? 'unchanged' : 'restored' })
    } else if (edit.after !== edit.before) {
      apply(edit)
      report.files.push({ file: rel, change: edit.after === undefined ? 'removed' : 'updated' })
    } else {
      report.files.push({ file: rel, change: 'unchanged' })
    }
  }
  for (const dir of [...(manifest?.createdDirs ?? [])].reverse()) {
    if (existsSync(dir) && readdirSync(dir).length === 0) rmdirSync(dir)
  }
  rmSync(paths.installed(adapter.agent), { force: true })
  for (const entry of adapter.hooks) rmSync(join(paths.dir, `note-${adapter.agent}-${entry.event}.json`), { force: true })
  return report
}

/** The agents whose configuration `installHooks` wrote in this vault. */
export function installedAgents(vault: string): string[] {
  const dir = hookPaths(vault).dir
  if (!existsSync(dir)) return []
  return readdirSync(dir).map(f => /^installed-(.+)\.json$/.exec(f)?.[1]).filter((a): a is string => !!a)
}
