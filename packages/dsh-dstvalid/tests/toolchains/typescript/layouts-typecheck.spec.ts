/**
 * The type-check on the layouts real repositories have (dsh-testkit's layouts.ts):
 * a create-vite solution tsconfig, a library with build/spec configs over an
 * `extends` base, a pnpm monorepo without a root tsconfig. Real TypeScript,
 * real files; tests are off (the test runner is not the point here).
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { TsWorkerClient } from 'dsh-dstvalid'
import { tempDir } from 'dsh-testkit'
import { generateLayout, type Edit, type Layout, type LayoutKind, type LayoutOptions } from 'dsh-testkit'
import { bootForSuite, type Harness, runs, STOPPED } from '../../helpers.ts'

// A cold check of four programs is a few seconds alone, and over a minute on a machine shared by many.
vi.setConfig({ testTimeout: 240_000, hookTimeout: 240_000 })

/**
 * For the tests of the enclosing describe: a generated layout and a harness
 * on it (tests off), made before the first test, disposed after the last.
 */
function onLayout(kind: LayoutKind, options: LayoutOptions = {}): { readonly l: Layout; readonly h: Harness } {
  let l: Layout | undefined
  const suite = bootForSuite(() => (l = generateLayout(kind, tempDir(`dsh-layout-${kind}-`), options)).root, { tests: 'off' })
  return { get l() { return l! }, get h() { return suite.h } }
}

const read = (l: Layout, rel: string) => readFileSync(join(l.root, rel), 'utf8')

/** Every file of a layout's tree that the guard could touch, for byte-for-byte comparisons. */
function snapshotOf(l: Layout, files: string[]): Record<string, string | null> {
  return Object.fromEntries(files.map(f => [f, existsSync(join(l.root, f)) ? read(l, f) : null]))
}

async function expectLayoutRolledBack(h: Harness, l: Layout, call: () => Promise<{ content: unknown; isError?: boolean }>, touched: string[], firstLine: string) {
  const before = snapshotOf(l, touched)
  const result = await call()
  expect(result.isError).toBe(true)
  expect(String(result.content).split('\n')[0]).toBe(firstLine)
  expect(snapshotOf(l, touched)).toEqual(before)
  expect(h.results.at(-1)).toMatchObject({ check: 'typecheck', outcome: 'rolled-back' })
  return String(result.content)
}

const edit = (h: Harness, e: Edit) => h.exec('edit_file', { ...e })

/** The layout's good edit unrelated to its pre-existing error is kept. */
async function expectUnrelatedGoodKept({ l, h }: { l: Layout; h: Harness }) {
  const good = l.preexisting!.unrelatedGood
  expect(await edit(h, good)).toEqual({ content: `edited ${good.path}` })
}

