import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import * as Review from 'dsh-review'
import { undo, UndoError } from 'dsh-review'
import * as Snapshot from 'dsh-snapshot'
import { KeptStore, type KeptRecord } from 'dsh-snapshot'
import { harness, tempDir, type Harness } from 'dsh-testkit'

/** A workspace with dsh-snapshot alone (every write kept at once, as with no judge) and dsh-review. */
async function boot(files: Record<string, string | Buffer>, options: { script?: object[] } = {}): Promise<Harness> {
  const root = tempDir('dsh-undo-')
  for (const [rel, data] of Object.entries(files)) {
    mkdirSync(join(root, rel, '..'), { recursive: true })
    writeFileSync(join(root, rel), data)
  }
  return harness({ workspace: root, plugins: [[Snapshot, Snapshot.Config({ fsync: 'off' })], Review], ...options })
}

const read = (h: Harness, rel: string) => readFileSync(join(h.workspace, rel))
const vault = (h: Harness) => h.session.vault
const records = (h: Harness) => new KeptStore(vault(h)).read()
const recordOf = (h: Harness, callId: string): KeptRecord => records(h).find(r => r.callIds.includes(callId))!

describe('dsh undo', () => {
  it('takes back a kept write, a created file and a sed -i byte for byte, binary included, and the undo can be undone', async () => {
    const bin = Buffer.from([0, 1, 2, 255, 10, 13, 0])
    const h = await boot({ 'src/a.ts': 'export const a = 1\r\nexport const b = 2\n', 'img.bin': bin, 'gone.txt': 'keep me\n' })
    try {
      await h.call('write_file', { path: 'src/a.ts', content: 'export const a = 10\n' }, { callId: 'w1' })
      await h.call('write_file', { path: 'src/new/deep.ts', content: 'new\n' }, { callId: 'w2' })
      await h.call('bash', { command: "printf '\\001\\002' > img.bin && rm gone.txt && sed -i 's/10/11/' src/a.ts" }, { callId: 'sh1' })
      expect(recordOf(h, 'sh1').changes.map(c => c.path).sort()).toEqual(['gone.txt', 'img.bin', 'src/a.ts'])

      const bash = await undo({ workspace: h.workspace, vault: vault(h), ids: [recordOf(h, 'sh1').id] })
      expect(bash.restored.sort()).toEqual(['gone.txt', 'img.bin', 'src/a.ts'])
      expect(read(h, 'img.bin').equals(bin)).toBe(true)
      expect(read(h, 'gone.txt').toString()).toBe('keep me\n')
      expect(read(h, 'src/a.ts').toString()).toBe('export const a = 10\n')

      const created = await undo({ workspace: h.workspace, vault: vault(h), ids: [recordOf(h, 'w2').id] })
      expect(created.deleted).toEqual(['src/new/deep.ts', 'src/new/'])
      expect(existsSync(join(h.workspace, 'src/new'))).toBe(false)

      await undo({ workspace: h.workspace, vault: vault(h), ids: [recordOf(h, 'w1').id] })
      expect(read(h, 'src/a.ts').toString()).toBe('export const a = 1\r\nexport const b = 2\n')

      // The undo of the bash call, undone: the sed's and rm's effects come back (over w1's undo? no: a.ts changed since, on the same line).
      await expect(undo({ workspace: h.workspace, vault: vault(h), ids: [bash.record.id] })).rejects.toThrow(
        'not undone: src/a.ts (a later write changed the same or adjacent lines). Nothing was changed; dsh undo --force overwrites it with the earlier bytes')
      const redo = await undo({ workspace: h.workspace, vault: vault(h), ids: [created.record.id] })
      expect(redo.restored).toEqual(['src/new/deep.ts'])
      expect(read(h, 'src/new/deep.ts').toString()).toBe('new\n')
    } finally {
      await h.dispose()
    }
  })

  it('refuses, naming the file and changing nothing, where a later write changed the same lines; merges where it changed others; --force overwrites', async () => {
    const text = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight'].join('\n') + '\n'
    const h = await boot({ 'f.txt': text, 'g.txt': text })
    try {
      await h.call('edit_file', { path: 'f.txt', old_string: 'two', new_string: 'TWO' }, { callId: 'e1' })
      await h.call('edit_file', { path: 'f.txt', old_string: 'seven', new_string: 'SEVEN' }, { callId: 'e2' })
      await h.call('edit_file', { path: 'g.txt', old_string: 'two', new_string: 'TWO' }, { callId: 'e3' })
      await h.call('bash', { command: "sed -i 's/TWO/2/' g.txt" }, { callId: 'e4' })

      const refused = await undo({ workspace: h.workspace, vault: vault(h), ids: [recordOf(h, 'e3').id, recordOf(h, 'e1').id] }).catch(e => e as UndoError)
      expect(refused).toBeInstanceOf(UndoError)
      expect((refused as UndoError).message).toBe('not undone: g.txt (a later write changed the same or adjacent lines). Nothing was changed; dsh undo --force overwrites it with the earlier bytes')
      expect(read(h, 'f.txt').toString()).toBe(text.replace('two', 'TWO').replace('seven', 'SEVEN'))
      expect(records(h).filter(r => r.kind === 'undo')).toEqual([])

      const merged = await undo({ workspace: h.workspace, vault: vault(h), ids: [recordOf(h, 'e1').id] })
      expect(merged.merged).toEqual(['f.txt'])
      expect(read(h, 'f.txt').toString()).toBe(text.replace('seven', 'SEVEN'))

      const forced = await undo({ workspace: h.workspace, vault: vault(h), ids: [recordOf(h, 'e3').id], force: true })
      expect(forced.forced).toEqual(['g.txt'])
      expect(read(h, 'g.txt').toString()).toBe(text)
    } finally {
      await h.dispose()
    }
  })

  it('keeps the mode bits and refuses what cannot be taken back', async () => {
    const h = await boot({ 'run.sh': '#!/bin/sh\necho hi\n' })
    try {
      chmodSync(join(h.workspace, 'run.sh'), 0o755)
      await h.call('bash', { command: 'chmod -x run.sh && echo bye >> run.sh' }, { callId: 'c1' })
      const r = recordOf(h, 'c1')
      await undo({ workspace: h.workspace, vault: vault(h), ids: [r.id] })
      expect(read(h, 'run.sh').toString()).toBe('#!/bin/sh\necho hi\n')
      expect(Review.undoable(r, records(h))).toEqual({ ok: false, why: expect.stringMatching(/^taken back already by undo-/) })
      await expect(undo({ workspace: h.workspace, vault: vault(h), ids: [r.id] })).rejects.toThrow(/^dsh undo: cannot take back call c1 of session .*: taken back already by undo-/)
      await expect(undo({ workspace: h.workspace, vault: vault(h), ids: ['nope'] })).rejects.toThrow('dsh undo: no kept call nope (see dsh undo --list)')
      const { statSync } = await import('node:fs')
      expect(statSync(join(h.workspace, 'run.sh')).mode & 0o777).toBe(0o755)
    } finally {
      await h.dispose()
    }
  })

  it("tells the running session's model what changed, once, with its next tool result", async () => {
    const h = await boot({ 'a.txt': 'a\n' })
    try {
      await h.call('write_file', { path: 'a.txt', content: 'b\n' }, { callId: 'w1' })
      await undo({ workspace: h.workspace, vault: vault(h), ids: [recordOf(h, 'w1').id], describeCall: () => 'write_file a.txt' })
      expect(Review.pendingUndoNotes(vault(h), h.session.id)).toHaveLength(1)
      const next = await h.call('read_file', { path: 'a.txt' }, { callId: 'r1' })
      expect(next.content.split('\n').slice(-1)[0]).toBe('note: a person took back your call w1 (write_file a.txt) with dsh undo: restored a.txt. Read these files again before you edit them.')
      const again = await h.call('read_file', { path: 'a.txt' }, { callId: 'r2' })
      expect(again.content).not.toContain('dsh undo')
    } finally {
      await h.dispose()
    }
  })

  it("tells the model at its next step's start, as harness context (source undo), when no tool call comes first", async () => {
    const h = await boot({ 'a.txt': 'a\n' }, { script: [
      { text: 'Write.', toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'b\n' } }] },
      { text: 'Done.' },
      { text: 'Seen.' },
    ] })
    try {
      await h.agent.send('go')
      const callId = h.session.ofType('tool/call')[0]!.data.callId
      await undo({ workspace: h.workspace, vault: vault(h), ids: [recordOf(h, callId).id] })
      await h.agent.send('and now?')
      const notes = h.session.ofType('context/message').filter(e => e.data.source === 'undo')
      expect(notes.map(e => e.data.text)).toEqual([`note: a person took back your call ${callId} with dsh undo: restored a.txt. Read these files again before you edit them.`])
      const turnStarts = h.session.ofType('turn/start').map(e => e.seq)
      expect(notes[0]!.seq).toBeGreaterThan(turnStarts[1]!)
      expect(Review.pendingUndoNotes(vault(h), h.session.id)).toEqual([])
    } finally {
      await h.dispose()
    }
  })
})
