import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { CommandCheck } from './checks/command.ts'
import { GoBuildCheck, GoTestCheck, GoVetCheck } from './checks/go.ts'
import { PythonCompileCheck, PytestCheck } from './checks/python.ts'
import { CargoCheck, CargoTestCheck } from './checks/rust.ts'
import { TypecheckCheck } from './checks/typecheck.ts'
import { VitestCheck } from './checks/vitest.ts'
import type { Config, ProfileName } from './config.ts'
import type { Check, Profile } from './types.ts'

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

/** Resolve a module the way the workspace would (its own node_modules), or undefined. */
export function resolveFromWorkspace(root: string, specifier: string): string | undefined {
  try {
    return createRequire(join(root, 'package.json')).resolve(specifier)
  } catch {
    // Not installed in the workspace.
    return undefined
  }
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

export interface BuiltProfiles {
  profiles: Profile[]
  /** Why a detected profile contributes fewer checks than it could (shown once as a notice). */
  notes: string[]
}

/** Build the checks pipeline for a workspace: profiles from Config, else detected. */
export function buildProfiles(root: string, config: Config): BuiltProfiles {
  const names = config.profiles.length ? config.profiles : detectProfiles(root)
  if ((config.compileCommand || config.testCommand) && !names.includes('generic')) names.push('generic')
  const notes: string[] = []
  const profiles: Profile[] = []
  for (const name of new Set(names)) {
    const checks: Check[] = []
    switch (name) {
      case 'typescript': {
        const configPath = resolve(root, config.tsconfig)
        if (existsSync(configPath)) {
          let typescriptPath = resolveFromWorkspace(root, 'typescript')
          if (!typescriptPath) {
            typescriptPath = createRequire(import.meta.url).resolve('typescript')
            notes.push('typescript is not installed in the workspace; type-checking with the suite\'s own TypeScript')
          }
          checks.push(new TypecheckCheck({ root, configPath, typescriptPath, maxHeapMb: config.typescriptMaxHeapMb }))
        }
        if (config.tests !== 'off') {
          const command = vitestCommand(root)
          if (command) checks.push(new VitestCheck({ root, command, mode: config.tests, extraArgs: config.testArgs }))
          else if (existsSync(join(root, 'package.json'))) notes.push('vitest is not installed in the workspace; tests are not run')
        }
        break
      }
      case 'go':
        checks.push(new GoBuildCheck(root), new GoVetCheck(root))
        if (config.tests !== 'off') checks.push(new GoTestCheck(root, config.tests, config.testArgs))
        break
      case 'python':
        checks.push(new PythonCompileCheck(root))
        if (config.tests !== 'off') checks.push(new PytestCheck(root, config.tests, config.testArgs))
        break
      case 'rust':
        checks.push(new CargoCheck(root))
        if (config.tests !== 'off') checks.push(new CargoTestCheck(root, config.testArgs))
        break
      case 'generic':
        if (config.compileCommand) checks.push(new CommandCheck('compile', config.compileCommand, root))
        if (config.testCommand && config.tests !== 'off') checks.push(new CommandCheck('test', config.testCommand, root))
        break
    }
    if (checks.length) profiles.push({ name, checks })
  }
  return { profiles, notes }
}
