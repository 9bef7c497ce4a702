/**
 * A call the agent refused after PreToolUse holds nothing: the real client
 * and the real host, Claude Code's payloads played by a script.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADD, ADD_BROKEN, GOOD, ROUNDING, ClaudeSession, killHost, shopWorkspace, shown, type HookRun } from './claude-hooks.ts'

const TYPE_BREAK = `rolled back: typecheck failed after Edit on src/money.ts\nsrc/money.ts:5 TS2322 Type 'string' is not assignable to type 'number'.\n(typecheck stopped at the first new errors: possibly more in files not checked)`

describe('a refused call (PreToolUse without PostToolUse)', () => {
  let ws = ''
  let original = ''
  const timings: Record<string, number> = {}
  let sameSession: HookRun & { pre: HookRun }
  let nextSession: HookRun & { pre: HookRun }
  let otherSession: HookRun & { pre: HookRun }
  let refusedWrote: HookRun
  let afterRefusedWrote = ''

  beforeAll(async () => {
    ws = shopWorkspace()
    original = readFileSync(join(ws, 'src/money.ts'), 'utf8')
    const s1 = new ClaudeSession(ws)
    await s1.start()
    await s1.prompt('Tidy up the money module.')
    // The first write measures the accepted state (type-check, tests) before it runs.
    await s1.edit('src/money.ts', ROUNDING, GOOD)
    await s1.edit('src/money.ts', GOOD, ROUNDING)
    await s1.refusedEdit('src/money.ts', ADD, ADD_BROKEN)
    sameSession = await s1.edit('src/money.ts', ADD, ADD_BROKEN)
    timings.sameSession = sameSession.ms + sameSession.pre.ms
    await s1.stop()

    const s2 = new ClaudeSession(ws)
    await s2.start()
    await s2.prompt('Once more.')
    await s2.refusedEdit('src/money.ts', ADD, ADD_BROKEN)
    await s2.stop()
    const s3 = new ClaudeSession(ws)
    await s3.start()
    await s3.prompt('And again.')
    nextSession = await s3.edit('src/money.ts', ADD, ADD_BROKEN)
    timings.nextSession = nextSession.ms + nextSession.pre.ms

    // S3 leaves a refused call and says nothing more; S4 writes meanwhile.
    await s3.refusedEdit('src/money.ts', ADD, ADD_BROKEN)
    const s4 = new ClaudeSession(ws)
    await s4.start()
    await s4.prompt('Concurrently.')
    otherSession = await s4.edit('src/money.ts', ADD, ADD_BROKEN)
    timings.otherSession = otherSession.ms + otherSession.pre.ms
    await s4.stop()

    // A call whose PostToolUse never came but whose file changed (the agent failed after writing): judged as that call at the next hook.
    await s3.edit('src/money.ts', ADD, ADD_BROKEN, { post: false })
    await s3.stop()
    afterRefusedWrote = readFileSync(join(ws, 'src/money.ts'), 'utf8')
    refusedWrote = await s3.prompt('What happened?')
    console.log(`refused-call timings (ms): ${JSON.stringify(timings)}`)
  }, 400_000)

  afterAll(() => killHost(ws))

  it('rolls back a type-breaking Edit after a refused one in the same session, with no note that it was not verified', () => {
    expect(shown(sameSession)).toBe(TYPE_BREAK)
    expect(shown(sameSession.pre)).toBe('')
  })

  it('rolls back a type-breaking Edit in the next session after a refused call in another', () => {
    expect(shown(nextSession)).toBe(TYPE_BREAK)
  })

  it('does not make another session wait for a refused call of a session that went quiet', () => {
    expect(shown(otherSession)).toBe(TYPE_BREAK)
  })

  it('judges a call whose post hook never came but whose file changed as a write of that call', () => {
    expect(afterRefusedWrote).toBe(original)
    expect(shown(refusedWrote).split('\n\n')[0]).toBe(`dsh: Edit (no result reported by the agent): ${TYPE_BREAK}`)
  })
})
