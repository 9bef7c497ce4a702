import { describe, expect, it } from 'vitest'
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { formatRecovery, recoverVault, Snapshots } from 'dsh-snapshot'
import { join } from 'node:path'
import { logged } from 'dsh-testkit'
import { boot, deadOwner, judgeAll, read, workspace } from './helpers.ts'

function git(root: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: root, encoding: 'utf8' })
}

/** Everything of the user's repository a snapshot must not touch. */
function repoState(root: string) {
  return {
    index: createHash('sha256').update(readFileSync(join(root, '.git/index'))).digest('hex'),
    head: readFileSync(join(root, '.git/HEAD'), 'utf8'),
    refs: git(root, 'for-each-ref'),
    stash: git(root, 'stash', 'list'),
    status: git(root, 'status', '--porcelain', '--untracked-files=all', '--', '.', ':(exclude).dsh'),
    objects: git(root, 'count-objects', '-v'),
  }
}

describe("shell: 'git'", () => {
  it.each([['ignored', 'ignored.log\n.dsh/\n'], ['not ignored', 'ignored.log\n']])('a shell command\'s changes are rolled back from a working-tree snapshot that never touches the repository (vault %s)', async (_, gitignore) => {
    const root = workspace({
      'a.txt': 'a\n', 'b.txt': 'b\n', 'run.sh': { mode: 0o755, data: '#!/bin/sh\n' }, '.gitignore': gitignore,
    })
    git(root, 'init', '-q')
    git(root, 'add', '-A')
    git(root, 'commit', '-q', '-m', 'init')
    // Untracked work and a staged change of the user's: both must survive.
    execFileSync('sh', ['-c', 'echo untracked > u.txt && echo staged >> a.txt && git add a.txt && echo keep > ignored.log'], { cwd: root })
    const before = repoState(root)
    const h = await boot(root, { shell: 'git' })
    judgeAll(h.ctx)
    const r = await h.call('bash', { command: 'echo changed > a.txt && rm b.txt u.txt && chmod -x run.sh && echo new > c.txt && mkdir -p sub && echo s > sub/s.txt && echo clobbered > ignored.log' }, { callId: 'sh1' })
    expect(r.content).toBe('[exit code 0]')
    const back = await h.ctx.serial('snapshot/rollback', { sessionId: h.session.id, callId: 'sh1', reason: 'tests failed' })
    expect(back?.failed).toEqual([])
    expect(back?.message).toBe('rolled back call sh1: restored a.txt, b.txt, run.sh, u.txt; deleted c.txt, sub/s.txt')
    expect(read(root, 'a.txt')).toBe('a\nstaged\n')
    expect(read(root, 'u.txt')).toBe('untracked\n')
    expect(existsSync(join(root, 'c.txt'))).toBe(false)
    // Ignored files are outside the snapshot, by design.
    expect(read(root, 'ignored.log')).toBe('clobbered\n')
    expect(repoState(root)).toEqual(before)
  })

  it('a same-size rewrite in the second the snapshot was taken is rolled back too (the snapshot index keeps its time: racy git)', async () => {
    const root = workspace({ 'b.txt': 'b = 1\n', '.gitignore': '.dsh/\n' })
    git(root, 'init', '-q')
    git(root, 'add', '-A')
    git(root, 'commit', '-q', '-m', 'init')
    const h = await boot(root, { shell: 'git' })
    judgeAll(h.ctx)
    // At the start of a second: the file, then its snapshot, then its same-size rewrite, all in that second; the rollback a second later.
    await new Promise(resolve => setTimeout(resolve, 1000 - (Date.now() % 1000) + 5))
    execFileSync('sh', ['-c', 'echo "b = 2" > b.txt'], { cwd: root })
    const r = await h.call('bash', { command: 'echo "b = 3" > b.txt && sleep 1.2' }, { callId: 'sh1' })
    expect(r.content).toBe('[exit code 0]')
    const back = await h.ctx.serial('snapshot/rollback', { sessionId: h.session.id, callId: 'sh1', reason: 'tests failed' })
    expect(back?.message).toBe('rolled back call sh1: restored b.txt')
    expect(read(root, 'b.txt')).toBe('b = 2\n')
  })

  it('a working-tree snapshot left by a dead process is restored by recovery', async () => {
    const root = workspace({ 'a.txt': 'a\n', '.gitignore': '.dsh/\n' })
    git(root, 'init', '-q')
    git(root, 'add', '-A')
    git(root, 'commit', '-q', '-m', 'init')
    const s = new Snapshots({ root, vault: join(root, '.dsh'), sessionId: 'dead', fsync: 'off' }, deadOwner())
    expect((await s.captureTree({ key: 'call:sh1', callId: 'sh1' }))?.captured).toEqual(['.'])
    execFileSync('sh', ['-c', 'echo broken > a.txt && echo junk > junk.txt'], { cwd: root })
    const report = await recoverVault(join(root, '.dsh'), { fsync: false })
    expect(formatRecovery(report)).toContain('  rolled back call sh1 (no verdict): restored a.txt; deleted junk.txt\n')
    expect(read(root, 'a.txt')).toBe('a\n')
    expect(readdirSync(join(root, '.dsh/snapshots'))).toEqual([])
  })

  it('off with shell: off, and a workspace that is not a git work tree runs shell calls without a snapshot', async () => {
    const root = workspace({ 'a.txt': 'a' })
    const off = await boot(root, { shell: 'off' })
    judgeAll(off.ctx)
    await off.call('bash', { command: 'echo x > a.txt' }, { callId: 'sh1' })
    expect((await off.ctx.serial('snapshot/rollback', { sessionId: off.session.id, callId: 'sh1', reason: 'x' }))?.message).toBe('nothing to restore: no open snapshot for call sh1')
    const on = await boot(root, { shell: 'git' })
    const warnings = logged(on.ctx, 'warn')
    await on.call('bash', { command: 'true' })
    await on.call('bash', { command: 'true' })
    expect(warnings.filter(w => w.includes('not the top of a git work tree'))).toHaveLength(1)
  })
})
