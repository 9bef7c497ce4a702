/**
 * Real TypeScript 7 workspaces for the tests: the `create-vite` React +
 * TypeScript template installed from the npm registry (`createViteTemplate` in
 * `registry-installs.ts`), and a generated library with project references
 * that runs on the same installed TypeScript 7.
 */
import { cpSync, readdirSync, statSync, symlinkSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import { tempDir } from 'dsh-testkit'
import { writeFile } from './helpers.ts'
import { createViteTemplate } from './registry-installs.ts'

/** A fresh copy of the create-vite app (sources copied, `node_modules` symlinked to the cached install). */
export async function createViteApp(): Promise<string> {
  const source = await createViteTemplate()
  const root = tempDir('dsh-ts7-vite-')
  for (const entry of readdirSync(source)) {
    if (entry === 'node_modules') continue
    cpSync(join(source, entry), join(root, entry), { recursive: true })
  }
  symlinkSync(join(source, 'node_modules'), join(root, 'node_modules'))
  return root
}

/**
 * A generated TypeScript 7 library with project references: a solution
 * `tsconfig.json` over `packages/core` and `packages/app` (composite,
 * `app` references `core`), a pre-existing error in `packages/app/src/legacy.ts`,
 * and `scratch/notes.ts`, which no project includes. `node_modules` is the
 * create-vite install's (it holds TypeScript 7).
 */
export async function referencesLibrary(): Promise<string> {
  const source = await createViteTemplate()
  const root = tempDir('dsh-ts7-lib-')
  const files: Record<string, string> = {
    'package.json': JSON.stringify({ name: 'ts7-lib', private: true, type: 'module', devDependencies: { typescript: '~7.0.2' } }, null, 2),
    'tsconfig.base.json': JSON.stringify({ compilerOptions: { target: 'es2022', module: 'nodenext', strict: true, composite: true, skipLibCheck: true, types: [] } }, null, 2),
    'tsconfig.json': JSON.stringify({ files: [], references: [{ path: './packages/core' }, { path: './packages/app' }] }, null, 2),
    'packages/core/tsconfig.json': JSON.stringify({ extends: '../../tsconfig.base.json', compilerOptions: { rootDir: 'src', outDir: 'dist' }, include: ['src'] }, null, 2),
    'packages/core/src/money.ts': [
      'export type Cents = number',
      '',
      'export function add(a: Cents, b: Cents): Cents {',
      '  return a + b',
      '}',
      '',
      'export function format(c: Cents): string {',
      '  return `$${(c / 100).toFixed(2)}`',
      '}',
      '',
    ].join('\n'),
    'packages/app/tsconfig.json': JSON.stringify({ extends: '../../tsconfig.base.json', compilerOptions: { rootDir: 'src', outDir: 'dist' }, include: ['src'], references: [{ path: '../core' }] }, null, 2),
    'packages/app/src/cart.ts': [
      "import { add, format } from '../../core/src/money.js'",
      '',
      'export function total(items: number[]): string {',
      '  let sum = 0',
      '  for (const item of items) sum = add(sum, item)',
      '  return format(sum)',
      '}',
      '',
    ].join('\n'),
    'packages/app/src/legacy.ts': [
      '// A known, pre-existing problem the guard must tolerate.',
      "export const legacyCount: number = 'many'",
      '',
    ].join('\n'),
    'scratch/notes.ts': 'export const note = 1\n',
  }
  for (const [rel, text] of Object.entries(files)) writeFile(root, rel, text)
  symlinkSync(join(source, 'node_modules'), join(root, 'node_modules'))
  return root
}

/** Every file under `root` (workspace-relative) except `node_modules`, with size and mtime: to prove nothing was written. */
export function listTree(root: string): string[] {
  const out: string[] = []
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      const abs = join(dir, entry)
      if (entry === 'node_modules') continue
      const s = statSync(abs)
      if (s.isDirectory()) walk(abs)
      else out.push(`${relative(root, abs).split(sep).join('/')} ${s.size} ${s.mtimeMs}`)
    }
  }
  walk(root)
  return out.sort()
}
