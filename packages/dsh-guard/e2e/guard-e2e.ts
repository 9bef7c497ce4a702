/**
 * What every dsh-guard e2e shares: the package built, packed and installed
 * from its tarball into an empty npm prefix (once per file), a copy of the
 * demo workspace, the host stopped afterwards, and why the runs cannot
 * happen here (no registry for the CLIs and the guard's dependency, no
 * loopback-only namespace).
 */
import { execFileSync } from 'node:child_process'
import { cpSync, readFileSync, symlinkSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { registryReachable } from '../../../scripts/deepseek-harness.ts'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { hostStatus, writeHostSettings } from 'dsh-host-hooks'
import { loopbackUnavailable, pick, readTree, tempDir, treeChanges, type AgentRun, type FileTree, type ModelServer } from 'dsh-testkit'

export const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
export const ORIGINAL = readFileSync(join(repo, 'examples/demo/workspace/src/money.ts'), 'utf8')
export const ROUNDING = 'return Math.round(amount * (1 - percent / 100))'
export const GOOD = `${ROUNDING} // rounded to the cent`
export const ADD = 'export function add(a: Cents, b: Cents): Cents {'
export const ADD_STRING = 'export function add(a: Cents, b: string): Cents {'

/** The suite's rollback text for the type-breaking edit made by `tool`. */
export function typeBreak(tool: string): string {
  return `rolled back: typecheck failed after ${tool} on src/money.ts\nsrc/money.ts:5 TS2322 Type 'string' is not assignable to type 'number'.\n(typecheck stopped at the first new errors: possibly more in files not checked)`
}

/** Why these runs cannot happen here, or undefined (warned once). */
export async function guardE2eSkip(label: string): Promise<string | undefined> {
  const offline = (await registryReachable()) ? undefined : 'the npm registry is unreachable (the guard\'s dependency and the CLIs come from it)'
  const skip = offline ?? (await loopbackUnavailable())
  if (skip) console.warn(`dsh-guard ${label} e2e skipped: ${skip}`)
  return skip
}

export interface InstalledGuard {
  prefix: string
  /** The package directory npm made. */
  pkg: string
  /** `dsh-guard` in the prefix's bin directory. */
  bin: string
  /** PATH with the prefix's bin directory first, as after `npm i -g` (dsh-guard and dsh-guard-hook on it). */
  path: string
}

/** Build, pack, and install the tarball into an empty prefix, as `npm i -g ./dsh-guard-<version>.tgz` does. */
export function installPackage(): InstalledGuard {
  const out = execFileSync(process.execPath, ['--import', 'tsx', join(repo, 'packages/dsh-guard/src/build.ts'), '--pack'], { cwd: repo, encoding: 'utf8' })
  const tarball = out.trim().split('\n').at(-1)!
  const prefix = tempDir('dsh-guard-prefix-')
  execFileSync('npm', ['install', '--global', '--prefix', prefix, tarball, '--no-audit', '--no-fund', '--loglevel=error'], { encoding: 'utf8', timeout: 300_000 })
  return { prefix, pkg: join(prefix, 'lib/node_modules/dsh-guard'), bin: join(prefix, 'bin/dsh-guard'), path: `${join(prefix, 'bin')}:${process.env.PATH ?? ''}` }
}

/** A copy of the demo workspace with the repo's TypeScript and vitest, as a real project has its own. */
export function project(): string {
  const ws = join(tempDir('dsh-guard-e2e-'), 'shop')
  cpSync(join(repo, 'examples/demo/workspace'), ws, { recursive: true })
  symlinkSync(join(repo, 'node_modules'), join(ws, 'node_modules'), 'dir')
  // Each write's whole verdict in its own hook answer, as these runs assert it (background verdicts off in the workspace's host settings: the one switch every agent passes on to the host).
  writeHostSettings(join(ws, '.dsh'), { background: false })
  return ws
}

export async function stopHost(ws: string): Promise<void> {
  const status = await hostStatus(join(ws, '.dsh'))
  if (status.pid) process.kill(status.pid, 'SIGTERM')
}

/**
 * The files an install route can touch: the project (its vault, sources and
 * node_modules aside: the session changes those) and the agent's home, as
 * one tree (`ws/…`, `home/…`).
 */
export function agentFiles(ws: string, home: string): FileTree {
  const tree: FileTree = {}
  for (const [at, dir, skip] of [['ws', ws, ['.dsh', 'node_modules', 'src']], ['home', home, []]] as const) {
    for (const [f, text] of Object.entries(readTree(dir, skip))) tree[`${at}/${f}`] = text
  }
  return tree
}

/** One install route's run (filled in by its `beforeAll`). */
export interface Route {
  ws: string
  home: string
  /** The agent's files before the install, after it, and which of them it touched (its own state left out). */
  before: FileTree
  files: FileTree
  touched: string[]
  result?: { run: AgentRun; server: ModelServer }
}

/**
 * An install route's life in the enclosing `describe`: a project copy and an
 * empty agent home (`prepare` writes the agent's settings there), the
 * agent's files taken before and after `install`, one guarded `session`,
 * then the model server closed and the host stopped.
 */
export function installRoute(steps: {
  homePrefix: string
  prepare(route: Route): void | Promise<void>
  install(route: Route): unknown
  session(route: Route): Promise<{ run: AgentRun; server: ModelServer }>
  /** Paths (`home/…`) the agent writes on every run of it: not the install's. */
  agentState?: RegExp
}): Route {
  const route: Route = { ws: '', home: '', before: {}, files: {}, touched: [] }
  beforeAll(async () => {
    route.ws = project()
    route.home = tempDir(steps.homePrefix)
    await steps.prepare(route)
    route.before = agentFiles(route.ws, route.home)
    await steps.install(route)
    route.files = agentFiles(route.ws, route.home)
    route.touched = treeChanges(route.before, route.files).filter(f => !steps.agentState?.test(f))
    route.result = await steps.session(route)
  }, 600_000)
  afterAll(async () => {
    await route.result?.server.close()
    if (route.ws) await stopHost(route.ws)
  })
  return route
}

/** The checks of an agent's own install route, each a test's title and what it checks. */
export interface AgentInstallChecks {
  /** The files the install puts in the agent's home; it puts none in the project. */
  installs: readonly [title: string, ...homeFiles: string[]]
  guarded: readonly [title: string, check: () => void]
  /** The agent's uninstall: every file the install touched is as it was after it (but `agentKeeps`). */
  uninstall: readonly [title: string, run: () => Promise<unknown>]
  /** Files the agent's own uninstall leaves changed (its records), and a check of them. */
  agentKeeps?: { paths: readonly string[]; check(after: FileTree): void }
}

/** An agent's own install (a plugin, an extension): its files in the home, the session guarded, its uninstall. */
export function agentInstallChecks(route: Route, checks: AgentInstallChecks): void {
  const [installs, ...homeFiles] = checks.installs
  it(installs, () => {
    for (const f of homeFiles) expect(route.touched).toContain(f)
    expect(route.touched.filter(f => f.startsWith('ws/'))).toEqual([])
  })

  it(...checks.guarded)

  const [uninstalls, uninstall] = checks.uninstall
  it(uninstalls, async () => {
    await uninstall()
    const after = agentFiles(route.ws, route.home)
    const keeps = checks.agentKeeps
    if (!keeps) {
      expect(pick(after, route.touched)).toEqual(pick(route.before, route.touched))
      return
    }
    expect(treeChanges(pick(route.before, route.touched), pick(after, route.touched))).toEqual(keeps.paths)
    keeps.check(after)
  })
}

/** A process's scheduler state from `/proc` (`Z`: ended, not yet reaped by its parent), or `gone`. */
export function hostState(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0] ?? 'gone'
  } catch {
    return 'gone'
  }
}