describe('create-vite app: solution tsconfig → tsconfig.app.json + tsconfig.node.json', () => {
  const suite = onLayout('vite-app')

  it('checks both projects with their own options, keeps a good edit, and writes no build info', async () => {
    const { l, h } = suite
    expect(await edit(h, l.scenarios.good)).toEqual({ content: `edited ${l.scenarios.good.path}` })
    expect(read(l, l.scenarios.good.path)).toContain('for (const line of lines)')
    expect(runs(h.session).map(r => [r.argv, r.outcome])).toEqual([
      [['tsc', '-b', '--noEmit', 'tsconfig.app.json', 'tsconfig.node.json', '(in-process, cold)'], 'pass'],
      [['tsc', '-b', '--noEmit', 'tsconfig.app.json', 'tsconfig.node.json', '(in-process, incremental)'], 'pass'],
    ])
    expect(h.results.map(r => [r.check, r.outcome])).toEqual([['typecheck', 'pass']])
    expect(existsSync(join(l.root, 'node_modules', '.tmp', 'tsconfig.app.tsbuildinfo'))).toBe(false)
  })

  it('rolls back an export rename that breaks importers, with the exact message', async () => {
    const { l, h } = suite
    const message = await expectLayoutRolledBack(h, l, () => edit(h, l.scenarios.renameExport), [l.hub.file], `rolled back: typecheck failed after edit_file on ${l.hub.file}`)
    expect(message).toBe([
      'rolled back: typecheck failed after edit_file on src/lib/money.ts',
      // The first importer's error decides: the other importers are not checked.
      `src/lib/receipt.ts:2 TS2305 Module '"./money"' has no exported member 'formatCents'.`,
      STOPPED,
    ].join('\n'))
  })

  it('rolls back a syntax error in the widely imported file', async () => {
    const { l, h } = suite
    const message = await expectLayoutRolledBack(h, l, () => edit(h, l.scenarios.syntaxError), [l.hub.file], `rolled back: typecheck failed after edit_file on ${l.hub.file}`)
    expect(message).toContain('src/lib/money.ts:13 TS1109 Expression expected.')
  })

  it('rolls back a new file with a type error (the file is deleted again)', async () => {
    const { l, h } = suite
    const file = l.scenarios.newFileTypeError
    await expectLayoutRolledBack(h, l, () => h.exec('write_file', { ...file }), [file.path], `rolled back: typecheck failed after write_file on ${file.path}`)
    expect(existsSync(join(l.root, file.path))).toBe(false)
  })

  it('a file in no program: parsed (a syntax error is rolled back), and said once', async () => {
    const { l, h } = suite
    const first = await h.exec('write_file', { path: 'scripts/release.ts', content: 'export const tag: string = 1\n' })
    expect(first).toEqual({ content: 'created scripts/release.ts (29 bytes)\nnot type-checked: scripts/release.ts is in no tsconfig program' })
    const again = await h.exec('edit_file', { path: 'scripts/release.ts', old_string: '= 1', new_string: '= 2' })
    expect(again).toEqual({ content: 'edited scripts/release.ts' })
    const before = read(l, 'scripts/release.ts')
    const broken = await h.exec('edit_file', { path: 'scripts/release.ts', old_string: '= 2', new_string: '= (2' })
    expect(broken).toEqual({ isError: true, content: "rolled back: typecheck failed after edit_file on scripts/release.ts\nscripts/release.ts:2 TS1005 ')' expected." })
    expect(read(l, 'scripts/release.ts')).toBe(before)
  })

  it('many files in no program (a shell call generated them): one line with their count and the first eight', async () => {
    const { h } = suite
    const r = await h.exec('bash', { command: 'mkdir -p scripts/gen && for i in $(seq 10 21); do echo "export const v$i = $i" > scripts/gen/m$i.ts; done' })
    const listed = Array.from({ length: 8 }, (_, i) => `scripts/gen/m${10 + i}.ts`).join(', ')
    expect(r.content).toBe(`[exit code 0]\nnot type-checked: 12 files are in no tsconfig program: ${listed} and 4 more`)
  })
})

describe('create-vite app with a pre-existing type error', () => {
  const suite = onLayout('vite-app', { preexisting: true })

  it('keeps an unrelated good edit and rolls back a new error', async () => {
    await expectUnrelatedGoodKept(suite)
    const { l, h } = suite
    const pre = l.preexisting!
    const message = await expectLayoutRolledBack(h, l, () => edit(h, pre.newError), [pre.newError.path], `rolled back: typecheck failed after edit_file on ${pre.newError.path}`)
    expect(message.split('\n').slice(1)).toEqual(["src/lib/receipt.ts:7 TS2322 Type 'string' is not assignable to type 'number'.", STOPPED])
  })
})

describe('library: solution → build + spec configs over an extends base', () => {
  const suite = onLayout('library', { preexisting: true })

  it('judges src in the build project and test files through the spec project (sources of references, nothing built)', async () => {
    await expectUnrelatedGoodKept(suite)
    const { l, h } = suite
    expect(runs(h.session).map(r => r.argv)).toEqual([
      ['tsc', '-b', '--noEmit', 'tsconfig.build.json', 'tsconfig.spec.json', '(in-process, cold)'],
      ['tsc', '-b', '--noEmit', 'tsconfig.build.json', 'tsconfig.spec.json', '(in-process, incremental)'],
    ])
    // The pre-existing error is known; nothing (dist/, build info) was written.
    expect(h.ctx.dstvalid.guardFor(l.root).accepted('typecheck')!.problems.map(p => `${p.file} ${p.code}`)).toEqual(['src/legacy.ts TS2322'])
    expect(existsSync(join(l.root, 'dist'))).toBe(false)
    expect(existsSync(join(l.root, 'dist-spec'))).toBe(false)
  })

  it('rolls back an export rename (importers in src and in test), a syntax error and a new error', async () => {
    const { l, h } = suite
    const rename = await expectLayoutRolledBack(h, l, () => edit(h, l.scenarios.renameExport), [l.hub.file], 'rolled back: typecheck failed after edit_file on src/tokens.ts')
    expect(rename.split('\n').slice(1)).toEqual([
      `src/parser.ts:2 TS2305 Module '"./tokens.js"' has no exported member 'tokenize'.`,
      STOPPED,
    ])
    await expectLayoutRolledBack(h, l, () => edit(h, l.scenarios.syntaxError), [l.hub.file], 'rolled back: typecheck failed after edit_file on src/tokens.ts')
    await expectLayoutRolledBack(h, l, () => edit(h, l.preexisting!.newError), [l.preexisting!.newError.path], 'rolled back: typecheck failed after edit_file on src/evaluate.ts')
  })
})

