import { appendFileSync, readFileSync } from 'node:fs'
import { describe, expect, it, onTestFinished } from 'vitest'
import { ProofChain, serializeRecord, sealEntry, verifyChainFile } from 'dsh-proofchain'
import { fill, freshChain, lines } from './helpers.ts'

describe('restart', () => {
  it('continues the same chain and never rewrites history', async () => {
    const first = freshChain()
    await fill(first, 10)
    const before = readFileSync(first.file, 'utf8')
    const summaryBefore = first.summary('s1', { budgetTokens: 400 }).text

    const second = ProofChain.open({ file: first.file })
    expect(second.head).toEqual(first.head)
    expect(second.summary('s1', { budgetTokens: 400 }).text).toBe(summaryBefore)
    await fill(second, 10, 10)

    const after = readFileSync(first.file, 'utf8')
    expect(after.startsWith(before)).toBe(true)
    const report = verifyChainFile(first.file)
    expect(report).toMatchObject({ ok: true, entries: 20, head: { seq: 19 } })
    expect(JSON.parse(lines(first.file)[10]!).prevHash).toBe(JSON.parse(lines(first.file)[9]!).hash)
  })

  it('cuts a torn last line left by a crashed writer before appending, and says so', async () => {
    const first = freshChain()
    await fill(first, 5)
    const torn = serializeRecord(sealEntry({ seq: 5, time: 1, sessionId: 's1', kind: 'test', subject: 'test x', outcome: 'ok', detail: '', prevHash: first.head.hash }))
    appendFileSync(first.file, torn.slice(0, 40))
    expect(verifyChainFile(first.file).problem).toMatchObject({ line: 6, kind: 'torn line' })

    const warnings: string[] = []
    const second = ProofChain.open({ file: first.file, onWarning: m => warnings.push(m) })
    expect(second.head.seq).toBe(4)
    expect(warnings).toEqual([])
    await fill(second, 1, 5)
    expect(warnings).toEqual([`${first.file}: cut a torn last line (line 6, 40 bytes) left by an interrupted write`])
    expect(verifyChainFile(first.file)).toMatchObject({ ok: true, entries: 6 })
  })

  it('two chains on one file (as two processes would) interleave into one chain', async () => {
    const a = freshChain()
    const b = ProofChain.open({ file: a.file })
    for (let i = 0; i < 20; i++) await (i % 2 ? a : b).append({ sessionId: i % 2 ? 'a' : 'b', kind: 'test', subject: `test t${i % 3}`, outcome: 'ok' })
    expect(verifyChainFile(a.file)).toMatchObject({ ok: true, entries: 20 })
    // Each side caught up with the other's entries under the lock, before its own append.
    expect(a.summary(undefined, { budgetTokens: 400 }).shown.map(e => e.seq).sort()).toEqual([17, 18, 19])
    expect(b.head.seq).toBe(18)
    b.sync()
    expect(b.head.seq).toBe(19)
    expect(a.summary(undefined, { budgetTokens: 400 }).text).toBe(b.summary(undefined, { budgetTokens: 400 }).text)
    expect(a.summary('b', { budgetTokens: 400 }).shown.map(e => e.subject).sort()).toEqual(['test t0', 'test t1', 'test t2'])
  })

  it('rejects an entry without session or subject and records nothing', async () => {
    const chain = freshChain()
    await expect(chain.append({ sessionId: '', kind: 'test', subject: 'x', outcome: 'ok' })).rejects.toMatchObject({ code: 'PROOFCHAIN', message: 'a proof entry needs a sessionId' })
    await expect(chain.append({ sessionId: 's', kind: 'test', subject: '  ', outcome: 'ok' })).rejects.toMatchObject({ code: 'PROOFCHAIN', message: 'a proof entry needs a subject' })
    await expect(chain.append({ sessionId: 's', kind: 'anchor', subject: 'x', outcome: 'ok' })).rejects.toMatchObject({ code: 'PROOFCHAIN' })
    expect(chain.head.seq).toBe(-1)
  })

  it('caps the detail', async () => {
    const chain = freshChain({ detailMaxBytes: 100 })
    const entry = await chain.append({ sessionId: 's', kind: 'test', subject: 't', outcome: 'fail', detail: 'y'.repeat(5000) })
    expect(Buffer.byteLength(entry.detail)).toBeLessThanOrEqual(100)
    expect(entry.detail).toContain('bytes truncated')
  })

  it("masks a credential value of this process's environment in the subject and detail before it is hashed and written", async () => {
    const secret = `tok-${process.pid}-${Date.now()}`
    process.env.DSH_TEST_TOKEN = secret
    onTestFinished(() => { delete process.env.DSH_TEST_TOKEN })
    const chain = freshChain()
    const entry = await chain.append({ sessionId: 's', kind: 'test', subject: `test ${secret}.ts`, outcome: 'fail', detail: `expected '${secret}' to be 'none'` })
    expect([entry.subject, entry.detail]).toEqual(['test [redacted DSH_TEST_TOKEN].ts', "expected '[redacted DSH_TEST_TOKEN]' to be 'none'"])
    await chain.flush()
    expect(readFileSync(chain.file, 'utf8')).not.toContain(secret)
    expect(verifyChainFile(chain.file)).toMatchObject({ ok: true, entries: 1 })
  })
})
