import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { describe, expect, it, vi } from 'vitest'
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type * as Snapshot from 'dsh-snapshot'
import { formatRecovery, recoverVault, Snapshots, type OutsideChanges } from 'dsh-snapshot'
import type { Harness } from 'dsh-testkit'
import { boot, deadOwner, judgeAll, listTree, read, workspace } from './helpers.ts'

const execFileAsync = promisify(execFile)

const files = {
  'src/a.ts': 'export const a = 1\n',
  'src/b.ts': 'export const b = 2\n',
  'src/lib/c.ts': 'export const c = 3\n',
  'run.sh': { mode: 0o755, data: '#!/bin/sh\necho hi\n' },
  '.gitignore': 'dist/\n*.log\n',
  'dist/out.js': 'built\n',
}

/** A workspace (of `files` unless given) with dsh-snapshot loaded and a judge that keeps every scope open. */
async function judged(config: Partial<Snapshot.Config> = {}, root = workspace(files)) {
  const h = await boot(root, config)
  judgeAll(h.ctx)
  return { root, h }
}
const changes = (h: Harness, callId: string) => h.ctx.serial('snapshot/changes', { sessionId: h.session.id, callId })
const rollback = (h: Harness, callId: string, reason: string) => h.ctx.serial('snapshot/rollback', { sessionId: h.session.id, callId, reason })
const commit = (h: Harness, callId: string) => h.ctx.emit('snapshot/commit', { sessionId: h.session.id, callId })

