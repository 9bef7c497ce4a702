import { existsSync, readFileSync } from 'node:fs'
import { delimiter, dirname, join, resolve } from 'node:path'
import { checkEnv, runRecorded, whyNotJudged } from '../run.ts'
import { resolveFromWorkspace } from '../workspace-modules.ts'
import type { CheckIO, Problem } from '../types.ts'

export type StyleToolName = 'eslint' | 'prettier' | 'biome' | 'gofmt' | 'ruff'

/** What one run of a formatter or linter found (problems only for the files it was given, or the whole workspace). */
export type StyleRun =
  | { status: 'ok'; problems: Problem[] }
  | { status: 'timeout' | 'error'; error: string }

/**
 * One of the workspace's own formatters or linters. A problem is a
 * diagnostic of the `style` check, coded `<tool>` or `<tool>/<rule>`, so it
 * is judged by delta like any diagnostic: one the accepted state already had
 * is not the write's.
 */
export interface StyleTool {
  readonly name: StyleToolName
  /** Whether the tool looks at this workspace-relative file. */
  handles(file: string): boolean
  /** Run on `files` (workspace-relative, existing), or on the whole workspace as the tool's own config scopes it. */
  run(files: string[] | undefined, io: CheckIO): Promise<StyleRun>
}

/**
 * What a toolchain says about one of its style tools, so the style mode can
 * tell whether the workspace uses it and find it.
 */
export interface StyleToolSpec {
  readonly name: StyleToolName
  /** Config files whose presence says the workspace uses the tool. */
  readonly configFiles: readonly string[]
  /** Whether another file configures it (a `package.json` key, a `pyproject.toml` table); `read` gives a workspace file's text, '' when there is none. */
  configuredIn?(read: (file: string) => string): boolean
  /**
   * An npm package run as `[node, <bin>]`: the workspace's own installation,
   * else — the tool named in `styleTools` — the suite's own copy.
   */
  readonly npm?: { pkg: string; bin: string; create(root: string, argv: string[], version: string): StyleTool }
  /** Not an npm package: the tool found for this workspace, or why it is not used (one line). */
  locate?(root: string): StyleTool | string
}

/** An executable on PATH, or undefined. */
export function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, name))) return join(dir, name)
  }
  return undefined
}

/** The check name of every style problem (`verify/run`, `verify/result`). */
export const STYLE_CHECK = 'style'

/** A JSON report that is an array; `undefined` when the output is not one (a crash, or output cut at the cap): the caller reports why. */
export function jsonArray<T>(stdout: string): T[] | undefined {
  try {
    const value: unknown = JSON.parse(stdout)
    return Array.isArray(value) ? (value as T[]) : undefined
  } catch {
    return undefined
  }
}

/**
 * Run a linter that prints a JSON report and exits 0 (clean), 1 (problems)
 * or 2 (it failed itself: a configuration problem, a crash), and read the
 * report with `parse` (`undefined`: not a report).
 */
export async function runJsonLinter(name: string, argv: string[], root: string, io: CheckIO, parse: (stdout: string) => Problem[] | undefined): Promise<StyleRun> {
  const r = await runRecorded(STYLE_CHECK, argv, root, io, { env: checkEnv(), passed: x => x.exitCode === 0 })
  if (r.outcome === 'timeout' || r.outcome === 'error' || r.exitCode === 2) {
    return { status: r.outcome === 'timeout' ? 'timeout' : 'error', error: whyNotJudged(name, r, io.timeoutMs) }
  }
  const problems = parse(r.stdout)
  return problems ? { status: 'ok', problems } : { status: 'error', error: whyNotJudged(`${name} (no JSON report)`, r, io.timeoutMs) }
}

/** `[node, <bin>]` of a package installed in the workspace (its `bin` entry), without a package runner. */
export function workspaceBin(root: string, pkg: string, bin: string): { argv: string[]; version: string } | undefined {
  const manifest = resolveFromWorkspace(root, `${pkg}/package.json`)
  return manifest ? binOf(manifest, bin) : undefined
}

/** `[node, <bin>]` and the version of the package whose `package.json` is at `manifest`. */
export function binOf(manifest: string, bin: string): { argv: string[]; version: string } | undefined {
  const json = JSON.parse(readFileSync(manifest, 'utf8')) as { version?: string; bin?: string | Record<string, string> }
  const rel = typeof json.bin === 'string' ? json.bin : json.bin?.[bin]
  return rel ? { argv: [process.execPath, resolve(dirname(manifest), rel)], version: json.version ?? '0.0.0' } : undefined
}
