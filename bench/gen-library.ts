/**
 * A generated TypeScript library the size of a real one (the measured
 * real library's ~310 source files, ~5,000 tests), for `pnpm bench dstvalid`. The modules
 * are gen-ts-project's layered modules; the layout is a real library's:
 *
 * - `tsconfig.json` is a solution file (`"files": []`) referencing four
 *   composite projects that extend `tsconfig.base.json`: `build` (src),
 *   `unit`, `node` (with `@types/node`) and `integration` (tests, each
 *   referencing `build`);
 * - `vitest.config.mjs` has three `test.projects` (`unit`, `node`,
 *   `integration`), each with its own `include`;
 * - every test file holds one `describe` with 26 tests whose expected values
 *   the generator computed itself.
 *
 * Deterministic: same options, same bytes. `node_modules` is a symlink.
 *
 *   tsx bench/gen-library.ts <dir> [--modules 320] [--tests 160] [--seed 1]
 */
import { createHash } from 'node:crypto'
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { computeValue, generatorCli, moduleSource, planModules, prng, type Mod } from './gen-ts-project.ts'

export interface LibraryOptions {
  /** Source modules (src/, four layers). */
  modules: number
  /** Test files, split over the three vitest projects (1/2 unit, 3/10 node, 1/5 integration). */
  testFiles: number
  seed: number
}

export interface GeneratedLibrary {
  root: string
  modules: { path: string; layer: number; index: number }[]
  /** Test files and tests per vitest project. */
  projects: { name: string; tsconfig: string; testFiles: number; tests: number }[]
  testFiles: number
  tests: number
  /** Every tsconfig, workspace-relative: the solution file first. */
  tsconfigs: string[]
}

/** Tests in every test file. */
export const TESTS_PER_FILE = 26
const XS = 24

const json = (value: unknown) => JSON.stringify(value, null, 2) + '\n'

function write(root: string, rel: string, text: string) {
  mkdirSync(dirname(join(root, rel)), { recursive: true })
  writeFileSync(join(root, rel), text)
}

