import { describe, expect, it } from 'vitest'
import { main } from '../docs-check.ts'
import { captureMain, fixture, runScript } from './helpers.ts'

describe('scripts/docs-check.ts', () => {
  it('exits 0 when all four checks pass', async () => {
    const clean = await captureMain(main, ['--root', fixture('taxonomy')])
    expect(clean.stdout.trim().split('\n').filter(l => /: (ok|FAILED)$/.test(l))).toEqual([
      'doc-typecheck: ok',
      'event taxonomy: ok',
      'check-readmes: ok',
      'prose width: ok',
    ])
    expect(clean.exitCode).toBe(0)
  })

  it('runs every check even after one fails, and exits 1', async () => {
    const broken = await runScript('docs-check', ['--root', fixture('docs-broken')])
    expect(broken.stdout.trim().split('\n').filter(l => /: (ok|FAILED)$/.test(l))).toEqual([
      'doc-typecheck: FAILED',
      'event taxonomy: FAILED',
      'check-readmes: FAILED',
      'prose width: FAILED',
    ])
    expect(broken.stdout).toContain('docs/architecture.md: not found')
    expect(broken.stdout).toContain('README.md:31: a prose line of 138 characters (over 100); `pnpm docs:check --write` re-wraps its paragraph at 80')
    expect(broken.exitCode).toBe(1)
  })
})
