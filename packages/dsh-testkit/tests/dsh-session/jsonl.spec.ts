import { appendFileSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { readSessionLog, sessionLogPath } from 'dsh-session'
import * as jsonl from 'dsh-session/jsonl'
import { harness, tempDir, type PluginSpec } from 'dsh-testkit'

const persist: PluginSpec = [jsonl, { intervalMs: 0 }]
/** Sessions persisted by dsh-session/jsonl, drained only on flush and dispose. */
const persisted = () => harness({ workspaceTools: false, plugins: [persist] })

describe('JSONL persistence', () => {
  it('writes behind and drains on session/flush; the reader round-trips the log', async () => {
    const { ctx } = await persisted()
    const ws = tempDir()
    const s = ctx.sessions.create('rt', { cwd: ws })
    s.append('user/message', { text: 'hello' })
    s.append('tool/result', { callId: 'c1', name: 'bash', content: 'é ✓ \n"quoted"', isError: false, exitCode: 0 })
    const file = sessionLogPath(s.vault, 'rt')
    await s.flush()
    const read = readSessionLog(file)
    expect(read.torn).toBe(false)
    expect(read.records).toEqual(JSON.parse(JSON.stringify(s.events)))
  })

  it('drains on dispose', async () => {
    const h = await persisted()
    const s = h.ctx.sessions.create('d', { cwd: tempDir() })
    s.append('user/message', { text: 'not flushed yet' })
    await h.dispose()
    expect(readSessionLog(sessionLogPath(s.vault, 'd')).records).toHaveLength(1)
  })

  it('tolerates a torn last line and names a corrupt line by number', () => {
    const dir = tempDir()
    mkdirSync(join(dir, 'sessions'))
    const file = sessionLogPath(dir, 's')
    writeFileSync(file, '{"seq":0,"time":1,"type":"user/message","data":{"text":"a"}}\n')
    appendFileSync(file, '{"seq":1,"time":2,"type":"turn/st')
    const read = readSessionLog(file)
    expect(read.torn).toBe(true)
    expect(read.records.map(r => r.seq)).toEqual([0])

    const bad = join(dir, 'bad.jsonl')
    writeFileSync(bad, `${readFileSync(file, 'utf8').split('\n')[0]}\nnot json\n{"seq":2,"time":3,"type":"x","data":{}}\n`)
    expect(() => readSessionLog(bad)).toThrow(`${bad}:2: corrupt JSON line`)
  })

  it('an event appended during session/created by an earlier listener is written once', async () => {
    const { ctx, load } = await harness({ workspaceTools: false })
    ctx.on('session/created', s => { s.append('context/message', { source: 'handoff', text: 'hi' }) })
    await load(persist)
    const ws = tempDir()
    const s = ctx.sessions.create('h', { cwd: ws })
    s.append('user/message', { text: 'next' })
    await s.flush()
    expect(readSessionLog(sessionLogPath(s.vault, 'h')).records.map(r => `${r.seq}:${r.type}`)).toEqual(['0:context/message', '1:user/message'])
  })

  it('writes a seed only when the session file does not exist yet', async () => {
    const { ctx } = await persisted()
    const ws = tempDir()
    const seed = [{ seq: 0, time: 1, type: 'user/message', data: { text: 'seeded' } }]
    const s = ctx.sessions.create('seed', { cwd: ws, seed })
    s.append('user/message', { text: 'next' })
    await s.flush()
    expect(readSessionLog(sessionLogPath(s.vault, 'seed')).records.map(r => r.seq)).toEqual([0, 1])
  })
})
