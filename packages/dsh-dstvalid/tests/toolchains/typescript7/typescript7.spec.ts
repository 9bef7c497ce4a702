import { execFileSync } from 'node:child_process'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import { Guard, Typecheck7Check, nativeTscCommand, workspaceTypescript, type GuardIO, type RunRecord } from 'dsh-dstvalid'
import { boot, expectRolledBack, runs } from '../../helpers.ts'
import { CREATE_VITE, createViteTemplate } from '../../registry-installs.ts'
import { createViteApp, listTree, referencesLibrary } from '../../ts7-workspaces.ts'

// The first run on a fresh clone installs create-vite's template from the registry (cached afterwards).
beforeAll(async () => { await createViteTemplate() }, 300_000)

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe(`TypeScript 7: the create-vite ${CREATE_VITE} React + TypeScript app`, () => {
  it('is judged with the workspace\'s own TypeScript 7: a good edit kept, useState<string>(0) rolled back with TS 7\'s TS2345', async () => {
    const root = await createViteApp()
    expect(workspaceTypescript(root)).toMatchObject({ major: 7 })
    const h = await boot(root, { tests: 'off', impact: 'result' })

    const good = await h.exec('edit_file', { path: 'src/App.tsx', old_string: '<h1>Get started</h1>', new_string: '<h1>Get started now</h1>' })
    expect(good).toEqual({ content: 'edited src/App.tsx\nimpact: 1 file imports src/App.tsx (nearest first): src/main.tsx' })
    expect(runs(h.session).map(r => [r.argv, r.outcome])).toEqual([
      [['tsc', '-b', 'tsconfig.json', '(tsc --api, cold)'], 'pass'],
      [['tsc', '-b', 'tsconfig.json', '(tsc --api, warm)'], 'pass'],
    ])

    await expectRolledBack(h, 'edit_file', { path: 'src/App.tsx', old_string: 'useState(0)', new_string: 'useState<string>(0)' },
      'rolled back: typecheck failed after edit_file on src/App.tsx',
      "src/App.tsx:8 TS2345 Argument of type 'number' is not assignable to parameter of type 'string | (() => string)'.",
    )
    expect(h.results.map(r => [r.check, r.outcome])).toEqual([['typecheck', 'pass'], ['typecheck', 'rolled-back']])
  }, 120_000)

  it('agrees with the app\'s own `tsc -b` (the build script) on the same broken edit', async () => {
    const root = await createViteApp()
    // `tsc -b` writes its build info into node_modules/.tmp: the shared cached install's, so clear it before and after.
    const buildInfo = join(root, 'node_modules', '.tmp')
    rmSync(buildInfo, { recursive: true, force: true })
    onTestFinished(() => rmSync(buildInfo, { recursive: true, force: true }))
    const app = join(root, 'src', 'App.tsx')
    execFileSync('sed', ['-i', 's/useState(0)/useState<string>(0)/', app])
    let output = ''
    try {
      execFileSync(join(root, 'node_modules', '.bin', 'tsc'), ['-b', '--pretty', 'false'], { cwd: root, encoding: 'utf8' })
    } catch (error) {
      output = String((error as { stdout?: string }).stdout)
    }
    expect(output.trim()).toBe("src/App.tsx(8,46): error TS2345: Argument of type 'number' is not assignable to parameter of type 'string | (() => string)'.")
    expect(readFileSync(app, 'utf8')).toContain('useState<string>(0)')
  }, 60_000)
})

