import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { boot, makeWorkspace, readText, runs, STOPPED } from './helpers.ts'

/** Every file below the workspace (not node_modules, not the vault): path → bytes (base64) and mode. */
function tree(root: string): Record<string, string> {
  const out = execFileSync('sh', ['-c', "find . -path ./node_modules -prune -o -path ./.dsh -prune -o -type f -printf '%P %m\\n' | sort"], { cwd: root, encoding: 'utf8' })
  return Object.fromEntries(out.trim().split('\n').map(line => {
    const [path, mode] = line.split(' ')
    return [path!, `${mode} ${readText(root, path!) === undefined ? '' : Buffer.from(readText(root, path!)).toString('base64')}`]
  }))
}

const threeFilePatch = [
  'diff --git a/src/money.ts b/src/money.ts', '--- a/src/money.ts', '+++ b/src/money.ts', '@@ -4 +4 @@',
  '-export function add(a: Cents, b: Cents): Cents {', '+export function add(a: Cents, b: Cents, c: Cents): Cents {',
  'diff --git a/src/greeting.ts b/src/greeting.ts', '--- a/src/greeting.ts', '+++ b/src/greeting.ts', '@@ -2 +2 @@',
  '-  return `Hello, ${name}!`', '+  return `Hi, ${name}!`',
  'diff --git a/src/extra.ts b/src/extra.ts', 'new file mode 100644', '--- /dev/null', '+++ b/src/extra.ts', '@@ -0,0 +1 @@', '+export const extra = 1', '',
].join('\n')

describe('shell calls are judged like writes (dsh-snapshot shell tracking, the default)', () => {
  it('rolls back a type-breaking sed -i, a three-file git apply and a deleted import exactly; keeps a formatter run; a no-op adds no judgement', async () => {
    const root = makeWorkspace('shop', {}, { nodeModules: 'package' })
    const h = await boot(root, { tests: 'off' }, { snapshot: { real: { fsync: 'off' } } })
    const original = tree(root)

    // sed -i breaking a signature: the callers no longer type-check.
    const sed = await h.exec('bash', { command: "sed -i 's/export function add(a: Cents, b: Cents)/export function add(a: Cents, b: string)/' src/money.ts" })
    expect(sed).toEqual({
      isError: true,
      exitCode: 0,
      content: [
        'rolled back: typecheck failed after bash on src/money.ts',
        "src/money.ts:5 TS2322 Type 'string' is not assignable to type 'number'.",
        STOPPED,
      ].join('\n'),
    })
    expect(tree(root)).toEqual(original)

    // git apply touching three files (one created).
    writeFileSync(join(root, '..', `${root.split('/').pop()}.patch`), threeFilePatch)
    const patch = await h.exec('bash', { command: `git apply --unidiff-zero ../${root.split('/').pop()}.patch` })
    expect(patch.content.split('\n')[0]).toBe('rolled back: typecheck failed after bash on src/extra.ts, src/greeting.ts, src/money.ts')
    expect(tree(root)).toEqual(original)

    // Deleting a file others import.
    const rm = await h.exec('bash', { command: 'rm src/money.ts' })
    expect(rm.content.split('\n')[0]).toBe('rolled back: typecheck failed after bash on src/money.ts')
    expect(tree(root)).toEqual(original)

    // A formatter run: bytes change, nothing semantic does — kept, and judged.
    const judgedBefore = h.results.length
    const fmt = await h.exec('bash', { command: 'node_modules/.bin/prettier --write src/format.ts src/greeting.ts > /dev/null' })
    expect(fmt).toMatchObject({ content: '[exit code 0]', exitCode: 0 })
    expect(readText(root, 'src/format.ts')).toContain(';')
    expect(h.results.slice(judgedBefore).map(r => [r.tool, r.paths, r.outcome])).toEqual([['bash', ['src/format.ts', 'src/greeting.ts'], 'pass']])

    // A command that changes nothing adds no judgement and runs no check.
    const checks = runs(h.session).length
    const results = h.results.length
    expect(await h.exec('bash', { command: 'cat src/money.ts > /dev/null && ls src' })).toMatchObject({ exitCode: 0 })
    expect(h.results.length).toBe(results)
    expect(runs(h.session).length).toBe(checks)
  })

  it('rolls back a test-breaking cat > (the related tests run after a shell write too)', async () => {
    const root = makeWorkspace()
    const h = await boot(root, { tsconfig: 'tsconfig.full.json' }, { snapshot: { real: { fsync: 'off' } } })
    const before = readText(root, 'src/money.ts')
    const r = await h.exec('bash', { command: `cat > src/money.ts <<'EOF'
/** Amounts are integer cents. */
export type Cents = number

export function add(a: Cents, b: Cents): Cents {
  return a + b
}

export function applyDiscount(amount: Cents, percent: number): Cents {
  return Math.ceil(amount * (1 - percent / 100))
}
EOF` })
    expect(r.content).toBe([
      'rolled back: test failed after bash on src/money.ts',
      'tests/money.test.ts:6 FAIL money > applies a percentage discount — AssertionError: expected 900 to be 899 // Object.is equality',
    ].join('\n'))
    expect(readText(root, 'src/money.ts')).toBe(before)
    expect(h.results.map(x => [x.tool, x.check, x.outcome])).toEqual([['bash', 'typecheck', 'pass'], ['bash', 'test', 'rolled-back']])
  })

  it('files changed while no call ran are re-measured first, never blamed on the next call, and reported once', async () => {
    const root = makeWorkspace()
    const h = await boot(root, { tests: 'off' }, { snapshot: { real: { fsync: 'off' } } })
    expect(await h.exec('bash', { command: 'true' })).toMatchObject({ exitCode: 0 })
    // A background process breaks a type after the call returned.
    writeFileSync(join(root, 'src/greeting.ts'), 'export function greet(name: string): number {\n  return name\n}\n')
    const edit = await h.exec('edit_file', { path: 'src/money.ts', old_string: 'return a + b', new_string: 'return b + a' })
    expect(edit).toEqual({ content: 'edited src/money.ts\nnote: files changed outside any tool call: src/greeting.ts' })
    const next = await h.exec('edit_file', { path: 'src/money.ts', old_string: 'return b + a', new_string: 'return a + b' })
    expect(next).toEqual({ content: 'edited src/money.ts' })
  })

  it('shell: false keeps the old behaviour: not judged, the state re-measured before the next write', async () => {
    const root = makeWorkspace()
    const h = await boot(root, { tests: 'off', shell: false }, { snapshot: { real: { fsync: 'off' } } })
    const r = await h.exec('bash', { command: "sed -i 's/return .*/return name.lenght/' src/greeting.ts" })
    expect(r).toMatchObject({ content: '[exit code 0]', exitCode: 0 })
    expect(readText(root, 'src/greeting.ts')).toContain('name.lenght')
    expect(h.results).toEqual([])
  })
})