/** Write the library into `root` and symlink `node_modules` to `nodeModules`. */
export function generateLibrary(root: string, options: LibraryOptions, nodeModules?: string): GeneratedLibrary {
  const mods = planModules({ modules: options.modules, testFiles: options.testFiles, seed: options.seed })
  const rand = prng(options.seed * 104729)
  mkdirSync(root, { recursive: true })
  write(root, 'package.json', json({ name: 'bench-library', private: true, type: 'module', scripts: { typecheck: 'tsc -b', test: 'vitest run' } }))
  write(root, '.gitignore', 'node_modules\n.out\n.dsh\n')
  write(root, 'tsconfig.base.json', json({
    compilerOptions: {
      target: 'ES2022', module: 'ESNext', moduleResolution: 'bundler', allowImportingTsExtensions: true,
      strict: true, skipLibCheck: true, types: [], composite: true, declaration: true, emitDeclarationOnly: true,
    },
  }))
  const projects = [
    { name: 'unit', share: 0.5, types: [] as string[] },
    { name: 'node', share: 0.3, types: ['node'] },
    { name: 'integration', share: 0.2, types: [] as string[] },
  ]
  write(root, 'tsconfig.build.json', json({
    extends: './tsconfig.base.json',
    compilerOptions: { rootDir: 'src', outDir: '.out/build', tsBuildInfoFile: '.out/build.tsbuildinfo' },
    include: ['src'],
  }))
  for (const p of projects) {
    write(root, `tsconfig.${p.name}.json`, json({
      extends: './tsconfig.base.json',
      compilerOptions: { rootDir: '.', outDir: `.out/${p.name}`, tsBuildInfoFile: `.out/${p.name}.tsbuildinfo`, types: p.types },
      include: [`test/${p.name}`],
      references: [{ path: './tsconfig.build.json' }],
    }))
  }
  write(root, 'tsconfig.json', json({ files: [], references: [{ path: './tsconfig.build.json' }, ...projects.map(p => ({ path: `./tsconfig.${p.name}.json` }))] }))
  write(root, 'vitest.config.mjs', [
    'export default {',
    '  test: {',
    '    projects: [',
    ...projects.map(p => `      { test: { name: '${p.name}', include: ['test/${p.name}/**/*.test.ts'] } },`),
    '    ],',
    '  },',
    '}',
    '',
  ].join('\n'))
  for (const m of mods) write(root, m.path, moduleSource(m, mods))

  const memo = new Map<string, number>()
  // Unit tests target any layer above core; integration tests the top; node tests the middle.
  const pools: Record<string, Mod[]> = {
    unit: mods.filter(m => m.layer >= 1),
    node: mods.filter(m => m.layer === 1 || m.layer === 2),
    integration: mods.filter(m => m.layer === 3),
  }
  const summary: GeneratedLibrary['projects'] = []
  let made = 0
  projects.forEach((p, i) => {
    const count = i === projects.length - 1 ? options.testFiles - made : Math.round(options.testFiles * p.share)
    for (let t = 0; t < count; t++) {
      const pool = pools[p.name]!
      const target = pool[Math.floor(rand() * pool.length)]!
      write(root, `test/${p.name}/${target.name}-${t}.test.ts`, testSource(p.name, target, mods, memo, rand))
    }
    made += count
    summary.push({ name: p.name, tsconfig: `tsconfig.${p.name}.json`, testFiles: count, tests: count * TESTS_PER_FILE })
  })
  if (nodeModules) symlinkSync(nodeModules, join(root, 'node_modules'))
  return {
    root,
    modules: mods.map(m => ({ path: m.path, layer: m.layer, index: m.id })),
    projects: summary,
    testFiles: options.testFiles,
    tests: options.testFiles * TESTS_PER_FILE,
    tsconfigs: ['tsconfig.json', 'tsconfig.base.json', 'tsconfig.build.json', ...projects.map(p => `tsconfig.${p.name}.json`)],
  }
}

function testSource(project: string, target: Mod, mods: Mod[], memo: Map<string, number>, rand: () => number): string {
  const id = target.id
  const from = `../../${target.path}`
  const xs = new Set<number>()
  while (xs.size < XS) xs.add(1 + Math.floor(rand() * 1000))
  const lines = [
    "import { describe, expect, it } from 'vitest'",
    ...(project === 'node' ? ["import { createHash } from 'node:crypto'"] : []),
    `import { compute${id}, LABEL_${id}, make${id}, summarise${id} } from '${from}'`,
    '',
    `describe('${target.name} (${project})', () => {`,
  ]
  for (const x of [...xs].sort((a, b) => a - b)) {
    lines.push(`  it('computes its value for ${x}', () => expect(compute${id}(${x})).toBe(${computeValue(mods, memo, id, x)}))`)
  }
  lines.push(`  it('summarises records', () => expect(summarise${id}([make${id}(2, ['b', 'a']), make${id}(1, ['a'])])).toEqual({ count: 2, ids: [1, 2], tags: ['a', 'b'] }))`)
  if (project === 'node') {
    const digest = createHash('sha256').update(target.name).digest('hex').slice(0, 12)
    lines.push(`  it('labels deterministically', () => expect(createHash('sha256').update(LABEL_${id}).digest('hex').slice(0, 12)).toBe('${digest}'))`)
  } else {
    lines.push(`  it('labels records', () => expect(make${id}(7).label).toBe(\`\${LABEL_${id}}-7\`))`)
  }
  lines.push('})', '')
  return lines.join('\n')
}

generatorCli(import.meta.url, { modules: 320, testFiles: 160, seed: 1 }, (dir, options, nodeModules) => {
  const lib = generateLibrary(dir, options, nodeModules)
  return `generated ${lib.modules.length} modules, ${lib.testFiles} test files with ${lib.tests} tests (${lib.projects.map(p => `${p.name} ${p.testFiles}`).join(', ')}) in ${lib.root}`
})
