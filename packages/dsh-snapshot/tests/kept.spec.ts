import { existsSync, readdirSync, utimesSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { KeptStore, keptDir, Snapshots, type KeptRecord } from 'dsh-snapshot'
import { tempDir } from 'dsh-testkit'
import { workspace, writeTree } from './helpers.ts'

const blobs = (vault: string) => {
  const root = join(keptDir(vault), 'blobs')
  return existsSync(root) ? readdirSync(root).flatMap(d => readdirSync(join(root, d))) : []
}

describe('kept calls (before and after images for dsh undo and dsh review)', () => {
  it('keeps what a committed call and a rolled-back call changed, and nothing of unchanged paths', async () => {
    const root = workspace({ 'a.txt': 'a\n', 'same.txt': 's\n' })
    const vault = join(root, '.dsh')
    const snaps = new Snapshots({ root, vault, sessionId: 's1', fsync: 'off' })
    snaps.capture({ key: 'call:c1', callId: 'c1' }, ['a.txt', 'same.txt', 'new/b.txt'])
    writeTree(root, { 'a.txt': 'A\n', 'new/b.txt': 'b\n' })
    snaps.commit({ callId: 'c1' })
    snaps.capture({ key: 'call:c2', callId: 'c2' }, ['a.txt'])
    writeTree(root, { 'a.txt': 'broken\n' })
    await snaps.rollback({ callId: 'c2' }, 'typecheck failed')
    snaps.dispose()

    const store = new KeptStore(vault)
    const [kept, rolled] = store.read() as [KeptRecord, KeptRecord]
    expect(kept).toMatchObject({ sessionId: 's1', callIds: ['c1'], kind: 'commit' })
    expect(kept.changes.map(c => [c.path, c.before.k, c.after.k])).toEqual([['a.txt', 'file', 'file'], ['new/b.txt', 'absent', 'file']])
    expect(kept.changes[1]!.before).toEqual({ k: 'absent', dirs: ['new'] })
    const text = (s: { k: string; sha?: string }) => store.get(s.sha!)!.toString()
    expect([text(kept.changes[0]!.before), text(kept.changes[0]!.after)]).toEqual(['a\n', 'A\n'])
    expect(rolled).toMatchObject({ callIds: ['c2'], kind: 'rollback', reason: 'typecheck failed' })
    expect([text(rolled.changes[0]!.before), text(rolled.changes[0]!.after)]).toEqual(['A\n', 'broken\n'])
  })

  it('keeps nothing with keepBytes 0', () => {
    const root = workspace({ 'a.txt': 'a\n' })
    const snaps = new Snapshots({ root, vault: join(root, '.dsh'), sessionId: 's1', fsync: 'off', keepBytes: 0 })
    snaps.capture({ key: 'call:c1', callId: 'c1' }, ['a.txt'])
    writeTree(root, { 'a.txt': 'A\n' })
    snaps.commit({ callId: 'c1' })
    expect(new KeptStore(join(root, '.dsh')).read()).toEqual([])
  })

  it('prunes past the age and size bounds, oldest first, never a live session, and says so; blobs still named stay', () => {
    const vault = tempDir('dsh-kept-')
    const store = new KeptStore(vault)
    const day = 86_400_000
    const now = Date.now()
    const record = (id: string, sessionId: string, time: number, data: string): KeptRecord => {
      const sha = store.put(Buffer.from(data))
      return { v: 1, id, sessionId, callIds: [id], time, kind: 'commit', changes: [{ path: 'f', before: { k: 'absent' }, after: { k: 'file', mode: 0o644, size: data.length, sha } }], bytes: data.length }
    }
    store.append(record('old', 's0', now - 8 * day, 'x'.repeat(100)))
    store.append(record('live-old', 'live', now - 9 * day, 'y'.repeat(100)))
    store.append(record('big', 's1', now - day, 'z'.repeat(600)))
    store.append(record('new', 's2', now, 'w'.repeat(300)))
    // Blobs untouched for a minute may go; the one 'new' names stays either way.
    const past = new Date(now - 120_000)
    for (const d of readdirSync(join(keptDir(vault), 'blobs'))) for (const f of readdirSync(join(keptDir(vault), 'blobs', d))) utimesSync(join(keptDir(vault), 'blobs', d, f), past, past)

    const pruned = store.prune({ maxBytes: 500, maxAgeMs: 7 * day }, new Set(['live']), now)
    expect(pruned).toEqual(['old', 'big'])
    const after = store.read()
    expect(after.map(r => [r.id, r.pruned?.why])).toEqual([
      ['old', 'older than 7 days'], ['live-old', undefined], ['big', 'over the 0.5 KiB kept for undo'], ['new', undefined],
    ])
    expect(blobs(vault)).toHaveLength(2)
    expect(store.get((after[3]!.changes[0]!.after as { sha: string }).sha)?.toString()).toBe('w'.repeat(300))
  })
})
