import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { CommandCheck } from './checks/command.ts'
import { GoBuildCheck, GoTestCheck, GoVetCheck } from './checks/go.ts'
import { JestCheck } from './checks/jest.ts'
import { findPython, PythonAnnouncer, PythonCompileCheck, PytestCheck } from './checks/python.ts'
import { CargoCheck, CargoTestCheck } from './checks/rust.ts'
import { CoverageCheck } from './checks/coverage.ts'
import { StyleCheck } from './checks/style.ts'
import { TypecheckCheck } from './checks/typecheck.ts'
import { nativeTypecheck } from './checks/typecheck7.ts'
import { VitestCheck } from './checks/vitest.ts'
import { WarmVitestCheck } from './checks/vitest-warm.ts'
import type { Config, ProfileName } from './config.ts'
import { GoImpact } from './impact/go.ts'
import { PythonImpact } from './impact/python.ts'
import { styleToolsFor } from './style/detect.ts'
import { hasTsProjects } from './typescript/projects.ts'
import type { Check, ImpactSource, Profile } from './types.ts'
import { installedInWorkspace, resolveFromWorkspace } from './workspace-modules.ts'

export { installedInWorkspace, resolveFromWorkspace }

/** Profiles that apply to a workspace, from its files. */
export function detectProfiles(root: string): ProfileName[] {
  const has = (f: string) => existsSync(join(root, f))
  const found: ProfileName[] = []
  if (has('tsconfig.json') || has('package.json')) found.push('typescript')
  if (has('go.mod')) found.push('go')
  if (has('pyproject.toml') || has('setup.py') || has('setup.cfg') || has('pytest.ini')) found.push('python')
  if (has('Cargo.toml')) found.push('rust')
  return found
}

/** `[node, <vitest.mjs>]` for the workspace's own vitest, without a package runner. */
export function vitestCommand(root: string): string[] | undefined {
  const pkg = resolveFromWorkspace(root, 'vitest/package.json')
  if (pkg) {
    const bin = (JSON.parse(readFileSync(pkg, 'utf8')) as { bin?: string | Record<string, string> }).bin
    const rel = typeof bin === 'string' ? bin : bin?.vitest
    if (rel) return [process.execPath, resolve(dirname(pkg), rel)]
  }
  const shim = join(root, 'node_modules', '.bin', 'vitest')
  return existsSync(shim) ? [shim] : undefined
}

/** `[node, <jest>/bin/jest.js]` for the workspace's own Jest, without a package runner. */
export function jestCommand(root: string): string[] | undefined {
  const pkg = resolveFromWorkspace(root, 'jest/package.json')
  if (!pkg) return undefined
  const bin = (JSON.parse(readFileSync(pkg, 'utf8')) as { bin?: string | Record<string, string> }).bin
  const rel = typeof bin === 'string' ? bin : bin?.jest
  return rel ? [process.execPath, resolve(dirname(pkg), rel)] : undefined
}

const JEST_CONFIGS = ['jest.config.js', 'jest.config.ts', 'jest.config.mjs', 'jest.config.cjs', 'jest.config.cts', 'jest.config.mts', 'jest.config.json']
const VITEST_CONFIGS = ['vitest.config', 'vitest.workspace', 'vitest.projects'].flatMap(base => ['ts', 'mts', 'cts', 'js', 'mjs', 'cjs', 'json'].map(ext => `${base}.${ext}`))

/** Whether the workspace configures Jest: a `jest.config.*`, or a `jest` key in package.json. */
export function configuresJest(root: string): boolean {
  if (JEST_CONFIGS.some(f => existsSync(join(root, f)))) return true
  try {
    return 'jest' in (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as object)
  } catch {
    // No package.json, or not JSON: nothing configures Jest there.
    return false
  }
}

/** Whether the workspace configures vitest itself (a vitest config or workspace file). */
export function configuresVitest(root: string): boolean {
  return VITEST_CONFIGS.some(f => existsSync(join(root, f)))
}

/** Where the type-check's build-info cache lives in a vault. */
export function typescriptCacheDir(vault: string): string {
  return join(resolve(vault), 'tsbuildinfo')
}

export interface BuiltProfiles {
  profiles: Profile[]
  /** Why a detected profile contributes fewer checks than it could (shown once as a notice). */
  notes: string[]
}

/**
 * Build the checks pipeline for a workspace: profiles from Config, else
 * detected. Per profile, in order: compile / type-check, style (the style
 * mode), tests, coverage (the coverage mode) — so a cheap check that finds a
 * regression spares the tests. A mode that is off adds nothing. `vault`:
 * where caches are kept (the type-check's build-info files); absent: none.
 */