describe('TypeScript 7: a library with project references', () => {
  it('keeps a good edit, rolls back a type error, a syntax error and an export rename with TS 7\'s own messages, tolerates a pre-existing error, and ignores a file in no program', async () => {
    const root = await referencesLibrary()
    const h = await boot(root, { tests: 'off' })
    const tree = listTree(root)

    const good = await h.exec('edit_file', { path: 'packages/core/src/money.ts', old_string: 'return a + b', new_string: 'return b + a' })
    expect(good).toEqual({ content: 'edited packages/core/src/money.ts' })

    await expectRolledBack(h, 'edit_file', { path: 'packages/core/src/money.ts', old_string: 'add(a: Cents, b: Cents)', new_string: 'add(a: Cents, b: string)' },
      'rolled back: typecheck failed after edit_file on packages/core/src/money.ts',
      "packages/core/src/money.ts:4 TS2322 Type 'string' is not assignable to type 'number'.",
      "packages/app/src/cart.ts:5 TS2345 Argument of type 'number' is not assignable to parameter of type 'string'.",
    )
    await expectRolledBack(h, 'edit_file', { path: 'packages/app/src/cart.ts', old_string: 'let sum = 0', new_string: 'let sum = (0' },
      'rolled back: typecheck failed after edit_file on packages/app/src/cart.ts',
      "packages/app/src/cart.ts:5 TS1005 ')' expected.",
    )
    await expectRolledBack(h, 'edit_file', { path: 'packages/core/src/money.ts', old_string: 'export function format(', new_string: 'export function formatCents(' },
      'rolled back: typecheck failed after edit_file on packages/core/src/money.ts',
      // The API server reads `core` from its sources, as the editor does (`tsc -b`, on core's built declarations, says TS2724 "… Did you mean 'formatCents'?").
      'packages/app/src/cart.ts:1 TS2305 Module \'"../../core/src/money.js"\' has no exported member \'format\'.',
    )

    // Not in any project: nothing to type-check it with, so nothing new is found.
    const scratch = await h.exec('edit_file', { path: 'scratch/notes.ts', old_string: 'export const note = 1', new_string: "export const note: number = 'one'" })
    expect(scratch).toEqual({ content: 'edited scratch/notes.ts' })

    // The pre-existing error in legacy.ts is in the accepted state: an unrelated good edit is kept.
    const another = await h.exec('edit_file', { path: 'packages/app/src/cart.ts', old_string: 'let sum = 0', new_string: 'let sum: number = 0' })
    expect(another).toEqual({ content: 'edited packages/app/src/cart.ts' })
    expect(h.results.map(r => r.outcome)).toEqual(['pass', 'rolled-back', 'rolled-back', 'rolled-back', 'pass', 'pass'])

    // The checker wrote nothing into the workspace: only the edited files changed.
    const changed = new Set(['packages/core/src/money.ts', 'packages/app/src/cart.ts', 'scratch/notes.ts'])
    const strip = (lines: string[]) => lines.filter(l => !changed.has(l.split(' ')[0]!)).map(l => l.split(' ')[0])
    expect(strip(listTree(root))).toEqual(strip(tree))
  }, 180_000)

  it('falls back to a cold `tsc -b` that reports the same TS 7 messages and writes nothing into the workspace', async () => {
    const root = await referencesLibrary()
    const ts = workspaceTypescript(root)!
    const check = new Typecheck7Check({ root, configPath: join(root, 'tsconfig.json'), tsc: nativeTscCommand(ts), warm: false })
    const recorded: RunRecord[] = []
    const io: GuardIO = { record: r => { recorded.push(r) }, notice: () => {} }
    const guard = new Guard({ root, checks: [check], rules: { strictTests: false, isTestFile: () => false }, timeoutMs: 120_000, maxOutputBytes: 1 << 20, confirmFlaky: true })
    const before = listTree(root)
    try {
      await guard.prepare(io)
      const file = join(root, 'packages/core/src/money.ts')
      const text = readFileSync(file, 'utf8')
      execFileSync('sed', ['-i', 's/add(a: Cents, b: Cents)/add(a: Cents, b: string)/', file])
      const j = await guard.measure({ paths: [file], files: ['packages/core/src/money.ts'] }, io, 'edit')
      expect(j.regression).toBe(true)
      expect(j.checks[0]!.regressions.map(p => `${p.file}:${p.line} ${p.code} ${p.message}`)).toEqual([
        "packages/core/src/money.ts:4 TS2322 Type 'string' is not assignable to type 'number'.",
        "packages/app/src/cart.ts:5 TS2345 Argument of type 'number' is not assignable to parameter of type 'string'.",
      ])
      expect(recorded.map(r => [r.argv.slice(0, 3), r.outcome])).toEqual([
        [['tsc', '-b', 'tsconfig.json'], 'fail'],
        [['tsc', '-b', 'tsconfig.json'], 'fail'],
      ])
      writeFileSync(file, text)
      expect(listTree(root).map(l => l.split(' ')[0])).toEqual(before.map(l => l.split(' ')[0]))
      // Impact without the warm server: the programs' files from `tsc -p --listFilesOnly`, edges from our own scan.
      const impact = await check.importers({ paths: [file], files: ['packages/core/src/money.ts'] }, 10, { ...io, timeoutMs: 60_000, maxOutputBytes: 1 << 20 })
      expect(impact?.importers.map(i => i.file)).toEqual(['packages/app/src/cart.ts'])
    } finally {
      await guard.dispose()
    }
  }, 120_000)

  it('kills the tsc --api process group on dispose and on a timeout', async () => {
    const root = await referencesLibrary()
    const check = new Typecheck7Check({ root, configPath: join(root, 'tsconfig.json'), tsc: nativeTscCommand(workspaceTypescript(root)!) })
    const io = { record: () => {}, notice: () => {}, timeoutMs: 60_000, maxOutputBytes: 1 << 20 }
    expect((await check.measure(undefined, io)).status).toBe('ok')
    const pid = check.serverPid!
    expect(alive(pid)).toBe(true)
    await check.dispose()
    expect(alive(pid)).toBe(false)

    const measuring = check.measure(undefined, { ...io, timeoutMs: 1 })
    const started = check.serverPid!
    expect(started).toBeGreaterThan(0)
    const slow = await measuring
    expect(alive(started)).toBe(false)
    expect(slow).toMatchObject({ status: 'timeout', error: 'type-check timed out after 0.0 s (tsc --api process group killed)' })
    expect(check.serverPid).toBeUndefined()
  }, 60_000)
})
