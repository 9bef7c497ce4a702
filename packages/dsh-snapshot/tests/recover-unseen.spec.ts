import { describe, expect, it } from 'vitest'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { formatRecovery, JournalWriter, listJournals, readJournal, recoverVault, Snapshots } from 'dsh-snapshot'
import { deadOwner, read, workspace } from './helpers.ts'

/** A dead host's journal: tools ran elsewhere (an agent), `elsewhere` on. */
function crashedHost(root: string) {
  return new Snapshots({ root, vault: join(root, '.dsh'), sessionId: 'agent', fsync: 'off', elsewhere: true }, deadOwner())
}

describe('recovery never undoes what it did not see', () => {
  it('restores a file still as the interrupted call left it, and keeps one written after it', async () => {
    const root = workspace({ 'a.ts': 'a0', 'b.ts': 'b0' })
    const s = crashedHost(root)
    s.capture({ key: 'call:c1', callId: 'c1' }, ['a.ts', 'b.ts'])
    writeFileSync(join(root, 'a.ts'), 'a1 (the call)')
    writeFileSync(join(root, 'b.ts'), 'b1 (the call)')
    s.notePost('c1')
    // The host dies while judging; then the agent's next write lands on b.ts.
    writeFileSync(join(root, 'b.ts'), 'b2 (a later Edit)')
    const report = await recoverVault(join(root, '.dsh'))
    expect(read(root, 'a.ts')).toBe('a0')
    expect(read(root, 'b.ts')).toBe('b2 (a later Edit)')
    expect(report.journals[0]!.scopes).toEqual([{
      scope: 's1', label: 'call c1', callIds: ['c1'], verdict: 'none', action: 'rolled back',
      restored: ['a.ts'], deleted: [], failed: [], left: [{ path: 'b.ts', why: 'changed' }],
    }])
    expect(formatRecovery(report).split('\n').slice(1, 3)).toEqual([
      '  rolled back call c1 (no verdict): restored a.ts',
      '    left b.ts as it is: written after the interrupted call (kept; recovery never undoes what it did not see)',
    ])
    expect(listJournals(join(root, '.dsh'))).toEqual([])
  })

  it('leaves every file of a call whose result never reached the guard, and says why', async () => {
    const root = workspace({ 'a.ts': 'a0', 'same.ts': 's0' })
    const s = crashedHost(root)
    s.capture({ key: 'call:c1', callId: 'c1' }, ['a.ts', 'same.ts', 'new.ts'])
    // The host died between the pre and post hooks; the agent wrote a.ts (the call's or a later write: unknown).
    writeFileSync(join(root, 'a.ts'), 'a1')
    const report = await recoverVault(join(root, '.dsh'))
    expect(read(root, 'a.ts')).toBe('a1')
    expect(report.journals[0]!.scopes[0]).toMatchObject({ action: 'left as it is', restored: [], deleted: [], left: [{ path: 'a.ts', why: 'unseen' }] })
    expect(formatRecovery(report)).toContain("  left a.ts as it is: the call ran in the agent and its result never reached the guard (kept; whether it holds that call's write or a later one cannot be told)")
  })

  it('finishes a rollback cut short only where the file still holds what the call left or its pre-image', async () => {
    const root = workspace({ 'a.ts': 'a0', 'b.ts': 'b0' })
    const s = crashedHost(root)
    s.capture({ key: 'call:c1', callId: 'c1' }, ['a.ts', 'b.ts'])
    writeFileSync(join(root, 'a.ts'), 'a1')
    writeFileSync(join(root, 'b.ts'), 'b1')
    s.notePost('c1')
    // Judged a regression: the verdict is on disk, then the host died before restoring anything.
    const w = JournalWriter.adopt(readJournal(s.journalFile!), deadOwner(), 'off')
    w.append([{ record: { t: 'verdict', scope: 's1', verdict: 'rollback', reason: 'typecheck failed' } }])
    w.close()
    writeFileSync(join(root, 'b.ts'), 'b2 (the user)')
    const report = await recoverVault(join(root, '.dsh'))
    expect([read(root, 'a.ts'), read(root, 'b.ts')]).toEqual(['a0', 'b2 (the user)'])
    expect(report.journals[0]!.scopes[0]).toMatchObject({ action: 'finished rollback', restored: ['a.ts'], left: [{ path: 'b.ts', why: 'changed' }] })
  })

  it('without elsewhere (tools in the writing process), a scope with no post record is rolled back as before', async () => {
    const root = workspace({ 'a.ts': 'a0' })
    const s = new Snapshots({ root, vault: join(root, '.dsh'), sessionId: 'run', fsync: 'off' }, deadOwner())
    s.capture({ key: 'call:c1', callId: 'c1' }, ['a.ts'])
    writeFileSync(join(root, 'a.ts'), 'half-written')
    await recoverVault(join(root, '.dsh'))
    expect(read(root, 'a.ts')).toBe('a0')
  })
})
