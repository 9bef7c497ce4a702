import { describe, expect, it } from 'vitest'
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import type * as Snapshot from 'dsh-snapshot'
import type { Harness } from 'dsh-testkit'
import { formatRecovery, recoverVault, Snapshots } from 'dsh-snapshot'
import { boot, deadOwner, read, workspace } from './helpers.ts'

function git(root: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: root, encoding: 'utf8' }).trim()
}

/** A committed repository with kept (uncommitted) work in b.ts; the vault ignored. */
function repo(): string {
  const root = workspace({ 'src/a.ts': 'export const a = 1\n', 'src/b.ts': 'export const b = 2\n', '.gitignore': '.dsh/\n' })
  git(root, 'init', '-q', '-b', 'main')
  git(root, 'add', '-A')
  git(root, 'commit', '-q', '-m', 'init')
  return root
}

const indexSum = (root: string) => createHash('sha256').update(readFileSync(join(root, '.git/index'))).digest('hex')

/** A judge inside dsh-snapshot: rolls back every shell call whose command contains BREAK, the way dsh-dstvalid answers a regression. */
async function judged(root: string, config: Partial<Snapshot.Config> = {}): Promise<Harness> {
  const h = await boot(root, config)
  h.ctx.on('snapshot/changed', () => true)
  h.ctx.on('tools/execute', async (exec, next) => {
    const r = await next()
    const sessionId = exec.session.id
    if (String((exec.arguments as { command?: string }).command).includes('BREAK')) {
      await h.ctx.serial('snapshot/rollback', { sessionId, callId: exec.callId, reason: 'typecheck failed' })
      return { content: 'rolled back: typecheck failed after bash', isError: true }
    }
    h.ctx.emit('snapshot/commit', { sessionId, callId: exec.callId })
    return r
  })
  return h
}

describe.each(['track', 'git'] as const)("a rolled-back shell call takes its commits with it (shell: '%s')", shell => {
  it('edit && git add -A && git commit: HEAD, the branch and the index are put back, the tree restored, the model told; the commit stays in the reflog', async () => {
    const root = repo()
    const h = await judged(root, { shell })
    const head = git(root, 'rev-parse', 'HEAD')
    const index = indexSum(root)
    const r = await h.call('bash', { command: "echo 'export const a: number = \"BREAK\"' > src/a.ts && git add -A && git -c user.name=m -c user.email=m@x commit -q -m wip" }, { callId: 'c1' })
    const made = git(root, 'reflog', '-1', '--format=%H', 'main@{1}')
    expect(git(root, 'rev-parse', 'HEAD')).toBe(head)
    expect(read(root, 'src/a.ts')).toBe('export const a = 1\n')
    expect(indexSum(root)).toBe(index)
    expect(git(root, 'status', '--porcelain')).toBe('')
    expect(r.content).toBe(`rolled back: typecheck failed after bash\ngit: main back to ${head.slice(0, 7)} (from ${made.slice(0, 7)}), index restored (the undone commits stay in git reflog)`)
    // Nothing lost: the commit is one `git reflog` away.
    expect(git(root, 'cat-file', '-t', made)).toBe('commit')
    expect(git(root, 'reflog', '--format=%H', 'main')).toContain(made)
    // The index link in the vault is gone with the verdict.
    expect(readdirSync(join(root, '.dsh/snapshots')).filter(f => f.endsWith('.git')).flatMap(d => readdirSync(join(root, '.dsh/snapshots', d)).filter(f => f.endsWith('.index') && !f.startsWith('now')))).toEqual([])
  })

  it('a reset, a new branch and a detached HEAD are put back; a kept commit stays', async () => {
    const root = repo()
    const h = await judged(root, { shell })
    await h.call('bash', { command: 'echo "export const b = 3" > src/b.ts && git add -A && git -c user.name=m -c user.email=m@x commit -q -m kept' }, { callId: 'c1' })
    const kept = git(root, 'rev-parse', 'HEAD')
    expect(git(root, 'log', '--format=%s', '-1')).toBe('kept')
    const r = await h.call('bash', { command: 'git reset -q --hard HEAD~1 && git checkout -q -b side && git checkout -q --detach && echo BREAK > src/a.ts' }, { callId: 'c2' })
    expect(git(root, 'rev-parse', 'HEAD')).toBe(kept)
    expect(git(root, 'symbolic-ref', 'HEAD')).toBe('refs/heads/main')
    expect(git(root, 'branch', '--format=%(refname:short)')).toBe('main')
    expect(read(root, 'src/b.ts')).toBe('export const b = 3\n')
    expect(r.content.split('\n')[1]).toBe(`git: main back to ${kept.slice(0, 7)} (from ${git(root, 'rev-parse', '--short=7', 'HEAD~1')}), removed side (was ${git(root, 'rev-parse', '--short=7', 'HEAD~1')}), HEAD back to main (from ${git(root, 'rev-parse', '--short=7', 'HEAD~1')}), index restored (the undone commits stay in git reflog)`)
  })
})

