import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import type { CliIO } from 'dsh-cli'
import { tempDir, writeScript } from 'dsh-testkit'
import { main } from '../src/main.ts'
import { dsh as dshProcess } from './helpers.ts'

/** `dsh undo …` in this process (the session itself ran in a real `dsh run`). */
async function dsh(argv: string[]): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  const io: CliIO = { stdout: t => { stdout += t }, stderr: t => { stderr += t }, stdin: Readable.from([]), stderrIsTTY: false, env: {} }
  const exitCode = await main(argv, io)
  return { exitCode, stdout, stderr }
}

describe('dsh undo', () => {
  it('lists what it can take back, takes back the last kept call by default, then every call from one on, and refuses what was taken back', async () => {
    const ws = tempDir('dsh-undo-cli-')
    writeFileSync(join(ws, 'a.txt'), 'a\n')
    writeFileSync(join(ws, 'b.txt'), 'b\n')
    const script = writeScript(tempDir('dsh-undo-script-'), [
      { toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'A\n' } }] },
      { toolCalls: [{ name: 'bash', arguments: { command: 'rm b.txt && echo c > c.txt' } }] },
      { toolCalls: [{ name: 'edit_file', arguments: { path: 'a.txt', old_string: 'A', new_string: 'AA' } }] },
      { text: 'Done.' },
    ])
    const run = await dshProcess(['run', '--workspace', ws, '--script', script])
    expect(run.exitCode, run.stderr).toBe(0)

    const list = await dsh(['undo', '--list', '--workspace', ws])
    const lines = list.stdout.trim().split('\n')
    expect(lines[0]).toMatch(/^session [\w-]+$/)
    expect(lines.slice(1).map(l => l.replace(/ {2}\d{4}-\d\d-\d\d \d\d:\d\d:\d\d {2}/, '  <time>  '))).toEqual([
      '  can undo  <time>  call_2_0  a.txt',
      '  can undo  <time>  call_1_0  b.txt, c.txt',
      '  can undo  <time>  call_0_0  a.txt',
    ])

    const last = await dsh(['undo', '--workspace', ws])
    expect(last.exitCode, last.stderr).toBe(0)
    expect(last.stdout.split('\n')[0]).toMatch(/^took back call call_2_0 of session [\w-]+: restored a\.txt$/)
    expect(readFileSync(join(ws, 'a.txt'), 'utf8')).toBe('A\n')

    const since = await dsh(['undo', '--since', 'call_0_0', '--workspace', ws])
    expect(since.exitCode, since.stderr).toBe(0)
    expect(since.stdout.split('\n')[0]).toMatch(/^took back calls call_0_0, call_1_0 of session [\w-]+: restored a\.txt, b\.txt; deleted c\.txt$/)
    expect(readFileSync(join(ws, 'a.txt'), 'utf8')).toBe('a\n')
    expect(readFileSync(join(ws, 'b.txt'), 'utf8')).toBe('b\n')
    expect(existsSync(join(ws, 'c.txt'))).toBe(false)

    const again = await dsh(['undo', 'call_2_0', '--workspace', ws])
    expect(again.exitCode).toBe(1)
    expect(again.stderr).toMatch(/^dsh undo: cannot take back call call_2_0 of session [\w-]+: taken back already by undo-[\w-]+\n$/)
    const bad = await dsh(['undo', 'x', '--since', 'y', '--workspace', ws])
    expect(bad.exitCode).toBe(2)
    expect(bad.stderr).toBe('dsh undo: give CALL or --since CALL, not both (see dsh undo --help)\n')
  })
})
