import { describe, expect, it } from 'vitest'
import { appendFileSync, existsSync, mkdirSync, readdirSync, realpathSync, renameSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import {
  currentOwner, formatRecovery, JournalWriter, listJournals, readJournal, recoverVault, Snapshots, type RecoveryReport,
} from 'dsh-snapshot'
import { boot, deadOwner, read, workspace } from './helpers.ts'

function crashed(root: string, owner = deadOwner(), sessionId = 'crashed') {
  return new Snapshots({ root, vault: join(root, '.dsh'), sessionId, fsync: 'off' }, owner)
}

/** A dead writer's journal whose last record, the capture of a.txt ('old content') before its write ('NEW'), lost its last `bytes`. */
function cutLastCapture(bytes: number) {
  const root = workspace({ 'a.txt': 'old content' })
  const s = crashed(root)
  s.capture({ key: 'call:c1', callId: 'c1' }, ['a.txt'])
  writeFileSync(join(root, 'a.txt'), 'NEW')
  const file = s.journalFile!
  truncateSync(file, statSync(file).size - bytes)
  return { root, file }
}

describe('recovery of journals left by a dead process', () => {
  it('at plugin start: a write without a verdict is rolled back and the journal removed', async () => {
    const root = workspace({ 'a.txt': 'old', 'keep.txt': 'k' })
    const s = crashed(root)
    s.capture({ key: 'call:c1', callId: 'c1' }, ['a.txt', 'gen/new.txt'])
    writeFileSync(join(root, 'a.txt'), 'half-done')
    mkdirSync(join(root, 'gen'))
    writeFileSync(join(root, 'gen/new.txt'), 'new')
    // The process "dies" here: the journal is never closed.
    const h = await boot(root)
    const recovered = new Promise<RecoveryReport>(done => h.ctx.on('snapshot/recovered', done))
    expect(h.session.cwd).toBe(root) // its creation prepares the session's vault
    const report = await recovered
    expect(read(root, 'a.txt')).toBe('old')
    expect(existsSync(join(root, 'gen'))).toBe(false)
    expect(listJournals(join(root, '.dsh'))).toEqual([])
    expect(report.journals[0]!.scopes).toEqual([{
      scope: 's1', label: 'call c1', callIds: ['c1'], verdict: 'none', action: 'rolled back',
      restored: ['a.txt'], deleted: ['gen/new.txt', 'gen/'], failed: [],
    }])
  })

  it('drops a committed scope and finishes a rollback cut short; a last record cut inside its line keeps the journal, and says so', async () => {
    const root = workspace({ 'a.txt': 'a0', 'b.txt': 'b0' })
    const owner = deadOwner()
    const s = crashed(root, owner)
    s.capture({ key: 'call:c1', callId: 'c1' }, ['b.txt'])
    writeFileSync(join(root, 'b.txt'), 'b1')
    s.capture({ key: 'call:c2', callId: 'c2' }, ['a.txt'])
    writeFileSync(join(root, 'a.txt'), 'a1')
    s.commit({ callId: 'c1' })
    // The rollback of c2 got its verdict on disk, then the process died before restoring.
    const file = s.journalFile!
    const w = JournalWriter.adopt(readJournal(file), owner, 'off')
    w.append([{ record: { t: 'verdict', scope: 's2', verdict: 'rollback', reason: 'tests failed' } }])
    w.close()
    const at = statSync(file).size
    const cut = '{"t":"cap","scope":"s3","entry":{"kind":"file","path":"c.txt","mode":420,"size":9'
    appendFileSync(file, cut)
    const report = await recoverVault(join(root, '.dsh'), { fsync: false })
    expect(read(root, 'a.txt')).toBe('a0')
    expect(read(root, 'b.txt')).toBe('b1')
    expect(formatRecovery(report)).toBe([
      `${basename(file)} (session crashed, pid ${owner.pid}):`,
      '  finished rollback call c2 (rollback: tests failed): restored a.txt',
      '  dropped call c1 (committed)',
      `  the last record (a cap record, ${cut.length} bytes at byte ${at}) was cut short before its end: what it recorded is lost (a verdict, a capture, a rollback's end); every write the readable records show was settled. The journal is kept: check the workspace for a write it no longer shows (e.g. git status), then delete ${file}`,
      '',
    ].join('\n'))
    expect(existsSync(file)).toBe(true)
  })

  it('removes the temp files a killed atomic write left, before removing the directories it created', async () => {
    const root = workspace({ 'src/a.txt': 'old' })
    const owner = deadOwner()
    const s = crashed(root, owner)
    s.capture({ key: 'call:c1', callId: 'c1' }, ['src/a.txt', 'gen/deep/n.txt'])
    writeFileSync(join(root, 'src', `.a.txt.${owner.pid}.0badf00d.tmp`), 'half a write')
    writeFileSync(join(root, 'src', '.a.txt.1.0badf00d.tmp'), 'another process: not ours to remove')
    // Killed inside writeFileAtomic: the directories exist, the temp file too, the target not yet.
    mkdirSync(join(root, 'gen/deep'), { recursive: true })
    writeFileSync(join(root, 'gen/deep', `.n.txt.${owner.pid}.12345678.tmp`), 'half')
    const report = await recoverVault(join(root, '.dsh'), { fsync: false })
    expect(report.journals[0]!.debris).toEqual([`src/.a.txt.${owner.pid}.0badf00d.tmp`, `gen/deep/.n.txt.${owner.pid}.12345678.tmp`])
    expect(report.journals[0]!.scopes[0]!.deleted).toEqual(['gen/deep/', 'gen/'])
    expect(readdirSync(join(root, 'src')).sort()).toEqual(['.a.txt.1.0badf00d.tmp', 'a.txt'])
    expect(existsSync(join(root, 'gen'))).toBe(false)
  })

  it('leaves a journal whose writer is alive, unless forced', async () => {
    const root = workspace({ 'a.txt': 'old' })
    const alive = { ...currentOwner(), pid: process.ppid, start: undefined, boot: undefined, instance: 'alive-1' }
    const s = crashed(root, alive)
    s.capture({ key: 'call:c1', callId: 'c1' }, ['a.txt'])
    writeFileSync(join(root, 'a.txt'), 'in progress elsewhere')
    const report = await recoverVault(join(root, '.dsh'), { fsync: false })
    expect(report.journals).toEqual([])
    expect(formatRecovery(report)).toBe(`skipped ${basename(s.journalFile!)}: its writer (pid ${process.ppid}) is still running\n`)
    expect(read(root, 'a.txt')).toBe('in progress elsewhere')
    const forced = await recoverVault(join(root, '.dsh'), { fsync: false, force: true })
    expect(forced.journals[0]!.removed).toBe(true)
    expect(read(root, 'a.txt')).toBe('old')
  })

  it('skips journals of another workspace sharing the vault', async () => {
    const root = workspace({ 'a.txt': 'old' })
    const other = workspace()
    crashed(root).capture({ key: 'call:c1', callId: 'c1' }, ['a.txt'])
    const report = await recoverVault(join(root, '.dsh'), { fsync: false, workspace: other })
    expect(report.skipped.map(s => s.reason)).toEqual([`it belongs to workspace ${crashed(root).root}`])
  })

  it('keeps a journal when a path cannot be restored, and finishes once it can', async () => {
    const outside = workspace()
    const root = workspace({ 'src/a.txt': 'old' })
    const s = crashed(root)
    s.capture({ key: 'call:c1', callId: 'c1' }, ['src/a.txt'])
    rmSync(join(root, 'src'), { recursive: true })
    symlinkSync(outside, join(root, 'src'))
    const first = await recoverVault(join(root, '.dsh'), { fsync: false })
    expect(first.journals[0]!.removed).toBe(false)
    expect(formatRecovery(first)).toContain('  some paths could not be restored; journal kept (fix them and run dsh recover again)\n')
    expect(readdirSync(outside)).toEqual([])
    rmSync(join(root, 'src'))
    const second = await recoverVault(join(root, '.dsh'), { fsync: false })
    expect(second.journals[0]!.removed).toBe(true)
    expect(read(root, 'src/a.txt')).toBe('old')
  })

  it('a damaged journal: nothing is restored (what follows the damage may have settled it), the journal stays where it is, the user is told what to do; resolved up to the damage only when asked', async () => {
    const root = workspace({ 'a.txt': 'old' })
    const s = crashed(root)
    s.capture({ key: 'call:c1', callId: 'c1' }, ['a.txt'])
    writeFileSync(join(root, 'a.txt'), 'new')
    const file = s.journalFile!
    const at = statSync(file).size
    appendFileSync(file, 'this is not a record\n{"t":"verdict"}\n')
    for (let run = 0; run < 2; run++) {
      const report = await recoverVault(join(root, '.dsh'), { fsync: false })
      expect(read(root, 'a.txt')).toBe('new')
      expect(formatRecovery(report).split('\n').slice(1)).toEqual([
        '  not restored call c1 (no verdict that can be read)',
        `  damaged journal: unreadable record at byte ${at}; what follows it (verdicts, rollbacks, later writes) cannot be read; how call c1 ended cannot be proven, so nothing of it was restored. The journal is kept: check a.txt (e.g. git diff), then run dsh recover --workspace ${realpathSync(root)} --restore-unproven to put back what the readable records captured, or delete ${file} to keep the files as they are`,
        '',
      ])
      expect(listJournals(join(root, '.dsh'))).toEqual([file])
    }
    const asked = await recoverVault(join(root, '.dsh'), { fsync: false, restoreUnproven: true })
    expect(read(root, 'a.txt')).toBe('old')
    expect(asked.journals[0]!.damage).toBe(`unreadable record at byte ${at}`)
    expect(existsSync(`${file}.damaged`)).toBe(true)
    expect(listJournals(join(root, '.dsh'))).toEqual([])
  })

  describe('a last record cut inside its line', () => {
    /** A dead writer's journal: c1 committed, c2 written and captured, then `tail` appended (a record being written when it died). */
    function withTail(tail: (file: string, owner: ReturnType<typeof deadOwner>) => void) {
      const root = workspace({ 'a.txt': 'a0', 'b.txt': 'b0' })
      const owner = deadOwner()
      const s = crashed(root, owner)
      s.capture({ key: 'call:c1', callId: 'c1' }, ['b.txt'])
      writeFileSync(join(root, 'b.txt'), 'b1')
      s.capture({ key: 'call:c2', callId: 'c2' }, ['a.txt', 'gen/new.txt'])
      writeFileSync(join(root, 'a.txt'), 'a1')
      mkdirSync(join(root, 'gen'))
      writeFileSync(join(root, 'gen/new.txt'), 'n')
      s.commit({ callId: 'c1' })
      const file = s.journalFile!
      tail(file, owner)
      return { root, file, real: realpathSync(root) }
    }
    /** Append whole records as the writer would, then cut the file `cut` bytes short. */
    const appendCut = (records: Parameters<JournalWriter['append']>[0], cut: number) => (file: string, owner: ReturnType<typeof deadOwner>) => {
      const w = JournalWriter.adopt(readJournal(file), owner, 'off')
      w.append(records)
      w.close()
      truncateSync(file, statSync(file).size - cut)
    }

    it('a verdict cut short: the write it may have settled is not restored, the journal is kept, and what to do is said; restored only when asked', async () => {
      for (const cut of [2, 20, 40]) {
        const at = { size: 0 }
        const { root, file, real } = withTail((f, owner) => {
          at.size = statSync(f).size
          appendCut([{ record: { t: 'verdict', scope: 's2', verdict: 'commit' } }], cut)(f, owner)
        })
        const line = `{"t":"verdict","scope":"s2","verdict":"commit","g":1}`.length - cut + 1
        const report = await recoverVault(join(root, '.dsh'), { fsync: false })
        expect(formatRecovery(report).split('\n').slice(1), `cut ${cut}`).toEqual([
          '  not restored call c2 (no verdict that can be read)',
          '  dropped call c1 (committed)',
          `  the last record (a verdict record, ${line} bytes at byte ${at.size}) was cut short before its end: what it recorded is lost (a verdict, a capture, a rollback's end); how call c2 ended cannot be proven, so nothing of it was restored. The journal is kept: check a.txt, gen/new.txt (e.g. git diff), then run dsh recover --workspace ${real} --restore-unproven to put back what the readable records captured, or delete ${file} to keep the files as they are`,
          '',
        ])
        expect([read(root, 'a.txt'), read(root, 'b.txt'), read(root, 'gen/new.txt')]).toEqual(['a1', 'b1', 'n'])
        expect(listJournals(join(root, '.dsh'))).toEqual([file])
        const asked = await recoverVault(join(root, '.dsh'), { fsync: false, restoreUnproven: true })
        expect(formatRecovery(asked).split('\n').slice(1, 3)).toEqual([
          `  the last record (a verdict record, ${line} bytes at byte ${at.size}) was cut short before its end: what it recorded is lost (a verdict, a capture, a rollback's end); resolved from the records before it, as asked (--restore-unproven)`,
          '  rolled back call c2 (no verdict): restored a.txt; deleted gen/new.txt, gen/',
        ])
        expect([read(root, 'a.txt'), read(root, 'b.txt'), existsSync(join(root, 'gen'))]).toEqual(['a0', 'b1', false])
        expect(listJournals(join(root, '.dsh'))).toEqual([])
      }
    })

    it('cut before its type can be read: the same', async () => {
      const { root, file } = withTail(f => appendFileSync(f, '{"t'))
      const report = await recoverVault(join(root, '.dsh'), { fsync: false })
      expect(report.journals[0]!.problem).toMatch(/^the last record \(cut before its type, 3 bytes at byte \d+\) was cut short before its end: what it recorded is lost \(a verdict, a capture, a rollback's end\); how call c2 ended cannot be proven/)
      expect(read(root, 'a.txt')).toBe('a1')
      expect(listJournals(join(root, '.dsh'))).toEqual([file])
    })

    it('a cut record that names a capture is no proof either (a journal truncated later looks the same); a rollback with its verdict on disk is finished whatever was cut after it', async () => {
      const captured = withTail(f => appendFileSync(f, '{"t":"open","scope":"s3","key":"call:c3","callIds":["c3"],"ti'))
      const first = await recoverVault(join(captured.root, '.dsh'), { fsync: false })
      expect(first.journals[0]!.problem).toMatch(/^the last record \(an open record, 61 bytes at byte \d+\) was cut short before its end: what it recorded is lost \(a verdict, a capture, a rollback's end\); how call c2 ended cannot be proven/)
      expect(read(captured.root, 'a.txt')).toBe('a1')

      const rolling = withTail(appendCut([{ record: { t: 'verdict', scope: 's2', verdict: 'rollback', reason: 'tests failed' } }, { record: { t: 'done', scope: 's2', failed: 0 } }], 5))
      const report = await recoverVault(join(rolling.root, '.dsh'), { fsync: false })
      expect(formatRecovery(report).split('\n').slice(1)).toEqual([
        '  finished rollback call c2 (rollback: tests failed): restored a.txt; deleted gen/new.txt, gen/',
        '  dropped call c1 (committed)',
        expect.stringMatching(/^ {2}the last record \(a done record, \d+ bytes at byte \d+\) was cut short before its end: what it recorded is lost \(a verdict, a capture, a rollback's end\); every write the readable records show was settled\. The journal is kept: check the workspace for a write it no longer shows \(e\.g\. git status\), then delete /),
        '',
      ])
      expect(read(rolling.root, 'a.txt')).toBe('a0')
      expect(listJournals(join(rolling.root, '.dsh'))).toEqual([rolling.file])
    })

    it('a whole record that lacks only its newline is used', async () => {
      const { root } = withTail(appendCut([{ record: { t: 'verdict', scope: 's2', verdict: 'commit' } }], 1))
      const report = await recoverVault(join(root, '.dsh'), { fsync: false })
      expect(formatRecovery(report).split('\n').slice(1)).toEqual([
        '  the last record (verdict record) lacks its closing newline; its bytes are whole and were used',
        '  dropped call c2 (committed)',
        '  dropped call c1 (committed)',
        '  journal removed',
        '',
      ])
      expect(read(root, 'a.txt')).toBe('a1')
    })
  })

  it('a last capture that lacks only its closing newline is whole: it is used, and the file put back', async () => {
    const { root } = cutLastCapture(1)
    const report = await recoverVault(join(root, '.dsh'), { fsync: false })
    expect(read(root, 'a.txt')).toBe('old content')
    expect(formatRecovery(report).split('\n').slice(1)).toEqual([
      '  the last record (capture of a.txt) lacks its closing newline; its bytes are whole and were used',
      '  rolled back call c1 (no verdict): restored a.txt',
      '  journal removed',
      '',
    ])
  })

  it('a last capture cut short, with the file no longer matching it: nothing is claimed, the journal is kept, the user told what to do', async () => {
    const { root, file } = cutLastCapture(5)
    for (let run = 0; run < 2; run++) {
      const report = await recoverVault(join(root, '.dsh'), { fsync: false })
      expect(formatRecovery(report).split('\n').slice(1)).toEqual([
        `  the last record, a capture of a.txt, ends early (7 of 11 bytes) and a.txt no longer matches it: its write may have run, and this journal cannot prove what a.txt held before. Nothing was restored or removed; the journal is kept as evidence: check a.txt (e.g. git diff), then delete ${file}`,
        '',
      ])
      expect(report.journals[0]!.removed).toBe(false)
      expect(read(root, 'a.txt')).toBe('NEW')
      expect(listJournals(join(root, '.dsh'))).toEqual([file])
    }
  })

  it('a last capture cut short while the file still matches it (a crash before the write): resolved as before', async () => {
    const root = workspace({ 'a.txt': 'old content', 'b.txt': 'b0' })
    const s = crashed(root)
    s.capture({ key: 'call:c1', callId: 'c1' }, ['b.txt'])
    writeFileSync(join(root, 'b.txt'), 'b1')
    s.capture({ key: 'call:c2', callId: 'c2' }, ['a.txt'])
    const file = s.journalFile!
    truncateSync(file, statSync(file).size - 5)
    const report = await recoverVault(join(root, '.dsh'), { fsync: false })
    expect(read(root, 'b.txt')).toBe('b0')
    expect(read(root, 'a.txt')).toBe('old content')
    expect(report.journals[0]!.removed).toBe(true)
    expect(formatRecovery(report)).toContain('  the last record was cut short by the crash (its write had not started); ignored\n')
  })

  it('a moved workspace: the journal is reported with what to do, not skipped, and kept', async () => {
    const root = workspace({ 'a.txt': 'old' })
    const s = crashed(root)
    s.capture({ key: 'call:c1', callId: 'c1' }, ['a.txt'])
    writeFileSync(join(root, 'a.txt'), 'new')
    const moved = `${root}-moved`
    renameSync(root, moved)
    const file = join(moved, '.dsh', 'snapshots', basename(s.journalFile!))
    const report = await recoverVault(join(moved, '.dsh'), { fsync: false, workspace: moved })
    expect(report.skipped).toEqual([])
    expect(formatRecovery(report).split('\n').slice(1)).toEqual([
      `  workspace ${root} no longer exists (moved or deleted?); journal kept: move the workspace back to ${root} and run dsh recover --workspace ${root} again, or delete ${file} if none of its writes matter any more`,
      '',
    ])
    expect(existsSync(file)).toBe(true)
    renameSync(moved, root)
    expect((await recoverVault(join(root, '.dsh'), { fsync: false, workspace: root })).journals[0]!.removed).toBe(true)
    expect(read(root, 'a.txt')).toBe('old')
  })

  it('nothing to recover', async () => {
    const root = workspace()
    expect(formatRecovery(await recoverVault(join(root, '.dsh')))).toBe(`nothing to recover in ${join(root, '.dsh', 'snapshots')}\n`)
  })
})
