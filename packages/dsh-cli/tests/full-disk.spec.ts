import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CORE_ENTRIES, smallDisk, tempDir, writeScript } from 'dsh-testkit'
import { dsh } from './helpers.ts'

const disk = smallDisk('1m')
const unavailable = 'unavailable' in disk ? disk.unavailable : undefined
if (unavailable) console.warn(`dsh-cli full-disk.spec.ts skipped: ${unavailable}`)

describe.skipIf(unavailable !== undefined)('dsh run on a full disk (a real tmpfs)', () => {
  it('exits 1 naming the reason the session log was not saved; lint-log does not call the empty log ok', async () => {
    if ('unavailable' in disk) return
    const ws = join(disk.dir, 'ws')
    mkdirSync(ws)
    writeFileSync(join(ws, 'a.txt'), 'a\n')
    const dir = tempDir()
    const config = join(dir, 'cordis.yml')
    writeFileSync(config, `${CORE_ENTRIES}- id: sessions-jsonl\n  name: dsh-session/jsonl\n`)
    const script = writeScript(dir, [{ toolCalls: [{ name: 'read_file', arguments: { path: 'a.txt' } }] }, { text: 'read it' }])
    // A session while there is room: the vault exists, as on any workspace used before.
    expect((await dsh(['run', '--workspace', ws, '--script', script, '--config', config])).exitCode).toBe(0)
    disk.fill()
    try {
      const run = await dsh(['run', '--workspace', ws, '--script', script, '--config', config])
      const id = /^session (\S+): completed/m.exec(run.stderr)?.[1]
      const file = join(ws, '.dsh', 'sessions', `${id}.jsonl`)
      const why = `cannot write the session log ${file} \\(\\d+ event\\(s\\) not saved\\): ENOSPC: no space left on device, write`
      // Said once (not also as the agent's flush warning, nor again with the outcome).
      expect(run.stderr).toMatch(new RegExp(`^dsh run: the session log was not saved: ${why}\\nsession ${id}: completed · log NOT saved \\(see above\\)\\n$`))
      expect(run.exitCode).toBe(1)
      // The append that failed was cut back: the file holds no partial line.
      expect(readFileSync(file, 'utf8')).toBe('')
      const lint = await dsh(['lint-log', file])
      expect([lint.exitCode, lint.stdout]).toEqual([1, `${file}: NOT ok: no event in it — nothing of the session was saved (a log is written from its first event on; was the disk full?)\n`])
    } finally {
      disk.free()
    }
  })
})