describe("shell: 'track' (the default)", () => {
  it('measures exactly what a command created, modified and deleted, and rolls back exactly those, byte for byte', async () => {
    const { root, h } = await judged()
    const before = listTree(root)
    const r = await h.call('bash', {
      command: "sed -i 's/1/10/' src/a.ts && rm src/lib/c.ts && chmod -x run.sh && mkdir -p gen/deep && echo x > gen/deep/x.ts && echo n > src/new.ts && echo more >> dist/out.js && echo l > app.log",
    }, { callId: 'sh1' })
    expect(r.content).toBe('[exit code 0]')
    expect(h.ctx.bail('snapshot/tracked', { sessionId: h.session.id, callId: 'sh1' })).toBe(true)
    const measured = await changes(h, 'sh1')
    // Ignored paths (dist/, *.log) are outside the picture.
    expect(measured).toMatchObject({ created: ['gen/deep/x.ts', 'src/new.ts'], modified: ['run.sh', 'src/a.ts'], deleted: ['src/lib/c.ts'] })
    // With each changed file's content before (null: absent), for a judge to measure the state before on.
    const text = (b: Buffer | null | undefined) => (b === null ? null : b?.toString('utf8'))
    expect(Object.fromEntries([...measured!.before!].map(([p, b]) => [p, text(b)]))).toEqual({
      'gen/deep/x.ts': null, 'src/new.ts': null, 'run.sh': '#!/bin/sh\necho hi\n', 'src/a.ts': 'export const a = 1\n', 'src/lib/c.ts': 'export const c = 3\n',
    })
    // Asked twice, measured once.
    expect(await changes(h, 'sh1')).toEqual(measured)
    const back = await rollback(h, 'sh1', 'typecheck failed')
    expect(back?.failed).toEqual([])
    expect(back?.message).toBe('rolled back call sh1: restored run.sh, src/a.ts, src/lib/c.ts; deleted gen/deep/x.ts, src/new.ts, gen/deep/, gen/')
    const after = listTree(root)
    expect({ ...after, 'dist/out.js': undefined, 'app.log': undefined }).toEqual({ ...before, 'dist/out.js': undefined })
    expect(read(root, 'dist/out.js')).toBe('built\nmore\n')
  })

  it('a command that changes nothing measures nothing; a kept change becomes the picture the next call is measured against', async () => {
    const { root, h } = await judged()
    await h.call('bash', { command: 'cat src/a.ts > /dev/null; touch src/b.ts' }, { callId: 'n1' })
    expect(await changes(h, 'n1')).toMatchObject({ created: [], modified: [], deleted: [] })
    commit(h, 'n1')
    await h.call('bash', { command: 'echo "export const d = 4" > src/d.ts' }, { callId: 'k1' })
    expect(await changes(h, 'k1')).toMatchObject({ created: ['src/d.ts'], modified: [], deleted: [] })
    commit(h, 'k1')
    await h.call('bash', { command: 'echo "export const d = 5" > src/d.ts' }, { callId: 'k2' })
    expect(await changes(h, 'k2')).toMatchObject({ created: [], modified: ['src/d.ts'], deleted: [] })
    const back = await rollback(h, 'k2', 'x')
    expect(back?.message).toBe('rolled back call k2: restored src/d.ts')
    expect(read(root, 'src/d.ts')).toBe('export const d = 4\n')
  })

  it("a file another session's guarded call wrote is put on that session, not reported as outside any tool call", async () => {
    const { root, h } = await judged()
    const s2 = h.ctx.sessions.create('s2', { cwd: root })
    await h.call('bash', { command: 'true' }, { callId: 'a1' })
    commit(h, 'a1')
    await h.call('write_file', { path: 'src/s2.ts', content: 'export const s2 = 2\n' }, { callId: 'w2', session: s2 })
    h.ctx.emit('snapshot/commit', { sessionId: 's2', callId: 'w2' })
    await h.call('bash', { command: 'echo "export const s2 = 3" > src/s2.ts' }, { callId: 'b2', session: s2 })
    await h.ctx.serial('snapshot/changes', { sessionId: 's2', callId: 'b2' })
    h.ctx.emit('snapshot/commit', { sessionId: 's2', callId: 'b2' })
    writeFileSync(join(root, 'src/b.ts'), 'export const b = 99\n')
    const r = await h.call('bash', { command: 'true' }, { callId: 'a2' })
    expect(r.content).toBe(`[exit code 0]\nnote: files changed outside any tool call: src/b.ts\nnote: written meanwhile by another session's checked calls: src/s2.ts (session s2)`)
  })

  it('changes made while no call ran are reported once, before the next call, never measured as its change', async () => {
    const { root, h } = await judged()
    const seen: OutsideChanges[] = []
    h.ctx.on('snapshot/outside', info => { seen.push(info) })
    await h.call('bash', { command: 'true' }, { callId: 'b1' })
    commit(h, 'b1')
    // A "background process" writes after the call returned.
    writeFileSync(join(root, 'src/b.ts'), 'export const b = 99\n')
    const r = await h.call('bash', { command: 'echo y > src/y.ts' }, { callId: 'b2' })
    expect(r.content).toBe('[exit code 0]\nnote: files changed outside any tool call: src/b.ts')
    expect(seen).toEqual([{ sessionId: h.session.id, callId: 'b2', paths: ['src/b.ts'] }])
    expect(await changes(h, 'b2')).toMatchObject({ created: ['src/y.ts'], modified: [], deleted: [] })
    await rollback(h, 'b2', 'x')
    // The out-of-band change is not undone by the rollback, and not reported again.
    expect(read(root, 'src/b.ts')).toBe('export const b = 99\n')
    const again = await h.call('write_file', { path: 'src/z.ts', content: 'z\n' }, { callId: 'w1' })
    expect(again.content).not.toContain('note:')
  })

  it('git apply touching three files is rolled back exactly', async () => {
    const root = workspace(files)
    execFileSync('git', ['init', '-q'], { cwd: root })
    const diff = [
      'diff --git a/src/a.ts b/src/a.ts', '--- a/src/a.ts', '+++ b/src/a.ts', '@@ -1 +1 @@', '-export const a = 1', '+export const a = "one"',
      'diff --git a/src/b.ts b/src/b.ts', 'deleted file mode 100644', '--- a/src/b.ts', '+++ /dev/null', '@@ -1 +0,0 @@', '-export const b = 2',
      'diff --git a/src/e.ts b/src/e.ts', 'new file mode 100644', '--- /dev/null', '+++ b/src/e.ts', '@@ -0,0 +1 @@', '+export const e = 5', '',
    ].join('\n')
    const patch = join(workspace(), 'change.patch')
    writeFileSync(patch, diff)
    const { h } = await judged({}, root)
    const before = listTree(root)
    const r = await h.call('bash', { command: `git apply ${patch}` }, { callId: 'g1' })
    expect(r.content).toBe('[exit code 0]')
    expect(await changes(h, 'g1')).toMatchObject({ created: ['src/e.ts'], modified: ['src/a.ts'], deleted: ['src/b.ts'] })
    await rollback(h, 'g1', 'x')
    expect(listTree(root)).toEqual(before)
  })

  it('a crash mid-command is undone by recovery from the pack (created gone, modified and deleted back)', async () => {
    const root = workspace(files)
    const vault = join(root, '.dsh')
    const s = new Snapshots({ root, vault, sessionId: 'dead', fsync: 'off' }, deadOwner())
    s.startTracking({ maxFileBytes: 1 << 20 })
    s.captureWorkspace({ key: 'call:sh1', callId: 'sh1' })
    const before = listTree(root)
    // The command runs and the harness is killed before it returns.
    execFileSync('sh', ['-c', 'echo broken > src/a.ts && rm src/lib/c.ts && mkdir -p gen && echo j > gen/junk.ts && echo z > dist/z.js'], { cwd: root })
    const report = await recoverVault(vault, { fsync: false })
    expect(formatRecovery(report)).toContain('  rolled back call sh1 (no verdict): restored src/a.ts, src/lib/c.ts; deleted gen/\n')
    expect({ ...listTree(root), 'dist/z.js': undefined }).toEqual(before)
    expect(readdirSync(join(vault, 'snapshots'))).toEqual([])
  })

  it('a command run in the same tick as the previous barrier is still measured (an earlier barrier\'s late event does not release the next)', async () => {
    const root = workspace(files)
    const s = new Snapshots({ root, vault: join(root, '.dsh'), sessionId: 's', fsync: 'off' })
    s.startTracking({ maxFileBytes: 1 << 20 })
    // refresh() resolves on the first event of its barrier write; the write's later events are still queued.
    await s.refresh()
    s.captureWorkspace({ key: 'call:t1', callId: 't1' })
    execFileSync('sh', ['-c', 'mkdir -p gen && echo x > gen/a.ts && echo y > src/b.ts'], { cwd: root })
    expect(await s.measureShell('t1')).toMatchObject({ created: ['gen/a.ts'], modified: ['src/b.ts'], deleted: [] })
    s.dispose()
    expect(readdirSync(join(root, '.dsh/snapshots')).filter(n => n.includes('.mark'))).toEqual([])
  })

  it('a command that created 20,000 files: measured, journalled, and recovered after a crash (every file deleted, the report summarised)', { timeout: 240_000 }, async () => {
    const root = workspace(files)
    const vault = join(root, '.dsh')
    const owner = deadOwner()
    const s = new Snapshots({ root, vault, sessionId: 'dead', fsync: 'off' }, owner)
    s.startTracking({ maxFileBytes: 1 << 20 })
    s.captureWorkspace({ key: 'call:many', callId: 'many' })
    const before = listTree(root)
    execFileSync('sh', ['-c', 'mkdir -p gen/a gen/b && i=0; while [ $i -lt 10000 ]; do echo "$i" > gen/a/f$i.ts; echo "$i" > gen/b/f$i.ts; i=$((i+1)); done'], { cwd: root })
    const measured = await s.measureShell('many')
    expect(measured?.created.length).toBe(20_000)
    // The harness is killed before the verdict.
    const report = await recoverVault(vault, { fsync: false })
    expect(formatRecovery(report)).toBe([
      `dead.${owner.instance}.journal (session dead, pid ${owner.pid}):`,
      '  rolled back call many (no verdict): deleted gen/a/f0.ts, gen/a/f1.ts, gen/a/f10.ts, gen/a/f100.ts, gen/a/f1000.ts, gen/a/f1001.ts, gen/a/f1002.ts, gen/a/f1003.ts and 19995 more',
      '  journal removed',
      '',
    ].join('\n'))
    expect(listTree(root)).toEqual(before)
  })

  it("shell: 'off' leaves shell calls alone", async () => {
    const { root, h } = await judged({ shell: 'off' })
    await h.call('bash', { command: 'echo x > src/a.ts' }, { callId: 'o1' })
    expect(h.ctx.bail('snapshot/tracked', { sessionId: h.session.id, callId: 'o1' })).toBeUndefined()
    expect(await changes(h, 'o1')).toBeUndefined()
    expect(existsSync(join(root, '.dsh/snapshots'))).toBe(false)
  })

  it('a file written after a command returned, by a process outside any call, is out of band', async () => {
    const { root, h } = await judged()
    await h.call('bash', { command: 'true' }, { callId: 'bg1' })
    expect(await changes(h, 'bg1')).toMatchObject({ created: [], modified: [], deleted: [] })
    commit(h, 'bg1')
    // Not the command's own background job: that ends with its call (dsh-tools-workspace's isolation).
    await execFileAsync('sh', ['-c', 'sleep 0.3; echo late > src/late.ts'], { cwd: root })
    const r = await h.call('bash', { command: 'true' }, { callId: 'bg2' })
    expect(r.content).toBe('[exit code 0]\nnote: files changed outside any tool call: src/late.ts')
  })
})
