/**
 * Readers of the verdicts wait for the live hooks host: Claude Code's hooks
 * played through the real client, the real `dsh hooks serve` it starts
 * (background verdicts on, strict), and the real `dsh proof show` and `dsh
 * claims check` run while an edit's verdict still runs (its test waits
 * while a hold file exists). Each says it waits for that verdict, and
 * answers only once it is in: the edit rolled back, the file as before,
 * the failure in the proof summary and in the claims check's failed runs.
 */
import { spawn } from 'node:child_process'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { writeHostSettings } from 'dsh-host-hooks'
import { tempDir } from 'dsh-testkit'
import { ClaudeSession, killHost, repoRoot, ROUNDING, shopWorkspace } from './claude-hooks.ts'

const PENDING = 'kept for now: its tests are running; the verdict comes before your next call'
const CEIL = ROUNDING.replace('Math.round', 'Math.ceil')

/** A test of the discount that waits while `hold` exists. */
const heldTest = (hold: string) => `import { existsSync } from 'node:fs'
import { expect, it } from 'vitest'
import { applyDiscount } from '../src/money.ts'

it('rounds a discount to the cent, once let through', async () => {
  while (existsSync(${JSON.stringify(hold)})) await new Promise(resolve => setTimeout(resolve, 50))
  expect(applyDiscount(999, 10)).toBe(899)
}, 600_000)
`

interface Reader {
  /** Resolves when stderr has a line containing the text; rejects when the command ended without one. */
  said(text: string): Promise<void>
  done: Promise<{ code: number | null; stdout: string; stderr: string }>
}

/** The real `dsh` in a child process, its stderr followed as it comes. */
function reader(args: string[]): Reader {
  const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'packages/dsh-cli/src/bin.ts'), ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  const waiting: { text: string; resolve: () => void }[] = []
  child.stdout.on('data', (c: Buffer) => { stdout += c.toString('utf8') })
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString('utf8')
    for (const w of waiting.splice(0)) (stderr.includes(w.text) ? w.resolve() : waiting.push(w))
  })
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>(resolve => child.on('close', code => resolve({ code, stdout, stderr })))
  return {
    said: text => new Promise((resolve, reject) => {
      if (stderr.includes(text)) return resolve()
      waiting.push({ text, resolve })
      void done.then(r => reject(new Error(`dsh ${args.join(' ')} ended (${r.code}) without saying "${text}"; stderr: ${r.stderr}; stdout: ${r.stdout}`)))
    }),
    done,
  }
}

describe('readers of the verdicts and the live hooks host', () => {
  let ws = ''
  afterAll(async () => {
    if (ws) await killHost(ws)
  })

  it('dsh proof show and dsh claims check wait for the verdict still running, then show it: rolled back, the file as before', async () => {
    ws = shopWorkspace('dsh-readers-wait-')
    const vault = join(ws, '.dsh')
    // Background verdicts as users get them (the default); strict, so the test break is rolled back.
    writeHostSettings(vault, { verdicts: 'strict' })
    const hold = join(tempDir('dsh-readers-hold-'), 'hold')
    writeFileSync(join(ws, 'tests/held.test.ts'), heldTest(hold))
    const money = join(ws, 'src/money.ts')
    const s = new ClaudeSession(ws)
    await s.start()
    // A first turn with a good edit, its test let through: the stop waits for its verdict, the baseline is measured.
    await s.prompt('Swap the sum.')
    const swap = await s.edit('src/money.ts', 'return a + b', 'return b + a')
    expect((swap.answer?.hookSpecificOutput as { additionalContext?: string } | undefined)?.additionalContext).toBe(PENDING)
    expect((await s.stop()).answer).toBeUndefined()
    const before = readFileSync(money)
    // The next edit's test is held: its verdict stays pending until the hold goes.
    await s.prompt('Round the discount up.')
    writeFileSync(hold, '')
    const edit = await s.edit('src/money.ts', ROUNDING, CEIL)
    expect((edit.answer?.hookSpecificOutput as { additionalContext?: string } | undefined)?.additionalContext).toBe(PENDING)
    expect(readFileSync(money, 'utf8')).toContain('Math.ceil')

    const proof = reader(['proof', 'show', '--vault', vault, '--budget', '0'])
    const claims = reader(['claims', 'check', '--vault', vault, '--session', s.id, '--verified', 'Rounded the discount up.', '--json'])
    await proof.said('dsh proof: waiting for the verdict still running in the live hooks host (Edit src/money.ts)')
    await claims.said('dsh claims check: waiting for the verdict still running in the live hooks host (Edit src/money.ts)')
    rmSync(hold)
    const [shown, checked] = await Promise.all([proof.done, claims.done])
    // Both answered after the verdict: the rollback is applied.
    expect(readFileSync(money)).toEqual(before)
    expect(shown.code).toBe(0)
    expect(shown.stdout).toContain('✗ test src/money.ts — rolled back after Edit')
    expect(shown.stdout).not.toContain('pending')
    const report = JSON.parse(checked.stdout) as { failedRuns: { key: string; verdict?: string }[]; pending: unknown[] }
    expect(report.failedRuns.map(r => [r.key, r.verdict])).toEqual([['test of Edit on src/money.ts', 'rolled-back']])
    expect(report.pending).toEqual([])
    // Nothing pending now: a reader does not wait, and says nothing of it.
    const again = reader(['proof', 'show', '--vault', vault])
    expect((await again.done).stderr).not.toContain('waiting')
  })
})
