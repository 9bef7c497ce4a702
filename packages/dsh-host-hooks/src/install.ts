import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureVault, writeFileAtomicSync } from 'dsh-common'
import type { HookAdapter, HookEntry, InstallPlace, InstallScope, InstallTarget, InstalledBy } from './adapter.ts'
import { DSH_LAUNCHER } from './launch.ts'
import { MESSAGES } from './messages.ts'
import { hookPaths } from './paths.ts'

/** The hook client shipped with this package (a POSIX sh script). */
export const HOOK_CLIENT = fileURLToPath(new URL('../bin/dsh-hook', import.meta.url))

/** What `install` recorded: each file it wrote, as it was before and as it left it, and the directories it created. */
interface Manifest {
  agent: string
  scope?: InstallScope
  files: { file: string; before: string | null; after: string | null }[]
  createdDirs: string[]
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`
}

/**
 * The command line an agent runs for one hook entry: the client, the
 * workspace (a path, or `projectWord`: a shell word the agent expands to the
 * project), the agent, the event, the seconds it may take, the seconds it
 * waits for a starting host. The client is a path run with `sh`, or
 * dsh-guard's launcher on PATH ({@link GUARD_COMMANDS}), run by its name.
 */
export function hookCommand(workspace: string | { projectWord: string }, agent: string, entry: HookEntry, client = HOOK_CLIENT): string {
  // The client answers two seconds before the agent would give up on it; a boot wait leaves room for the call itself.
  const max = Math.max(1, entry.timeoutSeconds - 2)
  const wait = Math.min(entry.bootWaitSeconds, Math.floor(max / 2))
  const ws = typeof workspace === 'string' ? shellQuote(workspace) : workspace.projectWord
  const run = client === GUARD_COMMANDS.hook ? client : `sh ${client.startsWith('${') ? `"${client}"` : shellQuote(client)}`
  return `${run} ${ws} ${agent} ${entry.event} ${max} ${wait}`
}

/**
 * The commands the distributable guard (dsh-guard, installed with npm) puts
 * on PATH: its hook launcher, which runs this package's client, and its CLI.
 * An install that names them (`onPath`) names no path of this machine.
 */
export const GUARD_COMMANDS = { hook: 'dsh-guard-hook', cli: 'dsh-guard' } as const

/** A hook command line of ours (any checkout, any workspace, any agent): it runs this package's client, or dsh-guard's launcher on PATH. */
export function isOurCommand(command: string): boolean {
  return /\/dsh-host-hooks\/bin\/dsh-hook'? /.test(command) || command.startsWith(`${GUARD_COMMANDS.hook} `)
}

/** This repository's own commands: what a marker names when the installer is not told otherwise. */
const DSH_COMMANDS: InstalledBy = { install: 'dsh hooks install', uninstall: 'dsh hooks uninstall' }

function installTarget(adapter: HookAdapter, place: InstallPlace, node: string, onPath: boolean, installedBy: InstalledBy): InstallTarget {
  const user = place.scope === 'user'
  if (onPath) {
    // No path at all: the agent names the project in the command, the MCP server runs in the session's directory.
    return {
      ...place,
      installedBy,
      hookCommand: entry => hookCommand(adapter, adapter.agent, entry, GUARD_COMMANDS.hook),
      isOurs: isOurCommand,
      mcp: { command: GUARD_COMMANDS.cli, args: ['mcp'] },
    }
  }
  return {
    ...place,
    installedBy,
    // Every project: the agent names the project in the command; the MCP server runs in the session's directory.
    hookCommand: entry => hookCommand(user ? adapter : place.workspace, adapter.agent, entry),
    isOurs: isOurCommand,
    mcp: { command: node, args: [DSH_LAUNCHER, 'hooks', 'mcp', ...(user ? [] : ['--workspace', place.workspace])] },
  }
}

/** Where the record of an install goes: the project's vault, or `~/.dsh` for a user-level install. */
function installVault(place: InstallPlace, vault: string | undefined): string {
  return resolve(vault ?? join(place.scope === 'user' ? place.home : place.workspace, '.dsh'))
}

/** A written file as the report names it: relative to the project, or with `~` for the home directory. */
function shown(place: InstallPlace, file: string): string {
  const inside = relative(place.workspace, file)
  if (place.scope === 'project' && !inside.startsWith('..')) return inside
  const home = relative(place.home, file)
  return home.startsWith('..') ? file : `~/${home}`
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

export interface InstallOptions {
  vault?: string
  node?: string
  /** `project` (default): this workspace only; `user`: every project of this user. */
  scope?: InstallScope
  /** The user's home (default: `os.homedir()`). */
  home?: string
  /**
   * Name dsh-guard's commands on PATH ({@link GUARD_COMMANDS}) instead of
   * this checkout's files: hooks and MCP server without any path, so a
   * project file a team commits (Codex's `.codex/`, Gemini CLI's
   * `.gemini/settings.json`) holds nothing of this machine.
   */
  onPath?: boolean
  /** The commands a user runs to install and uninstall, as markers in the agent's files name them (default: `dsh hooks install`, `dsh hooks uninstall`). */
  installedBy?: InstalledBy
}

export interface InstallReport {
  scope: InstallScope
  /** Files written (workspace-relative, or `~/…`), with what happened to each. */
  files: { file: string; change: 'created' | 'updated' | 'unchanged' | 'removed' | 'restored' }[]
}

/**
 * Write the agent's project configuration for the host, merged with what is
 * there (idempotent), and record in the vault what it was before, so
 * `uninstallHooks` can put it back exactly.
 * @throws SettingsError (nothing written) when a file is not JSON the merge can work with.
 */
export function installHooks(adapter: HookAdapter, workspace: string, options: InstallOptions = {}): InstallReport {
  const place = placeOf(workspace, options)
  const ws = place.scope === 'user' ? place.home : place.workspace
  const vault = installVault(place, options.vault)
  const edits = adapter.install(installTarget(adapter, place, options.node ?? process.execPath, options.onPath ?? false, options.installedBy ?? DSH_COMMANDS))
  ensureVault(vault)
  const paths = hookPaths(vault)
  const previous = readManifest(paths.installed(adapter.agent))
  const manifest: Manifest = { agent: adapter.agent, scope: place.scope, files: [], createdDirs: [...(previous?.createdDirs ?? [])] }
  const report: InstallReport = { scope: place.scope, files: [] }
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
    report.files.push({ file: shown(place, edit.file), change: edit.before === undefined ? 'created' : edit.after === edit.before ? 'unchanged' : 'updated' })
  }
  mkdirSync(paths.dir, { recursive: true, mode: 0o700 })
  writeFileAtomicSync(paths.installed(adapter.agent), JSON.stringify(manifest, null, 2) + '\n')
  if (place.scope === 'project') writeNoteTemplates(adapter, vault)
  return report
}

function placeOf(workspace: string, options: InstallOptions): InstallPlace {
  return { scope: options.scope ?? 'project', workspace: resolve(workspace), home: resolve(options.home ?? homedir()) }
}

/**
 * Take out what `installHooks` added: a file untouched since is restored
 * byte for byte (or removed, if install created it); a file edited since
 * loses only the host's entries. Directories install created go when empty.
 */
export function uninstallHooks(adapter: HookAdapter, workspace: string, options: Omit<InstallOptions, 'node'> = {}): InstallReport {
  const place = placeOf(workspace, options)
  const vault = installVault(place, options.vault)
  const paths = hookPaths(vault)
  const manifest = readManifest(paths.installed(adapter.agent))
  const report: InstallReport = { scope: place.scope, files: [] }
  for (const edit of adapter.uninstall(place, isOurCommand)) {
    const recorded = manifest?.files.find(f => f.file === edit.file)
    const rel = shown(place, edit.file)
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
