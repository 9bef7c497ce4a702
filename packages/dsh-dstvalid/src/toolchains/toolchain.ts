import type { Config, ProfileName } from '../config.ts'
import type { CoverageSource } from '../modes/coverage.ts'
import type { StyleToolSpec } from '../modes/style-tool.ts'
import type { Check, ImpactSource } from '../types.ts'

/*
 * What a toolchain is: one entry of the list `profiles.ts` walks. A
 * toolchain folder (`toolchains/<name>/`) exports one of these from its
 * `index.ts`; everything else in the folder is its own.
 */

/** A workspace as a toolchain sees it while the checks pipeline is built. */
export interface ToolchainWorkspace {
  /** Absolute. */
  readonly root: string
  readonly config: Config
  /** Where caches are kept (the type-check's build-info files); absent: none. */
  readonly vault?: string
  /** Why the toolchain contributes fewer checks than it could (shown once, as a warning). */
  note(text: string): void
  /**
   * Roles an earlier toolchain of the same profile took (`typecheck`,
   * `tests`): a later one that would duplicate them steps aside.
   */
  readonly claimed: Set<string>
}

/** What one toolchain adds to its profile. */
export interface Contribution {
  /** Compile / type-check checks: they run before the profile's style check. */
  checks?: Check[]
  /** Test checks: after the style check. */
  tests?: Check[]
  /** Change impact from the toolchain's own import graph (used when the impact mode is on). */
  impact?: ImpactSource[]
  /** The test run that measures coverage (the coverage mode judges it right after the tests). */
  coverage?: CoverageSource
}

export interface Toolchain {
  /** The folder's name: `typescript`, `vitest`, `go` … */
  readonly name: string
  /** The profile (Config `profiles`) it belongs to; a profile's toolchains run in list order. */
  readonly profile: ProfileName
  /** Whether a workspace's files make its profile detected (Config `profiles` empty). One toolchain of a profile saying so is enough. */
  detect?(root: string): boolean
  /** Whether the Config alone turns its profile on, detected or not (the generic commands). */
  configured?(config: Config): boolean
  /** The toolchain's formatters and linters, in the order the style mode runs them. */
  readonly styleTools?: readonly StyleToolSpec[]
  /** Its checks for this workspace; undefined or empty: it does not apply here. */
  contribute(ws: ToolchainWorkspace): Contribution | undefined
}
