import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join, resolve } from 'node:path'
import { resolveFromWorkspace } from '../../workspace-modules.ts'
import type { Toolchain } from '../toolchain.ts'
import { BiomeTool } from './biome.ts'
import { TypecheckCheck } from './check.ts'
import { EslintTool } from './eslint.ts'
import { PrettierTool } from './prettier.ts'
import { hasTsProjects } from '../js/workspace-packages.ts'

const SCRIPT_EXT = ['js', 'mjs', 'cjs', 'ts', 'mts', 'cts']

/** Whether `package.json` has `key` (a tool configured there). */
function packageKey(read: (file: string) => string, key: string): boolean {
  try {
    return key in (JSON.parse(read('package.json') || '{}') as Record<string, unknown>)
  } catch {
    // A package.json that does not parse configures nothing.
    return false
  }
}

/** Where the type-check's build-info cache lives in a vault. */
function typescriptCacheDir(vault: string): string {
  return join(resolve(vault), 'tsbuildinfo')
}

/**
 * TypeScript ≤ 6: the type-check (a warm builder program in a worker
 * thread, see `program.ts`), its program graph as change impact, and the
 * JavaScript/TypeScript style tools (ESLint, Prettier, Biome). Steps aside
 * for the type-check when `typescript7` took it.
 */
export const typescript: Toolchain = {
  name: 'typescript',
  profile: 'typescript',
  detect: root => existsSync(join(root, 'tsconfig.json')) || existsSync(join(root, 'package.json')),
  styleTools: [
    {
      name: 'eslint',
      configFiles: [...SCRIPT_EXT.map(e => `eslint.config.${e}`), '.eslintrc', ...['js', 'cjs', 'json', 'yaml', 'yml'].map(e => `.eslintrc.${e}`)],
      configuredIn: read => packageKey(read, 'eslintConfig'),
      npm: { pkg: 'eslint', bin: 'eslint', create: (root, argv, version) => new EslintTool(root, argv, Number(version.split('.')[0]) || 0) },
    },
    {
      name: 'prettier',
      configFiles: ['.prettierrc', ...['json', 'json5', 'yaml', 'yml', 'toml', ...SCRIPT_EXT].map(e => `.prettierrc.${e}`),
        ...SCRIPT_EXT.map(e => `prettier.config.${e}`)],
      configuredIn: read => packageKey(read, 'prettier'),
      npm: { pkg: 'prettier', bin: 'prettier', create: (root, argv) => new PrettierTool(root, argv) },
    },
    {
      name: 'biome',
      configFiles: ['biome.json', 'biome.jsonc'],
      npm: { pkg: '@biomejs/biome', bin: 'biome', create: (root, argv) => new BiomeTool(root, argv) },
    },
  ],
  contribute({ root, config, vault, note, claimed }) {
    const configPath = resolve(root, config.tsconfig)
    // The configured tsconfig and its references, or — a workspace without one — its packages' tsconfigs.
    if (claimed.has('typecheck') || !hasTsProjects(root, configPath)) return undefined
    let typescriptPath = resolveFromWorkspace(root, 'typescript')
    if (!typescriptPath) {
      try {
        typescriptPath = createRequire(import.meta.url).resolve('typescript')
      } catch {
        // A guard installed without its dependencies (an agent's plugin copy of the package).
        note('typescript is installed neither in the workspace nor beside the suite; no type-check')
        return undefined
      }
      note('typescript is not installed in the workspace; type-checking with the suite\'s own TypeScript')
    }
    const typecheck = new TypecheckCheck({ root, configPath, typescriptPath, maxHeapMb: config.typescriptMaxHeapMb,
      ...(vault ? { cacheDir: typescriptCacheDir(vault) } : {}) })
    claimed.add('typecheck')
    return { checks: [typecheck], impact: [typecheck] }
  },
}
