import { appendFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { sessionLogPath } from 'dsh-session'
import { ActivityRecorder, checkClaims, checkSessionLog, readActivity } from 'dsh-claims'
import { bash, checkpoint, harness, log, shellRun, tempDir, verifyRun } from './helpers.ts'

let cleanup: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const c of cleanup) await c()
  cleanup = []
})

const CLAIMS = ['tests — pnpm test', 'types — npx tsc --noEmit', 'build — pnpm build', 'lint — make lint', 'nothing to see']

describe('checking a stored session log', () => {
  it('gives the report the checkpoint tool would give at the end of the log', async () => {
    const h = await harness({ jsonl: true })
    cleanup.push(h.dispose)
    const verified = ['auth — pnpm vitest run tests/auth.test.ts', 'types — npx tsc --noEmit']
    const { session } = await h.run('s1', [
      { toolCalls: [bash('node_modules/.bin/vitest run'), bash('FAKE_EXIT=4 node_modules/.bin/tsc --noEmit')] },
      { toolCalls: [checkpoint({ verified })] },
    ])
    await session.flush()
    const file = sessionLogPath(h.vault, 's1')
    const logged = session.events.find(e => e.type === 'claims/checkpoint')!
    if (logged.type !== 'claims/checkpoint') throw new Error('unreachable')
    // The stored log ends after that checkpoint, so check with the cut-off just before it.
    const report = await checkSessionLog(file, { verified, failed: [] }, { after: -1 })
    expect({ ...report, questioned: false, asked: false }).toEqual({ ...logged.data.report, questioned: false, asked: false })
    expect(report.sessionId).toBe('s1')
    expect(report.failing).toEqual(['types — npx tsc --noEmit'])
    // Read as a whole, every run of the session counts (the last one), and the log's question is on record.
    const after = await checkSessionLog(file, { verified, failed: [] })
    expect(after).toMatchObject({ since: 'session-start', unseen: [], failing: ['types — npx tsc --noEmit'], questioned: true, asked: false })
  })

  it('tolerates a torn last line and names a corrupt line elsewhere', async () => {
    const dir = tempDir()
    const file = join(dir, 's.jsonl')
    writeFileSync(file, log(...shellRun('pnpm test', 0)).map(e => JSON.stringify(e) + '\n').join(''))
    appendFileSync(file, '{"seq":2,"time":1,"type":"tool/ca')
    expect((await checkSessionLog(file, { verified: ['t — pnpm test'], failed: [] })).marks).toEqual([])
    writeFileSync(file, '{"seq":0}\nnot json\n{"seq":2}\n')
    await expect(readActivity(file)).rejects.toMatchObject({ code: 'JSONL_CORRUPT', line: 2 })
  })

  it('streaming a log gives the same report as folding it in memory (property)', async () => {
    const dir = tempDir()
    const entry = fc.oneof(
      fc.tuple(fc.constantFrom('pnpm test', 'npx tsc --noEmit', 'cd web && pnpm build', 'make lint | tee l', 'pnpm test || true'), fc.constantFrom(0, 1, 2, null))
        .map(([command, code]) => shellRun(command, code)),
      fc.tuple(fc.constantFrom(['node_modules/.bin/tsc', '--noEmit'], ['make', 'lint']), fc.constantFrom<'pass' | 'fail' | 'timeout'>('pass', 'fail', 'timeout'))
        .map(([argv, outcome]) => [verifyRun(argv, outcome)]),
      fc.constant([['claims/checkpoint', { summary: '', verified: [], failed: [], next: [] }] as [string, unknown]]),
      fc.constant([['claims/questioned', { failedRuns: [] }] as [string, unknown]]),
    )
    await fc.assert(fc.asyncProperty(fc.array(entry, { maxLength: 30 }), fc.subarray(CLAIMS), fc.boolean(), async (entries, verified, failedEmpty) => {
      const events = log(...entries.flat())
      const file = join(dir, 'p.jsonl')
      writeFileSync(file, events.map(e => JSON.stringify(e) + '\n').join(''))
      const recorder = new ActivityRecorder()
      for (const e of events) recorder.add(e)
      const checkpointArgs = { verified, failed: failedEmpty ? [] : ['x'] }
      expect(await checkSessionLog(file, checkpointArgs, { sessionId: 'p' })).toEqual(checkClaims(checkpointArgs, recorder.activity, 'p'))
    }), { numRuns: 100 })
  })
})
