import { readFileSync } from 'node:fs'
import { describe, expect, it, vi } from 'vitest'
import { readSessionLog, sessionLogPath } from 'dsh-session'
import * as jsonl from 'dsh-session/jsonl'
import { harness, logged, smallDisk } from 'dsh-testkit'

const disk = smallDisk('1m')
const unavailable = 'unavailable' in disk ? disk.unavailable : undefined
if (unavailable) console.warn(`full-disk.spec.ts skipped: ${unavailable}`)

describe.skipIf(unavailable !== undefined)('JSONL persistence on a full disk (a real tmpfs)', () => {
  it('a failed flush names the file and the reason, keeps the events, leaves no torn line, and writes them all once there is room', async () => {
    if ('unavailable' in disk) return
    const { ctx } = await harness({ workspaceTools: false, plugins: [[jsonl, { intervalMs: 0 }]] })
    const s = ctx.sessions.create('full', { cwd: disk.dir })
    const file = sessionLogPath(s.vault, 'full')
    s.append('user/message', { text: 'before the disk filled up' })
    await s.flush()
    const saved = readFileSync(file, 'utf8')
    disk.fill()
    // More than the free bytes left in the log's last block: the append is cut short by the full disk.
    for (let i = 0; i < 20; i++) s.append('assistant/chunk', { text: `${i} ${'x'.repeat(400)}` })
    await expect(s.flush()).rejects.toHaveProperty('message', `cannot write the session log ${file} (20 event(s) not saved): ENOSPC: no space left on device, write`)
    expect(readFileSync(file, 'utf8')).toBe(saved)
    s.append('turn/start', { turn: 0 })
    await expect(s.flush()).rejects.toThrow(`cannot write the session log ${file} (21 event(s) not saved): ENOSPC`)
    disk.free()
    await s.flush()
    const read = readSessionLog(file)
    expect(read.torn).toBe(false)
    expect(read.records).toEqual(JSON.parse(JSON.stringify(s.events)))
    expect(read.records).toHaveLength(22)
  })

  it('the background drain warns once while the disk stays full, not at every interval', async () => {
    if ('unavailable' in disk) return
    const h = await harness({ workspaceTools: false, plugins: [[jsonl, { intervalMs: 20 }]] })
    const warnings = logged(h.ctx, 'warn')
    const s = h.ctx.sessions.create('bg', { cwd: disk.dir })
    disk.fill()
    try {
      s.append('user/message', { text: 'x'.repeat(5000) })
      const file = sessionLogPath(s.vault, 'bg')
      await expect(s.flush()).rejects.toThrow(`cannot write the session log ${file} (1 event(s) not saved): ENOSPC`)
      await vi.waitFor(() => expect(warnings.filter(w => w.includes(file))).toHaveLength(1), { timeout: 10_000 })
      // Later drains (every 20 ms) fail the same way and say nothing more.
      await new Promise(resolve => setTimeout(resolve, 200))
      expect(warnings).toEqual([`cannot write the session log ${file} (1 event(s) not saved): ENOSPC: no space left on device, write`])
    } finally {
      disk.free()
    }
    await s.flush()
    await h.dispose()
  })
})
