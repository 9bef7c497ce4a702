import type { Config, ProfileName } from './config.ts'
import { CoverageCheck } from './modes/coverage.ts'
import { StyleCheck } from './modes/style.ts'
import type { StyleToolName } from './modes/style-tool.ts'
import { findStyleTools, type StyleTools } from './modes/style-tools.ts'
import { generic } from './toolchains/generic/index.ts'
import { go } from './toolchains/go/index.ts'
import { jest } from './toolchains/jest/index.ts'
import { nodeTest } from './toolchains/node-test/index.ts'
import { python } from './toolchains/python/index.ts'
import { rust } from './toolchains/rust/index.ts'
import type { Toolchain } from './toolchains/toolchain.ts'
import { typescript } from './toolchains/typescript/index.ts'
import { typescript7 } from './toolchains/typescript7/index.ts'
import { vitest } from './toolchains/vitest/index.ts'
import type { Check, ImpactSource, Profile } from './types.ts'

/**
 * Every toolchain, in priority order: a profile's toolchains contribute in
 * this order, and one that takes a role (the type-check, the tests) makes a
 * later one of the same profile step aside. A new toolchain is one folder
 * under `toolchains/` and one entry here.
 */
export const TOOLCHAINS: readonly Toolchain[] = [typescript7, typescript, jest, nodeTest, vitest, go, python, rust, generic]

/** Profiles that apply to a workspace, from its files. */
export function detectProfiles(root: string): ProfileName[] {
  const found: ProfileName[] = []
  for (const t of TOOLCHAINS) if (!found.includes(t.profile) && t.detect?.(root)) found.push(t.profile)
  return found
}

/**
 * The style tools of one profile (every toolchain of it lists its own): the
 * ones `wanted` names (empty: the ones the workspace's config files
 * configure), from the workspace's own installation.
 */
export function styleToolsFor(root: string, profile: ProfileName, wanted: readonly StyleToolName[]): StyleTools {
  return findStyleTools(root, TOOLCHAINS.filter(t => t.profile === profile).flatMap(t => t.styleTools ?? []), wanted)
}

export interface BuiltProfiles {
  profiles: Profile[]
  /** Why a detected profile contributes fewer checks than it could (shown once as a notice). */
  notes: string[]
}

/**
 * Build the checks pipeline for a workspace: profiles from Config, else
 * detected. Per profile, walking its toolchains in list order: compile /
 * type-check, style (the style mode), tests, each followed by coverage (the
 * coverage mode) — so a cheap check that finds a regression spares the
 * tests. A mode that is off adds nothing. `vault`: where caches are kept
 * (the type-check's build-info files); absent: none.
 */
export function buildProfiles(root: string, config: Config, vault?: string): BuiltProfiles {
  const names = [...(config.profiles.length ? config.profiles : detectProfiles(root))]
  for (const t of TOOLCHAINS) if (t.configured?.(config) && !names.includes(t.profile)) names.push(t.profile)
  const notes: string[] = []
  const profiles: Profile[] = []
  for (const name of new Set(names)) {
    const claimed = new Set<string>()
    const workspace = { root, config, ...(vault ? { vault } : {}), note: (text: string) => { notes.push(text) }, claimed }
    const contributions = TOOLCHAINS.filter(t => t.profile === name).map(t => t.contribute(workspace) ?? {})
    const checks: Check[] = contributions.flatMap(c => c.checks ?? [])
    const impact: ImpactSource[] = contributions.flatMap(c => c.impact ?? [])
    if (config.style !== 'off') {
      const found = styleToolsFor(root, name, config.styleTools)
      notes.push(...found.notes)
      if (found.tools.length) checks.push(new StyleCheck({ root, tools: found.tools, mode: config.style }))
    }
    for (const c of contributions) {
      checks.push(...c.tests ?? [])
      if (c.coverage && config.coverage.threshold > 0) checks.push(new CoverageCheck(c.coverage, config.coverage))
    }
    if (checks.length || impact.length) profiles.push({ name, checks, ...(config.impact !== 'off' && impact.length ? { impact } : {}) })
  }
  return { profiles, notes }
}
