/**
 * Two real `dsh run` processes on one workspace (the repo's cordis.yml,
 * every plugin): session A's shell call breaks the type-check and is rolled
 * back while session B writes two files it is told are kept. Per call
 * (`DSH_VERDICTS=strict`): the rollback under test is the immediate one.
 */
import { spawn } from 'node:child_process'
import { cpSync, existsSync, readdirSync, readFileSync, symlinkSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { setTimeout as delay } from 'node:timers/promises'
import { describe, expect, it, vi } from 'vitest'
import { readJsonl, runCommand } from 'dsh-common'
import { tempDir, writeScript } from 'dsh-testkit'

vi.setConfig({ testTimeout: 300_000 })

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
const bin = join(repoRoot, 'packages/dsh-cli/src/bin.ts')

/** The tool results of every session logged in the workspace, by the first tool called. */
function resultsOf(ws: string): { content: string; isError?: boolean }[][] {
  const dir = join(ws, '.dsh/sessions')
  return readdirSync(dir).map(f => readJsonl<{ type: string; data: { content: string; isError?: boolean } }>(join(dir, f)).records
    .filter(e => e.type === 'tool/result').map(e => e.data))
}

describe('two sessions on one workspace', () => {
  it("session A's rollback never deletes what session B was told was kept; B waits for A's write to be judged and is told so", async () => {
    const dir = tempDir('dsh-two-')
    const ws = join(dir, 'ws')
    cpSync(join(repoRoot, 'examples/demo/workspace'), ws, { recursive: true })
    symlinkSync(join(repoRoot, 'node_modules'), join(ws, 'node_modules'), 'dir')
    // A: a command that runs until B has written (or waits for A), then breaks money.ts's export.
    const a = writeScript(dir, [
      { toolCalls: [{ name: 'bash', arguments: { command: "touch .a-started; for i in $(seq 1200); do [ -f src/b2.ts ] && break; ls .dsh | grep -q 'workspace.lock.waiting' && break; sleep 0.1; done; sed -i 's/export function add/export function plus/' src/money.ts" } }] },
      { text: 'Done.' },
    ], 'a.jsonl')
    const b = writeScript(dir, [
      { toolCalls: [{ name: 'write_file', arguments: { path: 'src/b1.ts', content: 'export const b1 = 1\n' } }] },
      { toolCalls: [{ name: 'write_file', arguments: { path: 'src/b2.ts', content: 'export const b2 = 2\n' } }] },
      { text: 'Done.' },
    ], 'b.jsonl')
    const env = { ...process.env, NODE_ENV: 'test', DSH_VERDICTS: 'strict' }
    const runA = spawn(process.execPath, ['--import', 'tsx', bin, 'run', '--workspace', ws, '--script', a, 'a'], { cwd: repoRoot, env, stdio: 'ignore' })
    const exitA = new Promise<number | null>(done => runA.on('exit', code => done(code)))
    while (!existsSync(join(ws, '.a-started'))) {
      if (runA.exitCode !== null) throw new Error(`session A exited (${runA.exitCode}) before its command started`)
      await delay(50)
    }
    const runB = await runCommand([process.execPath, '--import', 'tsx', bin, 'run', '--workspace', ws, '--script', b, 'b'], { cwd: repoRoot, env: { NODE_ENV: 'test', DSH_VERDICTS: 'strict' }, timeoutMs: 280_000 })
    expect(runB.exitCode).toBe(0)
    expect(await exitA).toBe(0)
    const [first, second] = resultsOf(ws).sort((x, y) => x.length - y.length)
    // A: one call, rolled back; its change undone.
    expect(first).toHaveLength(1)
    expect(first![0]!.isError).toBe(true)
    expect(first![0]!.content.split('\n')[0]).toBe('rolled back: typecheck failed after bash on .a-started, src/money.ts')
    expect(readFileSync(join(ws, 'src/money.ts'), 'utf8')).toContain('export function add')
    // B: both writes kept, and still there.
    expect(second!.map(r => r.isError ?? false)).toEqual([false, false])
    expect(second![0]!.content).toMatch(/^created src\/b1\.ts \(20 bytes\)\nnote: another dsh session \(session [\w-]+, pid \d+\) is writing in this workspace too; this call waited \d+\.\d s for its write to be judged \(writes of two sessions are taken in turn, and neither session's rollback touches the other's kept files\)$/)
    expect(second![1]!.content).toBe('created src/b2.ts (20 bytes)')
    expect(readFileSync(join(ws, 'src/b1.ts'), 'utf8')).toBe('export const b1 = 1\n')
    expect(readFileSync(join(ws, 'src/b2.ts'), 'utf8')).toBe('export const b2 = 2\n')
    expect(existsSync(join(ws, '.dsh/workspace.lock'))).toBe(false)
  })
})
