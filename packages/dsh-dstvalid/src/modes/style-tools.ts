import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { binOf, workspaceBin, type StyleTool, type StyleToolName, type StyleToolSpec } from './style-tool.ts'

/*
 * The style mode's dispatch: which of a profile's style tools (each
 * toolchain lists its own) run in a workspace, found where.
 */

/** Whether the workspace's config files say it uses the tool. */
function configures(root: string, spec: StyleToolSpec): boolean {
  if (spec.configFiles.some(f => existsSync(join(root, f)))) return true
  const read = (f: string) => {
    try {
      return readFileSync(join(root, f), 'utf8')
    } catch {
      // No such file.
      return ''
    }
  }
  return spec.configuredIn?.(read) ?? false
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

export interface StyleTools {
  tools: StyleTool[]
  /** Why a tool is not used, or is used from the suite (shown once). */
  notes: string[]
}

/**
 * The style tools of one profile (`specs`, in the order they run): the ones
 * `wanted` names (empty: the ones the workspace's config files configure),
 * from the workspace's own installation. A tool named in `wanted` that the
 * workspace does not have runs from the suite's own copy, with a note.
 */
export function findStyleTools(root: string, specs: readonly StyleToolSpec[], wanted: readonly StyleToolName[]): StyleTools {
  const tools: StyleTool[] = []
  const notes: string[] = []
  for (const spec of specs) {
    const name = spec.name
    const explicit = wanted.includes(name)
    if (wanted.length ? !explicit : !configures(root, spec)) continue
    if (spec.npm) {
      let bin = workspaceBin(root, spec.npm.pkg, spec.npm.bin)
      if (!bin && explicit) {
        bin = suiteBin(spec.npm.pkg, spec.npm.bin)
        if (bin) notes.push(`${name} is not installed in the workspace; style uses the suite's own ${name} ${bin.version}`)
      }
      if (!bin) {
        notes.push(`${name} is configured but not installed in the workspace; style does not run it`)
        continue
      }
      tools.push(spec.npm.create(root, bin.argv, bin.version))
      continue
    }
    const found = spec.locate?.(root)
    if (typeof found === 'string') notes.push(found)
    else if (found) tools.push(found)
  }
  return { tools, notes }
}
