import { describe, expect, it } from 'vitest'
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, symlinkSync, unlinkSync, writeFileSync, rmSync, lstatSync, readlinkSync } from 'node:fs'
import { join } from 'node:path'
import { Snapshots, SnapshotError, readJournal } from 'dsh-snapshot'
import { listTree, read, workspace } from './helpers.ts'

function snaps(root: string, extra: Partial<ConstructorParameters<typeof Snapshots>[0]> = {}) {
  return new Snapshots({ root, vault: join(root, '.dsh'), sessionId: 'lib', fsync: 'off', ...extra })
}

const call = (id: string, step?: number) => ({ key: `call:${id}`, callId: id, ...(step === undefined ? {} : { step }) })

describe('capture and rollback of one scope', () => {
  it('puts a modified file back and reports it', async () => {
    const root = workspace({ 'a.txt': 'old' })
    const s = snaps(root)
    expect(s.capture(call('c1'), ['a.txt'])).toEqual({ scope: 's1', captured: ['a.txt'], kept: [], bytes: 3 })
    writeFileSync(join(root, 'a.txt'), 'new')
    const r = await s.rollback({ callId: 'c1' }, 'test')
    expect(r).toEqual({ matched: true, restored: ['a.txt'], deleted: [], failed: [], message: 'rolled back call c1: restored a.txt' })
    expect(read(root, 'a.txt')).toBe('old')
  })

  it('first capture wins within an open scope', async () => {
    const root = workspace({ 'a.txt': 'v0' })
    const s = snaps(root)
    s.capture(call('c1'), ['a.txt'])
    writeFileSync(join(root, 'a.txt'), 'v1')
    expect(s.capture(call('c1'), ['a.txt', 'a.txt'])).toMatchObject({ captured: [], kept: ['a.txt'] })
    writeFileSync(join(root, 'a.txt'), 'v2')
    await s.rollback({ callId: 'c1' }, 'test')
    expect(read(root, 'a.txt')).toBe('v0')
  })

  it('a path that did not exist is deleted on rollback, with the directories the write created', async () => {
    const root = workspace({ 'keep/old.txt': 'x' })
    const s = snaps(root)
    s.capture(call('c1'), ['new/deeper/file.txt', 'keep/n.txt'])
    mkdirSync(join(root, 'new/deeper'), { recursive: true })
    writeFileSync(join(root, 'new/deeper/file.txt'), 'created')
    writeFileSync(join(root, 'keep/n.txt'), 'created')
    const before = listTree(root)
    const r = await s.rollback({ callId: 'c1' }, 'test')
    expect(r.deleted).toEqual(['new/deeper/file.txt', 'keep/n.txt', 'new/deeper/', 'new/'])
    expect(r.message).toBe('rolled back call c1: deleted new/deeper/file.txt, keep/n.txt, new/deeper/, new/')
    expect(listTree(root)).toEqual({ 'keep/': before['keep/'], 'keep/old.txt': before['keep/old.txt'] })
  })

  it('a created directory that now holds something else is left in place', async () => {
    const root = workspace()
    const s = snaps(root)
    s.capture(call('c1'), ['gen/a.txt'])
    mkdirSync(join(root, 'gen'))
    writeFileSync(join(root, 'gen/a.txt'), 'a')
    writeFileSync(join(root, 'gen/other.txt'), 'not captured')
    const r = await s.rollback({ callId: 'c1' }, 'test')
    expect(r.deleted).toEqual(['gen/a.txt'])
    expect(read(root, 'gen/other.txt')).toBe('not captured')
  })

  it('restores mode bits, including a mode-only change', async () => {
    const root = workspace({ 'run.sh': { mode: 0o755, data: '#!/bin/sh\n' }, 'secret': { mode: 0o600, data: 's' } })
    const s = snaps(root)
    s.capture(call('c1'), ['run.sh', 'secret'])
    chmodSync(join(root, 'run.sh'), 0o644)
    writeFileSync(join(root, 'secret'), 'changed')
    chmodSync(join(root, 'secret'), 0o666)
    const r = await s.rollback({ callId: 'c1' }, 'test')
    expect(r.restored).toEqual(['run.sh', 'secret'])
    expect(statSync(join(root, 'run.sh')).mode & 0o7777).toBe(0o755)
    expect(statSync(join(root, 'secret')).mode & 0o7777).toBe(0o600)
    expect(read(root, 'secret')).toBe('s')
  })

  it('is binary-safe, byte for byte', async () => {
    const bytes = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7919) % 256))
    const root = workspace({ 'blob.bin': bytes, 'empty': '' })
    const s = snaps(root)
    s.capture(call('c1'), ['blob.bin', 'empty'])
    writeFileSync(join(root, 'blob.bin'), 'text now')
    writeFileSync(join(root, 'empty'), Buffer.from([0, 255, 10]))
    await s.rollback({ callId: 'c1' }, 'test')
    expect(readFileSync(join(root, 'blob.bin')).equals(bytes)).toBe(true)
    expect(readFileSync(join(root, 'empty')).length).toBe(0)
  })

  it('unchanged files are not rewritten and the message says nothing had changed', async () => {
    const root = workspace({ 'a.txt': 'same' })
    const s = snaps(root)
    s.capture(call('c1'), ['a.txt', 'never-created.txt'])
    const ino = statSync(join(root, 'a.txt')).ino
    const r = await s.rollback({ callId: 'c1' }, 'test')
    expect(r).toMatchObject({ matched: true, restored: [], deleted: [], message: 'rolled back call c1: nothing had changed' })
    expect(statSync(join(root, 'a.txt')).ino).toBe(ino)
  })
})

