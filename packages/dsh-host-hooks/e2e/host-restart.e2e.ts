/**
 * A host that dies (SIGKILL) or stops (SIGSTOP) is replaced by the next
 * hook call within seconds, and the replacement's recovery never undoes a
 * write it did not see: the real client, the real host, real signals.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hostStatus, MESSAGES, type HostStatus } from 'dsh-host-hooks'
import { ADD, ADD_BROKEN, ClaudeSession, GOOD, killHost, repoRoot, ROUNDING, shopWorkspace, shown, type HookRun } from './claude-hooks.ts'

const TYPE_BREAK = `rolled back: typecheck failed after Edit on src/money.ts\nsrc/money.ts:5 TS2322 Type 'string' is not assignable to type 'number'.\n(typecheck stopped at the first new errors: possibly more in files not checked)`
const DOC = '/** Amounts are integer cents. */'
const DOC2 = '/** Amounts are integer cents (never floats). */'
const GOOD2 = `${ROUNDING} // rounded to the cent, half up`
const ORIGINAL = readFileSync(join(repoRoot, 'examples/demo/workspace/src/money.ts'), 'utf8')

describe('a host killed or stopped between two calls', () => {
  let ws = ''
  const vault = () => join(ws, '.dsh')
  const figures: Record<string, number> = {}
  const pids: Record<string, number | undefined> = {}
  let afterKill: HookRun & { pre: HookRun }
  let afterStop: HookRun & { pre: HookRun }
  let stoppedStatus: HostStatus
  let kept = ''
  let midCall: HookRun
  let later: HookRun & { pre: HookRun }
  let final = ''

  beforeAll(async () => {
    ws = shopWorkspace()
    const s = new ClaudeSession(ws)
    await s.start()
    await s.prompt('Tidy up the money module.')
    const warm = await s.edit('src/money.ts', ROUNDING, GOOD)
    figures.firstWrite = warm.ms + warm.pre.ms

    pids.killed = (await hostStatus(vault())).pid
    process.kill(pids.killed!, 'SIGKILL')
    afterKill = await s.edit('src/money.ts', ADD, ADD_BROKEN)
    figures.afterKill = afterKill.ms + afterKill.pre.ms
    figures.afterKillPre = afterKill.pre.ms

    await s.edit('src/money.ts', DOC, DOC2)
    pids.stopped = (await hostStatus(vault())).pid
    process.kill(pids.stopped!, 'SIGSTOP')
    stoppedStatus = await hostStatus(vault())
    afterStop = await s.edit('src/money.ts', ADD, ADD_BROKEN)
    figures.afterStop = afterStop.ms + afterStop.pre.ms
    figures.afterStopPre = afterStop.pre.ms
    kept = readFileSync(join(ws, 'src/money.ts'), 'utf8')
    pids.replacement = (await hostStatus(vault())).pid

    // Killed between the Edit and its PostToolUse: what the call left was never seen; it and a later Edit must stay.
    pids.midCall = pids.replacement
    const x = await s.edit('src/money.ts', DOC2, DOC, { post: false })
    process.kill(pids.midCall!, 'SIGKILL')
    midCall = await x.sendPost()
    figures.midCallPost = midCall.ms
    later = await s.edit('src/money.ts', GOOD, GOOD2)
    figures.later = later.ms + later.pre.ms
    final = readFileSync(join(ws, 'src/money.ts'), 'utf8')
    console.log(`host-restart figures (ms): ${JSON.stringify(figures)}`)
  }, 500_000)

  afterAll(() => killHost(ws))

  it('rolls back the next bad write after a SIGKILL, in a new host, and keeps the write before it', () => {
    expect(shown(afterKill)).toBe(TYPE_BREAK)
    expect(shown(afterKill.pre)).toBe('')
  })

  it('says a stopped host is stopped, replaces it (SIGKILL), and rolls back the next bad write', () => {
    expect(stoppedStatus).toEqual({ state: 'stopped', pid: pids.stopped })
    expect(shown(afterStop)).toBe(TYPE_BREAK)
    expect(pids.replacement).not.toBe(pids.stopped)
    expect(() => process.kill(pids.stopped!, 0)).toThrow()
    expect(kept).toBe(ORIGINAL.replace(ROUNDING, GOOD).replace(DOC, DOC2))
  })

  it('keeps the write of a call the killed host never saw finish, and a later write, and tells the model each', () => {
    expect(shown(midCall)).toBe(MESSAGES.notVerified(MESSAGES.unseen('Edit')))
    expect(final).toBe(ORIGINAL.replace(ROUNDING, GOOD2))
    expect(shown(later).split('\n\n')).toContain(MESSAGES.recovered([], ['src/money.ts']))
  })
})
