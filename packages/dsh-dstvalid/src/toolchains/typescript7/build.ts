import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import { runCommand } from 'dsh-common'
import { checkEnv } from '../../run.ts'
import type { TsDiagnostic } from '../runner.ts'
import { parseJsonc, referencesOf } from './projects.ts'

/** What a config's `extends` chain defines that the shadow config must not lose. */
interface ChainFacts {
  files: boolean
  include: boolean
  rootDir: boolean
  declarationDir: boolean
}

/** Where an `extends` entry points (relative path, or a package's config), or undefined. */
function resolveExtends(from: string, spec: string): string | undefined {
  const base = dirname(from)
  if (spec.startsWith('.') || isAbsolute(spec)) {
    const p = resolve(base, spec)
    return existsSync(p) ? p : existsSync(`${p}.json`) ? `${p}.json` : undefined
  }
  const require = createRequire(join(base, 'tsconfig.json'))
  for (const candidate of [spec, `${spec}.json`, `${spec}/tsconfig.json`]) {
    try {
      return require.resolve(candidate)
    } catch {
      // Try the next form of the specifier.
    }
  }
  return undefined
}

function chainFacts(config: string, seen = new Set<string>()): ChainFacts {
  const facts: ChainFacts = { files: false, include: false, rootDir: false, declarationDir: false }
  if (seen.has(config)) return facts
  seen.add(config)
  let json: { extends?: unknown; files?: unknown; include?: unknown; compilerOptions?: { rootDir?: unknown; declarationDir?: unknown } }
  try {
    json = parseJsonc(readFileSync(config, 'utf8')) as typeof json
  } catch {
    // tsc reports an unreadable config itself.
    return facts
  }
  const parents = typeof json.extends === 'string' ? [json.extends] : Array.isArray(json.extends) ? json.extends.filter((e): e is string => typeof e === 'string') : []
  for (const spec of parents) {
    const parent = resolveExtends(config, spec)
    if (!parent) continue
    const p = chainFacts(parent, seen)
    facts.files ||= p.files
    facts.include ||= p.include
    facts.rootDir ||= p.rootDir
    facts.declarationDir ||= p.declarationDir
  }
  facts.files ||= json.files !== undefined
  facts.include ||= json.include !== undefined
  facts.rootDir ||= json.compilerOptions?.rootDir !== undefined
  facts.declarationDir ||= json.compilerOptions?.declarationDir !== undefined
  return facts
}

/**
 * Where the shadow of a config lives: under the nearest `node_modules` at or
 * above the config's directory (`node_modules/.cache/<name>`), so the lookups
 * tsc starts from a config's own directory — default `typeRoots`
 * (`node_modules/@types` of its ancestors) and `types` entries — find what
 * they find for the original. `fallback` when there is no `node_modules`.
 */
function shadowHome(config: string, name: string, fallback: string): string {
  for (let d = dirname(config); ; d = dirname(d)) {
    if (existsSync(join(d, 'node_modules'))) return join(d, 'node_modules', '.cache', name)
    if (dirname(d) === d) return fallback
  }
}

/**
 * Shadow configs for a cold `tsc -b` that writes nothing into the
 * workspace's sources: one per project of the graph, each extending the
 * original (so files, options and paths resolve as they do for the
 * original) with every output — emitted files, declarations, build info —
 * redirected next to the shadow, and references pointing at the shadows.
 * Shadows live in `node_modules/.cache/<name>` (see {@link shadowHome}), or
 * `fallback`. Returns the shadow of `configPath`, the map back to the
 * originals, and every directory written (to remove afterwards).
 */
export function writeShadowConfigs(configPath: string, name: string, fallback: string): { entry: string; originals: Map<string, string>; dirs: string[] } {
  const dirs = new Set<string>()
  const shadows = new Map<string, string>()
  const originals = new Map<string, string>()
  const visit = (config: string): string => {
    const known = shadows.get(config)
    if (known) return known
    const n = shadows.size
    const base = shadowHome(config, name, fallback)
    dirs.add(base)
    const home = join(base, `p${n}`)
    const shadow = join(home, 'tsconfig.json')
    shadows.set(config, shadow)
    originals.set(shadow, config)
    mkdirSync(home, { recursive: true })
    const refs = referencesOf(config).filter(r => existsSync(r)).map(r => ({ path: visit(r) }))
    const facts = chainFacts(config)
    const out = join(home, 'out')
    const json: Record<string, unknown> = {
      extends: config,
      compilerOptions: {
        outDir: out,
        ...(facts.declarationDir ? { declarationDir: out } : {}),
        tsBuildInfoFile: join(home, 'tsconfig.tsbuildinfo'),
        // An unset rootDir defaults to the config's directory: the original's, not the shadow's.
        ...(facts.rootDir ? {} : { rootDir: dirname(config) }),
      },
      references: refs,
    }
    // With neither `files` nor `include` anywhere, tsc includes everything under the config's directory.
    if (!facts.files && !facts.include) json.include = [join(dirname(config), '**', '*')]
    writeFileSync(shadow, JSON.stringify(json, null, 2))
    return shadow
  }
  const entry = visit(resolve(configPath))
  return { entry, originals, dirs: [...dirs] }
}

const LINE = /^(.+?)\((\d+),(\d+)\): (error|warning) TS(\d+): (.*)$/
const GLOBAL = /^(error|warning) TS(\d+): (.*)$/

/**
 * Diagnostics from `tsc --pretty false` output: `file(line,col): error TSn: text`
 * and global `error TSn: text`, each followed by its indented chain lines.
 * Paths are made workspace-relative; a shadow config's path becomes its original's.
 */
export function parseTscOutput(output: string, root: string, originals: ReadonlyMap<string, string> = new Map()): TsDiagnostic[] {
  const out: TsDiagnostic[] = []
  let last: TsDiagnostic | undefined
  const rel = (f: string) => {
    const abs = resolve(root, f)
    return relative(root, originals.get(abs) ?? abs).split(sep).join('/')
  }
  const unshadow = (text: string) => {
    let t = text
    for (const [shadow, original] of originals) t = t.split(shadow).join(original)
    return t
  }
  for (const raw of output.split(/\r?\n/)) {
    const m = LINE.exec(raw)
    const g = m ? undefined : GLOBAL.exec(raw)
    if (m) {
      out.push(last = { file: rel(m[1]!), line: Number(m[2]), code: Number(m[5]), category: m[4] === 'error' ? 'error' : 'warning', message: unshadow(m[6]!) })
    } else if (g) {
      out.push(last = { file: '', code: Number(g[2]), category: g[1] === 'error' ? 'error' : 'warning', message: unshadow(g[3]!) })
    } else if (last && /^\s+\S/.test(raw)) {
      last.message += `\n${unshadow(raw)}`
    } else {
      last = undefined
    }
  }
  return out
}

/**
 * The source files of each project's program (`tsc -p <config> --listFilesOnly`:
 * reads, never writes), absolute. A project that fails to list adds nothing.
 */
export async function listProgramFiles(tsc: readonly string[], configs: readonly string[], cwd: string, timeoutMs: number): Promise<string[]> {
  const files = new Set<string>()
  for (const config of configs) {
    const r = await runCommand([...tsc, '-p', config, '--listFilesOnly', '--pretty', 'false'], { cwd, timeoutMs, env: checkEnv() })
    for (const line of r.stdout.split(/\r?\n/)) if (isAbsolute(line.trim())) files.add(line.trim())
  }
  return [...files]
}