describe('symlinks', () => {
  it('refuses a path that leaves the workspace through a symlink, and records nothing', () => {
    const outside = workspace({ 'target.txt': 'outside' })
    const root = workspace({ 'link': { symlink: outside }, 'file-link': { symlink: join(outside, 'target.txt') } })
    const s = snaps(root)
    for (const p of ['link/target.txt', 'file-link', '../escape.txt', join(outside, 'target.txt')]) {
      let caught: unknown
      try {
        s.capture(call('c1'), ['ok.txt', p])
      } catch (error) {
        caught = error
      }
      expect(caught).toBeInstanceOf(SnapshotError)
      expect(caught).toMatchObject({ code: 'SNAPSHOT', reason: 'escape', message: `path "${p}" is outside the workspace ${s.root}` })
    }
    expect(s.openScopes).toBe(0)
    expect(s.journalFile).toBeUndefined()
  })

  it('a symlink inside the workspace is captured through to its target', async () => {
    const root = workspace({ 'real.txt': 'real', 'alias.txt': { symlink: 'real.txt' } })
    const s = snaps(root)
    expect(s.capture(call('c1'), ['alias.txt']).captured).toEqual(['real.txt'])
    writeFileSync(join(root, 'real.txt'), 'changed through the alias')
    await s.rollback({ callId: 'c1' }, 'test')
    expect(read(root, 'real.txt')).toBe('real')
    expect(readlinkSync(join(root, 'alias.txt'))).toBe('real.txt')
  })

  it('a dangling symlink is captured as a link and recreated, never followed', async () => {
    const outside = workspace()
    const root = workspace({ 'dangling': { symlink: join(outside, 'nothing-here') } })
    const s = snaps(root)
    s.capture(call('c1'), ['dangling'])
    unlinkSync(join(root, 'dangling'))
    writeFileSync(join(root, 'dangling'), 'replaced the link with a file')
    const r = await s.rollback({ callId: 'c1' }, 'test')
    expect(r.restored).toEqual(['dangling'])
    expect(lstatSync(join(root, 'dangling')).isSymbolicLink()).toBe(true)
    expect(readlinkSync(join(root, 'dangling'))).toBe(join(outside, 'nothing-here'))
    expect(existsSync(join(outside, 'nothing-here'))).toBe(false)
  })

  it('a restore never writes through a directory that now leads outside', async () => {
    const outside = workspace()
    const root = workspace({ 'src/a.txt': 'a' })
    const s = snaps(root)
    s.capture(call('c1'), ['src/a.txt'])
    rmSync(join(root, 'src'), { recursive: true })
    symlinkSync(outside, join(root, 'src'))
    const r = await s.rollback({ callId: 'c1' }, 'test')
    expect(r.failed).toHaveLength(1)
    expect(r.failed[0]!.path).toBe('src/a.txt')
    expect(r.failed[0]!.error).toMatch(/^refused: its directory now resolves outside the workspace/)
    expect(existsSync(join(outside, 'a.txt'))).toBe(false)
    expect(r.message).toMatch(/^rolled back call c1: could not restore src\/a.txt \(refused: /)
  })
})

describe('scopes and selectors', () => {
  it('rollback of a scope that does not exist (or no longer) says so and touches nothing', async () => {
    const root = workspace({ 'a.txt': 'a' })
    const s = snaps(root)
    expect(await s.rollback({ callId: 'nope' }, 'x')).toEqual({ matched: false, restored: [], deleted: [], failed: [], message: 'nothing to restore: no open snapshot for call nope' })
    expect((await s.rollback({ step: 4 }, 'x')).message).toBe('nothing to restore: no open snapshot for step 4')
    expect((await s.rollback({}, 'x')).message).toBe('nothing to restore: no open snapshot in session lib')
    s.capture(call('c1'), ['a.txt'])
    expect(s.commit({ callId: 'c1' })).toHaveLength(1)
    writeFileSync(join(root, 'a.txt'), 'accepted')
    expect((await s.rollback({ callId: 'c1' }, 'x')).matched).toBe(false)
    expect(read(root, 'a.txt')).toBe('accepted')
  })

  it('a step selector rolls back every open call scope of the step, newest first', async () => {
    const root = workspace({ 'a.txt': 'v0', 'b.txt': 'b0' })
    const s = snaps(root)
    s.capture({ ...call('c1', 2), turn: 0 }, ['a.txt'])
    writeFileSync(join(root, 'a.txt'), 'v1')
    s.capture({ ...call('c2', 2), turn: 0 }, ['a.txt', 'b.txt'])
    writeFileSync(join(root, 'a.txt'), 'v2')
    writeFileSync(join(root, 'b.txt'), 'b2')
    s.capture({ ...call('c3', 3), turn: 0 }, ['b.txt'])
    const r = await s.rollback({ step: 2 }, 'test')
    expect(r.message).toBe('rolled back step 2 (calls c1, c2): restored a.txt, b.txt')
    expect(read(root, 'a.txt')).toBe('v0')
    expect(s.captured().map(c => [c.callIds, c.path])).toEqual([[['c3'], 'b.txt']])
  })

  it('a step scope collects the captures of all its calls; a call selector names the step it joined', async () => {
    const root = workspace({ 'a.txt': 'v0' })
    const s = snaps(root)
    const step = { key: 'step:0:1', step: 1, turn: 0 }
    s.capture({ ...step, callId: 'c1' }, ['a.txt'])
    writeFileSync(join(root, 'a.txt'), 'v1')
    s.capture({ ...step, callId: 'c2' }, ['a.txt', 'b.txt'])
    writeFileSync(join(root, 'b.txt'), 'b')
    expect(s.captured()).toEqual([
      { path: 'a.txt', kind: 'file', scope: 's1', callIds: ['c1', 'c2'], step: 1, turn: 0 },
      { path: 'b.txt', kind: 'absent', scope: 's1', callIds: ['c1', 'c2'], step: 1, turn: 0 },
    ])
    const r = await s.rollback({ callId: 'c2' }, 'test')
    expect(r.message).toBe('rolled back step 1 (calls c1, c2): restored a.txt; deleted b.txt')
    expect(read(root, 'a.txt')).toBe('v0')
  })

  it('commit drops the captures and resets the journal once nothing is open', () => {
    const root = workspace({ 'a.txt': 'a'.repeat(5000) })
    const s = snaps(root)
    s.capture(call('c1'), ['a.txt'])
    s.capture(call('c2'), ['a.txt'])
    const file = s.journalFile!
    expect(statSync(file).size).toBeGreaterThan(10_000)
    expect(s.commit({ callId: 'c1' }).map(x => x.callIds)).toEqual([['c1']])
    expect(readJournal(file).records.map(r => r.record.t)).toEqual(['open', 'cap', 'open', 'cap', 'verdict'])
    s.commit({})
    const after = readJournal(file)
    expect(after.records).toEqual([])
    expect(statSync(file).size).toBe(after.header!.len)
    expect(s.captured()).toEqual([])
    s.dispose()
    expect(existsSync(file)).toBe(false)
  })

  it('clear drops everything and deletes the journal', () => {
    const root = workspace({ 'a.txt': 'a' })
    const s = snaps(root)
    s.capture(call('c1'), ['a.txt'])
    const file = s.journalFile!
    s.clear()
    expect(existsSync(file)).toBe(false)
    expect(s.openScopes).toBe(0)
  })

  it('refuses paths inside the vault', () => {
    const root = workspace()
    const s = snaps(root)
    expect(() => s.capture(call('c1'), ['.dsh/sessions/x.jsonl'])).toThrow(`path ".dsh/sessions/x.jsonl" is inside the dsh vault ${join(s.root, '.dsh')}`)
  })

  it('refuses a file over the per-file cap before anything is journalled', () => {
    const root = workspace({ 'big.bin': Buffer.alloc(3000), 'small.txt': 's' })
    const s = snaps(root, { maxFileBytes: 2048 })
    expect(() => s.capture(call('c1'), ['small.txt', 'big.bin'])).toThrow('big.bin is 2.9 KiB, over the per-file snapshot cap of 2.0 KiB (dsh-snapshot maxFileBytes)')
    expect(s.openScopes).toBe(0)
  })
})

describe('captureDir', () => {
  it('captures a tree, skips .git, node_modules, the vault and ignore globs, and rollback removes what appeared', async () => {
    const root = workspace({
      'src/a.ts': 'a', 'src/sub/b.ts': 'b', 'src/.git/HEAD': 'ref', 'src/node_modules/m/index.js': 'm',
      'src/dist/out.js': 'built', 'src/x.log': 'log', 'other.txt': 'o',
    })
    const s = snaps(root, { ignore: ['src/dist/', '*.log'] })
    const summary = s.captureDir(call('c1'), 'src')
    expect(summary.captured).toEqual(['src', 'src/sub', 'src/a.ts', 'src/sub/b.ts'])
    writeFileSync(join(root, 'src/a.ts'), 'A')
    rmSync(join(root, 'src/sub'), { recursive: true })
    mkdirSync(join(root, 'src/new/deep'), { recursive: true })
    writeFileSync(join(root, 'src/new/deep/c.ts'), 'c')
    writeFileSync(join(root, 'src/d.ts'), 'd')
    writeFileSync(join(root, 'src/dist/out2.js'), 'skipped, so kept')
    writeFileSync(join(root, 'src/node_modules/m/extra.js'), 'skipped, so kept')
    const r = await s.rollback({ callId: 'c1' }, 'test')
    expect(r.failed).toEqual([])
    expect(r.restored.sort()).toEqual(['src/a.ts', 'src/sub/b.ts'])
    expect(r.deleted.sort()).toEqual(['src/d.ts', 'src/new/'])
    expect(read(root, 'src/sub/b.ts')).toBe('b')
    expect(read(root, 'src/dist/out2.js')).toBe('skipped, so kept')
    expect(read(root, 'src/node_modules/m/extra.js')).toBe('skipped, so kept')
    expect(existsSync(join(root, 'src/new'))).toBe(false)
  })

  it('ignore patterns have gitignore semantics: [...] classes, ! negation, directory-only patterns', async () => {
    const root = workspace({
      'src/a.tmp': 'a', 'src/c.tmp': 'c', 'src/x.log': 'x', 'src/keep.log': 'k',
      'src/build/out.js': 'o', 'src/lib/build': 'a file named build', 'src/{a,b}.txt': 'literal braces, as in git',
    })
    const s = snaps(root, { ignore: ['[ab].tmp', '*.log', '!keep.log', 'build/', '{a,b}.txt'] })
    expect(s.captureDir(call('c1'), 'src').captured).toEqual(['src', 'src/lib', 'src/c.tmp', 'src/keep.log', 'src/lib/build'])
    writeFileSync(join(root, 'src/b.tmp'), 'skipped, so kept')
    writeFileSync(join(root, 'src/new.log'), 'skipped, so kept')
    writeFileSync(join(root, 'src/d.tmp'), 'not skipped, so removed')
    const r = await s.rollback({ callId: 'c1' }, 'test')
    expect(r.deleted).toEqual(['src/d.tmp'])
    expect(read(root, 'src/b.tmp')).toBe('skipped, so kept')
  })

  it('tool caches (.codegraph, …) are excluded by default; exclude replaces the defaults and ! in ignore re-includes one', () => {
    const root = workspace({ 'a.ts': 'a', '.codegraph/index.db': 'i', '.pytest_cache/v': 'v', 'pkg/__pycache__/m.pyc': 'p' })
    expect(snaps(root).captureDir(call('c1'), '.').captured).toEqual(['.', 'pkg', 'a.ts'])
    expect(snaps(root, { ignore: ['!.codegraph'] }).captureDir(call('c2'), '.').captured).toEqual(['.', '.codegraph', 'pkg', '.codegraph/index.db', 'a.ts'])
    expect(snaps(root, { exclude: ['.pytest_cache'] }).captureDir(call('c3'), '.').captured).toEqual(['.', '.codegraph', 'pkg', 'pkg/__pycache__', '.codegraph/index.db', 'a.ts', 'pkg/__pycache__/m.pyc'])
  })

  it('settings go through the plugin\'s Config schema: a bad one is refused, saying which', () => {
    const root = workspace()
    expect(() => snaps(root, { fsync: 'sometimes' as 'off' })).toThrow('$.fsync expected "capture" | "always" | "off" but got "sometimes"')
    expect(() => snaps(root, { maxFileBytes: -1 })).toThrow('$.maxFileBytes expected number >= 0 but got -1')
  })

  it('refuses a tree over the total cap with a clear error', () => {
    const root = workspace({ 'd/a': Buffer.alloc(600), 'd/b': Buffer.alloc(600) })
    const s = snaps(root, { maxDirBytes: 1000 })
    expect(() => s.captureDir(call('c1'), 'd')).toThrow('d holds over 1000 bytes, the snapshot cap for a directory (dsh-snapshot maxDirBytes); add ignore globs or raise the cap')
    expect(s.openScopes).toBe(0)
  })

  it('a write tool path that is a directory is captured as a tree', async () => {
    const root = workspace({ 'pkg/a.txt': 'a' })
    const s = snaps(root)
    s.capture(call('c1'), ['pkg'])
    rmSync(join(root, 'pkg'), { recursive: true })
    await s.rollback({ callId: 'c1' }, 'test')
    expect(read(root, 'pkg/a.txt')).toBe('a')
  })
})
