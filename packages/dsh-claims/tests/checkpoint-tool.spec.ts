import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { readSessionLog, sessionLogPath } from 'dsh-session'
import { CLEAN_RECEIPT, checkpointPath, type StoredCheckpoint } from 'dsh-claims'
import type { ScriptStep } from 'dsh-llm'
import { bash, checkpoint, results, setup } from './helpers.ts'

const AUTH = 'login rejects expired tokens — pnpm vitest run tests/auth.test.ts'
const TYPES = 'types check — npx tsc --noEmit'

/** The checkpoint tool's answers in a fresh session s1 that runs these steps. */
async function receipts(steps: ScriptStep[]): Promise<string[]> {
  const { session } = await (await setup()).run('s1', steps)
  return results(session, 'checkpoint')
}

/** One line of a receipt: the claim as given, then what is wrong with it. */
const mark = (claim: string, why: string) => `- "${claim}": ${why}`

describe('the checkpoint tool', () => {
  it('answers "Checkpoint recorded." when every claim is backed by a passing run', async () => {
    expect(await receipts([
      { toolCalls: [bash('node_modules/.bin/vitest run tests/auth.test.ts')] },
      { toolCalls: [checkpoint({ verified: [AUTH] })] },
    ])).toEqual([CLEAN_RECEIPT])
  })

  it('records as given and marks each unsupported claim with what to do, and asks about an empty failed', async () => {
    expect(await receipts([
      { toolCalls: [bash('FAKE_EXIT=1 node_modules/.bin/tsc --noEmit')] },
      { toolCalls: [checkpoint({ verified: [AUTH, TYPES, 'refactored the cart'] })] },
    ])).toEqual([[
      'Recorded as given; 3 claims marked for the next agent, and one question:',
      mark(AUTH, '`vitest run` not seen run in this session — run it or drop the claim.'),
      mark(TYPES, 'last run of `tsc --noEmit` did not pass (exit 1) — fix it or move the claim to failed.'),
      mark('refactored the cart', 'names no command — add the command that shows it after " — ", or drop the claim.'),
      '- failed is empty, but a command failed in this session: `tsc --noEmit` (exit 1). Did something not work? If so, checkpoint again with it in failed.',
    ].join('\n')])
  })

  it('marks a claim whose run had its status hidden by a pipe', async () => {
    expect(await receipts([
      { toolCalls: [bash('node_modules/.bin/vitest run 2>&1 | tail -5')] },
      { toolCalls: [checkpoint({ verified: [AUTH] })] },
    ])).toEqual([[
      'Recorded as given; 1 claim marked for the next agent:',
      mark(AUTH, '`vitest run` ran, but its exit status was hidden by a pipe — run it on its own to confirm.'),
    ].join('\n')])
  })

  it('with no shell activity at all, every claimed command is unseen and nothing is asked', async () => {
    expect(await receipts([{ toolCalls: [checkpoint({ verified: [AUTH, TYPES] })] }])).toEqual([[
      'Recorded as given; 2 claims marked for the next agent:',
      mark(AUTH, '`vitest run` not seen run in this session — run it or drop the claim.'),
      mark(TYPES, '`tsc --noEmit` not seen run in this session — run it or drop the claim.'),
    ].join('\n')])
  })

  it('sees shell runs of the same step, whose results are not logged yet', async () => {
    const h = await setup()
    const { session } = await h.run('s1', [
      { toolCalls: [bash('node_modules/.bin/vitest run'), bash('FAKE_EXIT=2 node_modules/.bin/tsc --noEmit'), checkpoint({ verified: [AUTH], failed: ['tsc still fails'] })] },
    ])
    expect(results(session, 'checkpoint')).toEqual([CLEAN_RECEIPT])
    // The bash results reached the log only after the checkpoint was recorded.
    const types = session.events.map(e => e.type)
    expect(types.indexOf('tool/result')).toBeGreaterThan(types.indexOf('claims/checkpoint'))
  })

  it('writes <vault>/checkpoints/<session>.json and logs claims/questioned before claims/checkpoint', async () => {
    const h = await setup()
    const { session } = await h.run('s1', [
      { toolCalls: [bash('FAKE_EXIT=1 node_modules/.bin/vitest run')] },
      { toolCalls: [checkpoint({ summary: 'cart done', verified: [AUTH], next: ['fix auth'] })] },
    ])
    const types = session.events.map(e => e.type)
    const questioned = types.indexOf('claims/questioned')
    const logged = types.indexOf('claims/checkpoint')
    expect(questioned).toBeGreaterThan(-1)
    expect(logged).toBe(questioned + 1)
    expect(types.lastIndexOf('tool/result')).toBeGreaterThan(logged)
    const event = session.events[logged]!
    if (event.type !== 'claims/checkpoint') throw new Error('unreachable')
    expect(event.data).toMatchObject({ summary: 'cart done', verified: [AUTH], failed: [], next: ['fix auth'], report: { failing: [AUTH], asked: true } })

    const stored = JSON.parse(readFileSync(checkpointPath(h.vault, 's1'), 'utf8')) as StoredCheckpoint
    expect(stored).toMatchObject({ version: 1, sessionId: 's1', cwd: h.ws, seq: event.seq, time: event.time, summary: 'cart done', next: ['fix auth'] })
    expect(stored.report).toEqual(event.data.report)
  })

  it('asks about an empty failed once per session; a later checkpoint judges over the whole session (the last run counts)', async () => {
    const h = await setup()
    const { session } = await h.run('s1', [
      { toolCalls: [bash('FAKE_EXIT=1 node_modules/.bin/vitest run')] },
      { toolCalls: [checkpoint({})] },
      { toolCalls: [bash('FAKE_EXIT=1 node_modules/.bin/tsc --noEmit')] },
      { toolCalls: [checkpoint({ verified: [AUTH] })] },
    ])
    const [first, second] = results(session, 'checkpoint')
    expect(first).toContain('- failed is empty, but a command failed in this session: `vitest run` (exit 1).')
    expect(second).toBe([
      'Recorded as given; 1 claim marked for the next agent:',
      mark(AUTH, 'last run of `vitest run` did not pass (exit 1) — fix it or move the claim to failed.'),
    ].join('\n'))
    expect(session.events.filter(e => e.type === 'claims/questioned')).toHaveLength(1)
  })

  it('does not ask again after a restart: the marker is read back from the persisted log', async () => {
    const first = await setup({ jsonl: true })
    const steps = [
      { toolCalls: [bash('FAKE_EXIT=1 node_modules/.bin/vitest run')] },
      { toolCalls: [checkpoint({})] },
    ]
    await first.run('s1', steps)
    await first.dispose()
    const { records } = readSessionLog(sessionLogPath(first.vault, 's1'))
    expect(records.some(e => e.type === 'claims/questioned')).toBe(true)

    const second = await setup({ jsonl: true, ws: first.ws })
    const { session } = await second.run('s1', [
      ...steps, { text: 'done' },
      { toolCalls: [bash('FAKE_EXIT=1 node_modules/.bin/tsc --noEmit')] },
      { toolCalls: [checkpoint({})] },
    ], records)
    expect(results(session, 'checkpoint').slice(-1)).toEqual([CLEAN_RECEIPT])
    expect(session.events.filter(e => e.type === 'claims/questioned')).toHaveLength(1)
  })

  it('never refuses: a vault it cannot write to is reported, the checkpoint stays in the log', async () => {
    const h = await setup()
    mkdirSync(h.vault, { recursive: true })
    writeFileSync(join(h.vault, 'checkpoints'), 'not a directory')
    const { session } = await h.run('s1', [
      { toolCalls: [bash('node_modules/.bin/vitest run')] },
      { toolCalls: [checkpoint({ verified: [AUTH] })] },
    ])
    const [receipt] = results(session, 'checkpoint')
    expect(receipt).toMatch(/^Checkpoint recorded\.\nNot saved to the vault \((EEXIST|ENOTDIR): .*\); the checkpoint is in the session log only\.$/)
    expect(session.events.some(e => e.type === 'claims/checkpoint')).toBe(true)
  })

  it('keeps the activity record as events are appended: a checkpoint never reads the log back', async () => {
    const h = await setup()
    const { session, agent } = h.open('s1', [
      { toolCalls: [bash('FAKE_EXIT=1 node_modules/.bin/tsc --noEmit')] },
      { toolCalls: [bash('node_modules/.bin/vitest run'), checkpoint({ verified: [AUTH, TYPES] })] },
    ])
    // While the checkpoint tool runs, the log cannot be read: only what the
    // plugin saw as each event was appended can count.
    const events = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(session), 'events')!.get!
    let checkpointRunning = false
    Object.defineProperty(session, 'events', {
      get() {
        if (checkpointRunning) throw new Error('the checkpoint read the whole log')
        return events.call(session)
      },
    })
    h.ctx.on('tools/execute', async (exec, next) => {
      checkpointRunning = exec.name === 'checkpoint'
      try {
        return await next()
      } finally {
        checkpointRunning = false
      }
    })
    await agent.send('go')
    expect(results(session, 'checkpoint')).toEqual([[
      'Recorded as given; 1 claim marked for the next agent, and one question:',
      mark(TYPES, 'last run of `tsc --noEmit` did not pass (exit 1) — fix it or move the claim to failed.'),
      '- failed is empty, but a command failed in this session: `tsc --noEmit` (exit 1). Did something not work? If so, checkpoint again with it in failed.',
    ].join('\n')])
  })

  it('takes missing lists as empty and drops blank lines', async () => {
    const h = await setup()
    const { session } = await h.run('s1', [{ toolCalls: [{ name: 'checkpoint', arguments: { summary: ' half done ', verified: ['  '], next: ['', 'continue'] } }] }])
    expect(results(session, 'checkpoint')).toEqual([CLEAN_RECEIPT])
    const event = session.events.find(e => e.type === 'claims/checkpoint')
    expect(event?.data).toMatchObject({ summary: 'half done', verified: [], failed: [], next: ['continue'] })
    expect(existsSync(checkpointPath(h.vault, 's1'))).toBe(true)
  })
})

describe('plugin lifecycle', () => {
  it('disposing the plugin (twice) unregisters the tool and leaves no listener behind', async () => {
    const h = await setup()
    await h.claims.dispose()
    const hooks = (name: string) => h.ctx.events._hooks[name]?.length ?? 0
    const before = { exec: hooks('tools/execute'), event: hooks('session/event'), created: hooks('session/created') }
    expect(h.ctx.tools.get('checkpoint')).toBeUndefined()

    const Claims = await import('dsh-claims')
    const fiber = await h.ctx.plugin(Claims, Claims.Config({}))
    expect(h.ctx.tools.get('checkpoint')?.effects).toBe('read')
    expect(hooks('tools/execute')).toBe(before.exec + 1)
    expect(hooks('session/event')).toBe(before.event + 1)
    expect(hooks('session/created')).toBe(before.created + 1)
    await fiber.dispose()
    await fiber.dispose()
    expect(h.ctx.tools.get('checkpoint')).toBeUndefined()
    expect({ exec: hooks('tools/execute'), event: hooks('session/event'), created: hooks('session/created') }).toEqual(before)
  })
})