describe('refs read from .git', () => {
  it('a tag made by a kept call, then one made by a rolled-back call: only the second is removed (loose refs re-read where they changed)', async () => {
    const root = repo()
    const h = await judged(root)
    await h.call('bash', { command: 'git tag v1' }, { callId: 'c1' })
    const r = await h.call('bash', { command: 'git tag v2 && echo BREAK > src/a.ts' }, { callId: 'c2' })
    expect(r.content.split('\n')[1]).toBe(`git: removed tag v2 (was ${git(root, 'rev-parse', '--short=7', 'HEAD')}) (the undone commits stay in git reflog)`)
    expect(git(root, 'tag')).toBe('v1')
  })
})

describe("shell: 'track' (the default): what a kept call discarded", () => {
  it('a kept call that discards uncommitted work is kept, and the model is told what it discarded', async () => {
    const root = repo()
    const h = await judged(root)
    await h.call('bash', { command: 'echo "export const b = 20" > src/b.ts && echo "export const a = 10" > src/a.ts' }, { callId: 'c1' })
    const r = await h.call('bash', { command: 'git checkout -- src/a.ts' }, { callId: 'c2' })
    expect(r.content).toBe('[exit code 0]\nnote: this call discarded the uncommitted changes to src/a.ts (git kept no copy of them); kept, not a regression — if that was not intended, write them again')
    const s = await h.call('bash', { command: 'git stash -q' }, { callId: 'c3' })
    expect(s.content).toBe('[exit code 0]\nnote: this call discarded the uncommitted changes to src/b.ts (they are in the new stash entry: git stash list); kept, not a regression — if that was not intended, write them again')
    expect(read(root, 'src/b.ts')).toBe('export const b = 2\n')
    // An ordinary kept call says nothing of git.
    const plain = await h.call('bash', { command: 'echo "export const c = 1" > src/c.ts' }, { callId: 'c4' })
    expect(plain.content).toBe('[exit code 0]')
  })

})

describe('git refs outside git', () => {
  it('a workspace that is no repository: shell calls run and roll back as before', async () => {
    const root = workspace({ 'a.txt': 'a\n' })
    const h = await judged(root)
    const r = await h.call('bash', { command: 'echo BREAK > a.txt' }, { callId: 'c1' })
    expect(r.content).toBe('rolled back: typecheck failed after bash')
    expect(read(root, 'a.txt')).toBe('a\n')
    expect(existsSync(join(root, '.git'))).toBe(false)
  })
})

describe('git refs after a crash', () => {
  it('recovery puts back the refs a dead process\'s unjudged shell call moved', async () => {
    const root = repo()
    const head = git(root, 'rev-parse', 'HEAD')
    const s = new Snapshots({ root, vault: join(root, '.dsh'), sessionId: 'dead', fsync: 'off' }, deadOwner())
    expect(s.captureRefs({ key: 'call:c1', callId: 'c1' })?.head).toBe('ref: refs/heads/main')
    git(root, 'commit', '-q', '--allow-empty', '-m', 'made by the killed call')
    const report = await recoverVault(join(root, '.dsh'), { fsync: false })
    expect(formatRecovery(report)).toContain(`rolled back call c1 (no verdict): git: main back to ${head.slice(0, 7)}`)
    expect(git(root, 'rev-parse', 'HEAD')).toBe(head)
  })
})
