/**
 * Deleting or moving files through the shell is judged by what imported
 * them: the real `dsh run --script` (every plugin of the repo's cordis.yml)
 * on a copy of the demo workspace, a real `rm -rf` and `mv`; judged per call
 * (`DSH_VERDICTS=strict`): the turn's verdicts are turn-verdicts.spec's.
 */
import { cpSync, existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it, vi } from 'vitest'
import { readJsonl, runCommand } from 'dsh-common'
import { tempDir, writeScript } from 'dsh-testkit'

vi.setConfig({ testTimeout: 240_000 })

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')

/** A copy of examples/demo/workspace (the repo's node_modules linked in) and the results of the script's calls, in order. */
async function runDemo(steps: object[], tsInclude?: string[]): Promise<{ ws: string; results: { content: string; isError?: boolean }[]; exitCode: number | null }> {
  const dir = tempDir('dsh-deleted-')
  const ws = join(dir, 'ws')
  cpSync(join(repoRoot, 'examples/demo/workspace'), ws, { recursive: true })
  if (tsInclude) {
    const tsconfig = join(ws, 'tsconfig.json')
    writeFileSync(tsconfig, JSON.stringify({ ...JSON.parse(readFileSync(tsconfig, 'utf8')), include: tsInclude }))
  }
  symlinkSync(join(repoRoot, 'node_modules'), join(ws, 'node_modules'), 'dir')
  const script = writeScript(dir, [...steps, { text: 'Done.' }])
  const run = await runCommand([process.execPath, '--import', 'tsx', join(repoRoot, 'packages/dsh-cli/src/bin.ts'), 'run', '--workspace', ws, '--script', script, 'go'], {
    cwd: repoRoot, env: { NODE_ENV: 'test', DSH_VERDICTS: 'strict' }, timeoutMs: 220_000,
  })
  const logs = join(ws, '.dsh/sessions')
  const [log] = readdirSync(logs)
  const events = readJsonl<{ type: string; data: { content: string; isError?: boolean } }>(join(logs, log!)).records
  return { ws, results: events.filter(e => e.type === 'tool/result').map(e => e.data), exitCode: run.exitCode }
}

describe('files deleted or moved through the shell', () => {
  it('`rm -rf src` is rolled back: the type-check sees the tests that imported the deleted files break (ADR 0037); the next harmless call is kept', async () => {
    const { ws, results, exitCode } = await runDemo([
      { toolCalls: [{ name: 'bash', arguments: { command: 'rm -rf src; ls' } }] },
      { toolCalls: [{ name: 'bash', arguments: { command: 'echo hi > notes.txt' } }] },
    ])
    expect(exitCode).toBe(0)
    expect(results[0]!.isError).toBe(true)
    expect(results[0]!.content.split('\n')).toEqual([
      'rolled back: typecheck failed after bash on src/cart.ts, src/format.ts, src/legacy.ts, src/money.ts',
      "tests/cart.test.ts:2 TS2307 Cannot find module '../src/cart.ts' or its corresponding type declarations.",
      '(typecheck stopped at the first new errors: possibly more in files not checked)',
    ])
    expect(readdirSync(join(ws, 'src')).sort()).toEqual(['cart.ts', 'format.ts', 'legacy.ts', 'money.ts'])
    expect(results[1]).toMatchObject({ content: '[exit code 0]', isError: false })
    expect(existsSync(join(ws, 'notes.txt'))).toBe(true)
  })

  it('a module only tests import, moved away (`mv src/cart.ts lib/`), is rolled back: the tests that imported it are run', async () => {
    // The tests outside the tsconfig: only the related tests can see what the move broke.
    const { ws, results } = await runDemo([
      { toolCalls: [{ name: 'bash', arguments: { command: 'mkdir -p lib && mv src/cart.ts lib/cart.ts' } }] },
    ], ['src'])
    expect(results[0]!.isError).toBe(true)
    expect(results[0]!.content.split('\n')).toEqual([
      'rolled back: test failed after bash on lib/cart.ts, src/cart.ts',
      `tests/cart.test.ts FAIL test file failed: Error: Cannot find module '../src/cart.ts' imported from '${ws}/tests/cart.test.ts'`,
    ])
    expect(existsSync(join(ws, 'src/cart.ts'))).toBe(true)
    expect(existsSync(join(ws, 'lib'))).toBe(false)
  })
})