describe('pnpm monorepo: per-package tsconfigs, no root tsconfig', () => {
  const suite = onLayout('monorepo', { preexisting: true })

  it('finds every package project and keeps an unrelated good edit next to a pre-existing error', async () => {
    await expectUnrelatedGoodKept(suite)
    const { l, h } = suite
    expect(runs(h.session)[0]!.argv).toEqual(['tsc', '-b', '--noEmit', 'packages/app/tsconfig.json', 'packages/core/tsconfig.json', 'packages/model/tsconfig.json', 'packages/service/tsconfig.json', '(in-process, cold)'])
    expect(h.results.map(r => [r.check, r.outcome])).toEqual([['typecheck', 'pass']])
  })

  it('rolls back an export rename in core, a syntax error in it, a broken cross-package import, a new file with a type error, and a new error', async () => {
    const { l, h } = suite
    const s = l.scenarios
    const rename = await expectLayoutRolledBack(h, l, () => edit(h, s.renameExport), [l.hub.file], `rolled back: typecheck failed after edit_file on ${l.hub.file}`)
    expect(rename.split('\n').slice(1)).toEqual([`packages/core/src/index.ts:1 TS2305 Module '"./ids"' has no exported member 'makeId'.`, STOPPED])
    await expectLayoutRolledBack(h, l, () => edit(h, s.syntaxError), [l.hub.file], `rolled back: typecheck failed after edit_file on ${l.hub.file}`)
    const cross = await expectLayoutRolledBack(h, l, () => edit(h, s.brokenCrossPackageImport!), [s.brokenCrossPackageImport!.path], 'rolled back: typecheck failed after edit_file on packages/app/src/report.ts')
    expect(cross.split('\n').slice(1)).toEqual([`packages/app/src/report.ts:2 TS2305 Module '"@mono/service"' has no exported member 'Ledger'.`, STOPPED])
    await expectLayoutRolledBack(h, l, () => h.exec('write_file', { ...s.newFileTypeError }), [s.newFileTypeError.path], `rolled back: typecheck failed after write_file on ${s.newFileTypeError.path}`)
    await expectLayoutRolledBack(h, l, () => edit(h, l.preexisting!.newError), [l.preexisting!.newError.path], 'rolled back: typecheck failed after edit_file on packages/app/src/report.ts')
  })

  // In a worker, as the guard runs it: a cold check of four programs must not block this thread.
  it('shares parsed files between the package programs; a deleted file that comes back is found again by every program', async () => {
    const { l } = suite
    const client = new TsWorkerClient({ root: l.root, configPath: join(l.root, 'tsconfig.json'), typescriptPath: createRequire(join(l.root, 'package.json')).resolve('typescript') }, { maxHeapMb: 0 })
    try {
      const check = async (changed: string[]) => {
        const answer = await client.check(changed, 240_000)
        if (answer.status !== 'ok') throw new Error(`check ${answer.status}`)
        return answer.result
      }
      const first = await check([])
      expect(first.projects).toHaveLength(4)
      // Four programs that all read core (and the same libs): each file parsed once.
      expect(first.documents).toBe(first.files)
      expect(first.programFiles).toBeGreaterThan(3 * first.documents)

      // No stale failed resolution: programs whose roots did not change find the restored file again.
      const user = join(l.root, 'packages/model/src/user.ts')
      const keys = (r: { diagnostics: { file: string; code: number }[] }) => r.diagnostics.map(d => `${d.file} TS${d.code}`).sort()
      const text = readFileSync(user, 'utf8')
      rmSync(user)
      expect(keys(await check([user]))).toEqual(expect.arrayContaining(['packages/model/src/order.ts TS2307', 'packages/model/src/index.ts TS2307']))
      writeFileSync(user, text)
      expect(keys(await check([user]))).toEqual(keys(first))
    } finally {
      await client.dispose()
    }
  })
})
