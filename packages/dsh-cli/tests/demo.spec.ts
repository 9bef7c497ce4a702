import { chmodSync, existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { tempDir } from 'dsh-testkit'
import { dshFromRepo } from '../src/commands/demo.ts'
import { dsh, repoRoot } from './helpers.ts'

/** A call's transcript block when its write was rolled back: the tool, why, the first problem line. */
const rolledBack = (tool: string, why: string, problem: string) => `  ✗ ${tool}\n      rolled back: ${why}\n      ${problem}`

describe('dsh demo', () => {
  it('shows the guard cases (a shell edit judged too, changes left unfinished undone at the turn\'s end), the proof summary the model saw, a marked checkpoint and the handoff', async () => {
    const dir = join(tempDir('dsh-demo-test-'), 'ws')
    // Background verdicts as users get them (the default): a write returns once its type-check passed, its tests' verdict comes at the next call.
    const r = await dsh(['demo', '--dir', dir], { env: { DSH_BACKGROUND: undefined }, timeoutMs: 300_000 })
    expect(r.exitCode).toBe(0)
    // Progress notices go to stderr; no plugin warned or failed.
    expect(r.stderr).toContain('rolling back edit_file src/money.ts: typecheck found 1 new problem (it stopped at the first new errors)')
    expect(r.stderr).not.toMatch(/^(warn|error) \[/m)
    const out = r.stdout
    // A good edit kept.
    expect(out).toContain('  ✓ write_file\n      created src/count.ts (144 bytes)')
    // A type-breaking edit rolled back, with the message the model saw.
    expect(out).toContain(rolledBack('edit_file', 'typecheck failed after edit_file on src/money.ts', "src/money.ts:5 TS2322 Type 'string' is not assignable to type 'number'."))
    // A test-breaking edit returns while its tests run; their verdict, before the next call: kept for now (ADR 0037), its breakage in a test, not in the file it wrote.
    expect(out).toContain('  ✓ edit_file\n      edited src/money.ts\n      kept for now: its tests are running; the verdict comes before your next call\n')
    expect(out).toContain('  → edit_file src/legacy.ts\n  [dsh-dstvalid] the verdict on your earlier edit_file of src/money.ts came in: kept\n  kept for now: 1 test in 1 file fails against this change:\n  tests/money.test.ts:6 FAIL money > applies a percentage discount, rounding to the cent')
    // A fix inside the already-broken file kept.
    expect(out).toContain('  ✓ edit_file\n      edited src/legacy.ts')
    // A shell command's edit (sed -i) judged like a write: its importers break, so it is kept for now too.
    expect(out).toContain("  ✓ bash\n      [exit code 0]\n      kept for now: 1 file no longer type-checks against this change:\n      src/cart.ts:1 TS2305 Module '\"./money.ts\"' has no exported member 'applyDiscount'.")
    // The agent stops with both unfinished: refused; it writes nothing (a checkpoint), so its next stop undoes both as one group; the good edits stay.
    const broken = "2 files no longer type-check:\n  src/cart.ts:1 TS2305 Module '\"./money.ts\"' has no exported member 'applyDiscount'.\n  tests/money.test.ts:2 TS2305 Module '\"../src/money.ts\"' has no exported member 'applyDiscount'."
    expect(out).toContain(`  [dsh-dstvalid] not done: this turn leaves the project worse than it began (stop refused, 1 of 2): ${broken}\n  fix them, then finish; stopping again without writing a fix undoes edit_file on src/money.ts; bash on src/money.ts`)
    expect(out).not.toContain('stop refused, 2 of 2')
    expect(out).toContain(`  [dsh-dstvalid] undone at the end of the turn: edit_file on src/money.ts; bash on src/money.ts; it left the project worse than the turn began: ${broken}\n  kept: edit_file on src/legacy.ts\n`)
    // The rolled-back and undone edits (two edit_file, one sed -i) left money.ts byte-for-byte as it was.
    expect(readFileSync(join(dir, 'src/money.ts'), 'utf8')).toBe(readFileSync(join(repoRoot, 'examples/demo/workspace/src/money.ts'), 'utf8'))
    expect(readFileSync(join(dir, 'src/legacy.ts'), 'utf8')).toContain('const padded: string = label.padEnd(20)')
    // The proof summary the model saw, and the checkpoint's marked claim and handoff.
    expect(out).toMatch(/── proof summary the model saw ─+\nProof chain — latest harness-verified result per check in this session \(failures first\):\n✗ typecheck src\/money\.ts — rolled back after bash: 2 new problems: src\/cart\.ts:1 TS2305 .*\n(✗ claim .*\n)*✗ test src\/money\.ts — rolled back after edit_file/)
    expect(out).toContain('      Recorded as given; 1 claim marked for the next agent:\n      - "lint is clean — pnpm eslint src": `eslint src` not seen run in this session — run it or drop the claim.')
    expect(out).toMatch(/── the next session on this workspace starts with ─+\nCheckpoint left by session /)
    expect(out).toContain('- lint is clean — pnpm eslint src [unsupported: `eslint src` not seen run]')
    // The vault holds the log, the chain and the checkpoint.
    expect(existsSync(join(dir, '.dsh/proofchain.jsonl'))).toBe(true)
    expect(readdirSync(join(dir, '.dsh/checkpoints'))).toHaveLength(1)
    const verify = await dsh(['proof', 'verify', '--vault', join(dir, '.dsh')])
    expect(verify.exitCode).toBe(0)
  }, 300_000)

  it('ends with commands that run here: pnpm dsh with pnpm on PATH, else npx --yes pnpm@10 dsh (Node and npm only)', () => {
    const bin = tempDir('dsh-demo-path-')
    const none = tempDir('dsh-demo-path-')
    writeFileSync(join(bin, 'pnpm'), '#!/bin/sh\n')
    chmodSync(join(bin, 'pnpm'), 0o755)
    expect(dshFromRepo(`${none}:${bin}`)).toBe('pnpm dsh')
    expect(dshFromRepo(none)).toBe('npx --yes pnpm@10 dsh')
    expect(dshFromRepo(undefined)).toBe('npx --yes pnpm@10 dsh')
  })
})