export function buildProfiles(root: string, config: Config, vault?: string): BuiltProfiles {
  const names = [...(config.profiles.length ? config.profiles : detectProfiles(root))]
  if ((config.compileCommand || config.testCommand) && !names.includes('generic')) names.push('generic')
  const notes: string[] = []
  const profiles: Profile[] = []
  const coverage = config.coverage.threshold > 0
  for (const name of new Set(names)) {
    const checks: Check[] = []
    const impact: ImpactSource[] = []
    const style = () => {
      if (config.style === 'off') return
      const found = styleToolsFor(root, name, config.styleTools)
      notes.push(...found.notes)
      if (found.tools.length) checks.push(new StyleCheck({ root, tools: found.tools, mode: config.style }))
    }
    switch (name) {
      case 'typescript': {
        const configPath = resolve(root, config.tsconfig)
        // The configured tsconfig and its references, or — a workspace without one — its packages' tsconfigs.
        if (hasTsProjects(root, configPath)) {
          let typescriptPath = resolveFromWorkspace(root, 'typescript')
          if (!typescriptPath) {
            typescriptPath = createRequire(import.meta.url).resolve('typescript')
            notes.push('typescript is not installed in the workspace; type-checking with the suite\'s own TypeScript')
          }
          const typecheck = nativeTypecheck(root, configPath) ?? new TypecheckCheck({ root, configPath, typescriptPath, maxHeapMb: config.typescriptMaxHeapMb, ...(vault ? { cacheDir: typescriptCacheDir(vault) } : {}) })
          checks.push(typecheck)
          impact.push(typecheck)
        }
        style()
        const jest = config.tests !== 'off' && configuresJest(root)
        if (jest) {
          const command = jestCommand(root)
          if (command) checks.push(new JestCheck({ root, command, mode: config.tests === 'all' ? 'all' : 'related', extraArgs: config.jestArgs }))
          else notes.push('the workspace configures Jest but jest is not installed in it; its tests are not run')
        }
        // A workspace that configures Jest runs vitest only when it configures vitest too.
        if (config.tests !== 'off' && (!jest || configuresVitest(root))) {
          const command = vitestCommand(root)
          const covered = coverage && !!command && installedInWorkspace(root, '@vitest/coverage-v8')
          if (coverage && command && !covered) notes.push('@vitest/coverage-v8 is not installed in the workspace; coverage is not measured')
          if (command) {
            const tests = new VitestCheck({ root, command, mode: config.tests, extraArgs: config.testArgs, coverage: covered })
            const vitestNode = config.warmTests && !covered ? resolveFromWorkspace(root, 'vitest/node') : undefined
            checks.push(vitestNode ? new WarmVitestCheck({ root, vitestNode, mode: config.tests, extraArgs: config.testArgs, cli: tests, maxRssMb: config.warmTestsMaxRssMb }) : tests)
            if (covered) checks.push(new CoverageCheck(tests, config.coverage))
          } else if (existsSync(join(root, 'package.json'))) notes.push('vitest is not installed in the workspace; tests are not run')
        }
        break
      }
      case 'go':
        checks.push(new GoBuildCheck(root), new GoVetCheck(root))
        impact.push(new GoImpact(root))
        style()
        if (config.tests !== 'off') {
          const tests = new GoTestCheck(root, config.tests, config.testArgs, coverage)
          checks.push(tests)
          if (coverage) checks.push(new CoverageCheck(tests, config.coverage))
        }
        break
      case 'python': {
        // One announcer: the first Python check to run says which interpreter it is.
        const python = new PythonAnnouncer(findPython(root, config.python))
        checks.push(new PythonCompileCheck(root, python))
        impact.push(new PythonImpact(root))
        style()
        if (config.tests !== 'off') checks.push(new PytestCheck(root, config.tests, config.testArgs, python))
        if (coverage) notes.push('coverage is not measured for Python (vitest and go test only)')
        break
      }
      case 'rust':
        checks.push(new CargoCheck(root))
        if (coverage) notes.push('coverage is not measured for Rust (vitest and go test only)')
        if (config.tests !== 'off') checks.push(new CargoTestCheck(root, config.testArgs))
        break
      case 'generic':
        if (config.compileCommand) checks.push(new CommandCheck('compile', config.compileCommand, root))
        if (config.testCommand && config.tests !== 'off') checks.push(new CommandCheck('test', config.testCommand, root))
        break
    }
    if (checks.length || impact.length) profiles.push({ name, checks, ...(config.impact !== 'off' && impact.length ? { impact } : {}) })
  }
  return { profiles, notes }
}
