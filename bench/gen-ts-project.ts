/**
 * Deterministic generator of a TypeScript project for the dstvalid
 * benchmark: layered modules (core → model → service → feature) with a
 * realistic import graph (each module imports 1–4 modules of lower layers,
 * some type-only), and vitest tests whose expected values the generator
 * computes itself. Same seed, same project, byte for byte.
 *
 *   tsx bench/gen-ts-project.ts <dir> [--modules 520] [--tests 120] [--seed 1]
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export interface GenOptions {
  /** Modules in total (split over four layers). */
  modules: number
  /** Test files; each holds two tests. */
  testFiles: number
  seed: number
}

export interface GeneratedProject {
  root: string
  modules: { path: string; layer: number; index: number; deps: number[] }[]
  tests: number
}

export const LAYERS = ['core', 'model', 'service', 'feature'] as const
const SHARE = [0.2, 0.3, 0.3, 0.2]
const MOD = 1_000_003

/** mulberry32: a small, fast, seeded PRNG. */
export function prng(seed: number) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export interface Mod {
  id: number
  layer: number
  name: string
  path: string
  deps: number[]
  typeDeps: number[]
}

export function planModules(options: GenOptions): Mod[] {
  const rand = prng(options.seed)
  const pick = (from: number[], n: number) => {
    const pool = [...from]
    const out: number[] = []
    while (out.length < n && pool.length) out.push(pool.splice(Math.floor(rand() * pool.length), 1)[0]!)
    return out.sort((a, b) => a - b)
  }
  const mods: Mod[] = []
  LAYERS.forEach((layer, l) => {
    const count = l === LAYERS.length - 1 ? options.modules - mods.length : Math.round(options.modules * SHARE[l]!)
    for (let i = 0; i < count; i++) {
      const id = mods.length
      const lower = mods.filter(m => m.layer < l).map(m => m.id)
      const sameEarlier = mods.filter(m => m.layer === l).map(m => m.id)
      // Core modules import a little of the earlier core; higher layers mostly the layer below.
      const pool = l === 0 ? sameEarlier : [...lower.filter(d => mods[d]!.layer === l - 1), ...lower.filter(d => mods[d]!.layer < l - 1).slice(-20)]
      const n = l === 0 ? Math.floor(rand() * 3) : 1 + Math.floor(rand() * 4)
      const deps = pick(pool, n)
      const typeDeps = pick(pool.filter(d => !deps.includes(d)), rand() < 0.3 ? 1 : 0)
      mods.push({ id, layer: l, name: `${layer}${i}`, path: `src/${layer}/${layer}${i}.ts`, deps, typeDeps })
    }
  })
  return mods
}

function relImport(from: Mod, to: Mod): string {
  return from.layer === to.layer ? `./${to.name}.ts` : `../${LAYERS[to.layer]}/${to.name}.ts`
}

export function moduleSource(m: Mod, mods: Mod[]): string {
  const lines: string[] = [`// Generated module ${m.name} (layer ${LAYERS[m.layer]}).`]
  for (const d of m.deps) lines.push(`import { compute${d}, type Record${d} } from '${relImport(m, mods[d]!)}'`)
  for (const d of m.typeDeps) lines.push(`import type { Record${d} } from '${relImport(m, mods[d]!)}'`)
  lines.push('')
  lines.push(`export interface Record${m.id} {`)
  lines.push('  id: number')
  lines.push('  label: string')
  lines.push('  tags: readonly string[]')
  for (const d of [...m.deps, ...m.typeDeps].slice(0, 2)) lines.push(`  ref${d}?: Record${d}`)
  lines.push('}')
  lines.push('')
  lines.push(`export const LABEL_${m.id} = '${m.name}'`)
  lines.push('')
  lines.push(`/** Deterministic value of ${m.name} for \`x\`. */`)
  lines.push(`export function compute${m.id}(x: number): number {`)
  lines.push(`  let total = (x * ${(m.id % 7) + 1} + ${m.id}) % ${MOD}`)
  for (const d of m.deps) lines.push(`  total = (total + compute${d}(x)) % ${MOD}`)
  lines.push('  return total')
  lines.push('}')
  lines.push('')
  lines.push(`export function make${m.id}(id: number, tags: string[] = []): Record${m.id} {`)
  lines.push(`  const label = \`\${LABEL_${m.id}}-\${id}\``)
  lines.push('  const unique = [...new Set(tags)].sort()')
  lines.push('  return { id, label, tags: unique }')
  lines.push('}')
  lines.push('')
  lines.push(`export function summarise${m.id}(records: readonly Record${m.id}[]): { count: number; ids: number[]; tags: string[] } {`)
  lines.push('  const ids: number[] = []')
  lines.push('  const tags = new Set<string>()')
  lines.push('  for (const record of records) {')
  lines.push('    ids.push(record.id)')
  lines.push('    for (const tag of record.tags) tags.add(tag)')
  lines.push('  }')
  lines.push('  return { count: records.length, ids: ids.sort((a, b) => a - b), tags: [...tags].sort() }')
  lines.push('}')
  lines.push('')
  lines.push(`export class Store${m.id} {`)
  lines.push(`  private readonly items = new Map<number, Record${m.id}>()`)
  lines.push(`  add(record: Record${m.id}): this {`)
  lines.push('    this.items.set(record.id, record)')
  lines.push('    return this')
  lines.push('  }')
  lines.push(`  get(id: number): Record${m.id} | undefined {`)
  lines.push('    return this.items.get(id)')
  lines.push('  }')
  lines.push('  get size(): number {')
  lines.push('    return this.items.size')
  lines.push('  }')
  lines.push('}')
  return lines.join('\n') + '\n'
}

