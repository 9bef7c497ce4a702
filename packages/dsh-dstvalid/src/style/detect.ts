import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { delimiter, join, resolve } from 'node:path'
import type { ProfileName } from '../config.ts'
import { BiomeTool } from './biome.ts'
import { EslintTool } from './eslint.ts'
import { GofmtTool } from './gofmt.ts'
import { PrettierTool } from './prettier.ts'
import { RuffTool } from './ruff.ts'
import { binOf, workspaceBin, type StyleTool, type StyleToolName } from './tool.ts'

/** Which tools belong to which profile, in the order they run. */
export const STYLE_TOOLS: Partial<Record<ProfileName, StyleToolName[]>> = {
  typescript: ['eslint', 'prettier', 'biome'],
  go: ['gofmt'],
  python: ['ruff'],
}

const SCRIPT_EXT = ['js', 'mjs', 'cjs', 'ts', 'mts', 'cts']

/** The config files that say a workspace uses a tool. */
const CONFIG_FILES: Record<StyleToolName, string[]> = {
  eslint: [...SCRIPT_EXT.map(e => `eslint.config.${e}`), '.eslintrc', ...['js', 'cjs', 'json', 'yaml', 'yml'].map(e => `.eslintrc.${e}`)],
  prettier: ['.prettierrc', ...['json', 'json5', 'yaml', 'yml', 'toml', ...SCRIPT_EXT].map(e => `.prettierrc.${e}`), ...SCRIPT_EXT.map(e => `prettier.config.${e}`)],
  biome: ['biome.json', 'biome.jsonc'],
  gofmt: ['go.mod'],
  ruff: ['ruff.toml', '.ruff.toml'],
}

/** Whether the workspace's config files say it uses `tool`. */
export function configures(root: string, tool: StyleToolName): boolean {
  if (CONFIG_FILES[tool].some(f => existsSync(join(root, f)))) return true
  const read = (f: string) => {
    try {
      return readFileSync(join(root, f), 'utf8')
    } catch {
      // No such file.
      return ''
    }
  }
  if (tool === 'ruff') return /^\[tool\.ruff\b/m.test(read('pyproject.toml'))
  if (tool === 'eslint' || tool === 'prettier') {
    try {
      const pkg = JSON.parse(read('package.json') || '{}') as Record<string, unknown>
      return (tool === 'eslint' ? 'eslintConfig' : 'prettier') in pkg
    } catch {
      // A package.json that does not parse configures nothing.
      return false
    }
  }
  return false
}

/** An executable on PATH, or undefined. */
function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, name))) return join(dir, name)
  }
  return undefined
}

/** `[node, <bin>]` of the suite's own copy of a package (an explicit `styleTools` entry the workspace lacks). */
function suiteBin(pkg: string, bin: string): { argv: string[]; version: string } | undefined {
  try {
    return binOf(createRequire(import.meta.url).resolve(`${pkg}/package.json`), bin)
  } catch {
    // Not installed alongside dsh-dstvalid either.
    return undefined
  }
}

const PACKAGES: Partial<Record<StyleToolName, [pkg: string, bin: string]>> = {
  eslint: ['eslint', 'eslint'],
  prettier: ['prettier', 'prettier'],
  biome: ['@biomejs/biome', 'biome'],
}

export interface StyleTools {
  tools: StyleTool[]
  /** Why a tool is not used, or is used from the suite (shown once). */
  notes: string[]
}

/**
 * The style tools of one profile: the ones `wanted` names (empty: the ones
 * the workspace's config files configure), from the workspace's own
 * installation. A tool named in `wanted` that the workspace does not have
 * runs from the suite's own copy, with a note.
 */
export function styleToolsFor(root: string, profile: ProfileName, wanted: readonly StyleToolName[]): StyleTools {
  const tools: StyleTool[] = []
  const notes: string[] = []
  for (const name of STYLE_TOOLS[profile] ?? []) {
    const explicit = wanted.includes(name)
    if (wanted.length ? !explicit : !configures(root, name)) continue
    const pkg = PACKAGES[name]
    if (pkg) {
      let bin = workspaceBin(root, pkg[0], pkg[1])
      if (!bin && explicit) {
        bin = suiteBin(pkg[0], pkg[1])
        if (bin) notes.push(`${name} is not installed in the workspace; style uses the suite's own ${name} ${bin.version}`)
      }
      if (!bin) {
        notes.push(`${name} is configured but not installed in the workspace; style does not run it`)
        continue
      }
      if (name === 'eslint') tools.push(new EslintTool(root, bin.argv, Number(bin.version.split('.')[0]) || 0))
      else if (name === 'prettier') tools.push(new PrettierTool(root, bin.argv))
      else tools.push(new BiomeTool(root, bin.argv))
      continue
    }
    if (name === 'gofmt') {
      const gofmt = onPath('gofmt')
      if (gofmt) tools.push(new GofmtTool(root, gofmt))
      else notes.push('gofmt is not on PATH; style does not check Go formatting')
    } else if (name === 'ruff') {
      const ruff = ['.venv/bin/ruff', 'venv/bin/ruff'].map(p => resolve(root, p)).find(p => existsSync(p)) ?? onPath('ruff')
      if (ruff) tools.push(new RuffTool(root, ruff))
      else notes.push('ruff is configured but not installed (no .venv/bin/ruff, none on PATH); style does not run it')
    }
  }
  return { tools, notes }
}
