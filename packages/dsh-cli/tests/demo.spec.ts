import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { tempDir } from 'dsh-testkit'
import { dsh, repoRoot } from './helpers.ts'

/** A call's transcript block when its write was rolled back: the tool, why, the first problem line. */
const rolledBack = (tool: string, why: string, problem: string) => `  ✗ ${tool}\n      rolled back: ${why}\n      ${problem}`

describe('dsh demo', () => {
  it('shows the guard cases (a shell edit rolled back too), the proof summary the model saw, a marked checkpoint and the handoff', async () => {
    const dir = join(tempDir('dsh-demo-test-'), 'ws')
    const r = await dsh(['demo', '--dir', dir], { timeoutMs: 300_000 })
    expect(r.exitCode).toBe(0)
    // Progress notices go to stderr; no plugin warned or failed.
    expect(r.stderr).toContain('rolling back edit_file src/money.ts: typecheck found 1 new problem (it stopped at the first new errors)')
    expect(r.stderr).not.toMatch(/^(warn|error) \[/m)
    const out = r.stdout
    // A good edit kept.
    expect(out).toContain('  ✓ write_file\n      created src/count.ts (144 bytes)')
    // A type-breaking edit rolled back, with the message the model saw.
    expect(out).toContain(rolledBack('edit_file', 'typecheck failed after edit_file on src/money.ts', "src/money.ts:5 TS2322 Type 'string' is not assignable to type 'number'."))
    // A test-breaking edit rolled back.
    expect(out).toContain('      rolled back: test failed after edit_file on src/money.ts\n      tests/money.test.ts:6 FAIL money > applies a percentage discount, rounding to the cent')
    // A fix inside the already-broken file kept.
    expect(out).toContain('  ✓ edit_file\n      edited src/legacy.ts')
    // A shell command's edit (sed -i) judged like a write and rolled back.
    expect(out).toContain(rolledBack('bash', 'typecheck failed after bash on src/money.ts', "src/cart.ts:1 TS2305 Module '\"./money.ts\"' has no exported member 'applyDiscount'."))
    // The rolled-back edits (two edit_file, one sed -i) left money.ts byte-for-byte as it was.
    expect(readFileSync(join(dir, 'src/money.ts'), 'utf8')).toBe(readFileSync(join(repoRoot, 'examples/demo/workspace/src/money.ts'), 'utf8'))
    expect(readFileSync(join(dir, 'src/legacy.ts'), 'utf8')).toContain('const padded: string = label.padEnd(20)')
    // The proof summary the model saw, and the checkpoint's marked claim and handoff.
    expect(out).toMatch(/── proof summary the model saw ─+\nProof chain — latest harness-verified result per check in this session \(failures first\):\n✗ typecheck src\/money\.ts — rolled back after bash: 1 new problem: src\/cart\.ts:1 TS2305 .*\n✗ test src\/money\.ts — rolled back after edit_file/)
    expect(out).toContain('      Recorded as given; 1 claim marked for the next agent:\n      - "lint is clean — pnpm eslint src": `eslint src` not seen run in this session — run it or drop the claim.')
    expect(out).toMatch(/── the next session on this workspace starts with ─+\nCheckpoint left by session /)
    expect(out).toContain('- lint is clean — pnpm eslint src [unsupported: `eslint src` not seen run]')
    // The vault holds the log, the chain and the checkpoint.
    expect(existsSync(join(dir, '.dsh/proofchain.jsonl'))).toBe(true)
    expect(readdirSync(join(dir, '.dsh/checkpoints'))).toHaveLength(1)
    const verify = await dsh(['proof', 'verify', '--vault', join(dir, '.dsh')])
    expect(verify.exitCode).toBe(0)
  }, 300_000)
})