export function computeValue(mods: Mod[], memo: Map<string, number>, id: number, x: number): number {
  const key = `${id}:${x}`
  const hit = memo.get(key)
  if (hit !== undefined) return hit
  const m = mods[id]!
  let total = (x * ((m.id % 7) + 1) + m.id) % MOD
  for (const d of m.deps) total = (total + computeValue(mods, memo, d, x)) % MOD
  memo.set(key, total)
  return total
}

/** Write the project into `root` (created) and symlink `node_modules` to `nodeModules`. */
export function generateProject(root: string, options: GenOptions, nodeModules?: string): GeneratedProject {
  const mods = planModules(options)
  const rand = prng(options.seed * 7919)
  mkdirSync(root, { recursive: true })
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'bench-project', private: true, type: 'module' }, null, 2) + '\n')
  writeFileSync(join(root, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      target: 'ES2022', module: 'ESNext', moduleResolution: 'bundler', allowImportingTsExtensions: true,
      strict: true, noEmit: true, skipLibCheck: true, types: [],
    },
    include: ['src', 'tests'],
  }, null, 2) + '\n')
  writeFileSync(join(root, 'vitest.config.mjs'), "export default { test: { include: ['tests/**/*.test.ts'] } }\n")
  for (const m of mods) {
    mkdirSync(dirname(join(root, m.path)), { recursive: true })
    writeFileSync(join(root, m.path), moduleSource(m, mods))
  }
  mkdirSync(join(root, 'tests'), { recursive: true })
  const memo = new Map<string, number>()
  const upper = mods.filter(m => m.layer >= 2)
  for (let t = 0; t < options.testFiles; t++) {
    const target = upper[Math.floor(rand() * upper.length)]!
    const x = 1 + Math.floor(rand() * 50)
    writeFileSync(join(root, 'tests', `t${t}.test.ts`), [
      "import { describe, expect, it } from 'vitest'",
      `import { compute${target.id}, make${target.id}, summarise${target.id} } from '../${target.path}'`,
      '',
      `describe('${target.name}', () => {`,
      `  it('computes its value for ${x}', () => expect(compute${target.id}(${x})).toBe(${computeValue(mods, memo, target.id, x)}))`,
      `  it('summarises records', () => expect(summarise${target.id}([make${target.id}(2, ['b', 'a']), make${target.id}(1, ['a'])])).toEqual({ count: 2, ids: [1, 2], tags: ['a', 'b'] }))`,
      '})',
      '',
    ].join('\n'))
  }
  if (nodeModules) symlinkSync(nodeModules, join(root, 'node_modules'))
  return { root, modules: mods.map(m => ({ path: m.path, layer: m.layer, index: m.id, deps: m.deps })), tests: options.testFiles * 2 }
}

/**
 * A generator's command line, `tsx bench/<script> <dir> [--modules N] [--tests N] [--seed N]`:
 * runs `generate` (printing the line it returns) only when `script` (its
 * `import.meta.url`) is the file node was started with.
 */
export function generatorCli(script: string, defaults: GenOptions, generate: (dir: string, options: GenOptions, nodeModules: string) => string): void {
  const file = fileURLToPath(script)
  if (!process.argv[1] || resolve(process.argv[1]) !== file) return
  const args = process.argv.slice(2)
  const flag = (name: string, def: number) => {
    const i = args.indexOf(`--${name}`)
    return i === -1 ? def : Number(args[i + 1])
  }
  const dir = args.find(a => !a.startsWith('--') && !/^\d+$/.test(a))
  if (!dir) {
    console.error(`usage: tsx bench/${basename(file)} <dir> [--modules ${defaults.modules}] [--tests ${defaults.testFiles}] [--seed ${defaults.seed}]`)
    process.exit(2)
  }
  const options = { modules: flag('modules', defaults.modules), testFiles: flag('tests', defaults.testFiles), seed: flag('seed', defaults.seed) }
  console.log(generate(resolve(dir), options, join(dirname(file), '..', 'node_modules')))
}

generatorCli(import.meta.url, { modules: 520, testFiles: 120, seed: 1 }, (dir, options, nodeModules) => {
  const p = generateProject(dir, options, nodeModules)
  return `generated ${p.modules.length} modules and ${p.tests} tests in ${p.root}`
})
