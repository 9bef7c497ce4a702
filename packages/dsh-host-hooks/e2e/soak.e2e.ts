/**
 * A soak of one Claude Code session, its hooks played by a script through
 * the real client and host: good edits (kept), type breaks (rolled back)
 * and refused calls (PreToolUse only), with the host killed (SIGKILL) or
 * stopped (SIGSTOP) at seeded random points between calls. Counts lost
 * writes, bad writes kept, and the worst wait; stops early at its time budget.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hostStatus } from 'dsh-host-hooks'
import { prng } from '../../../bench/gen-ts-project.ts'
import { ADD, ADD_BROKEN, ClaudeSession, GOOD, killHost, ROUNDING, shopWorkspace, shown } from './claude-hooks.ts'

const CALLS = Number(process.env.DSH_SOAK_CALLS ?? 200)
const BUDGET_MS = Number(process.env.DSH_SOAK_BUDGET_MS ?? 1_200_000)
const SEED = Number(process.env.DSH_SOAK_SEED ?? 41)

interface SoakReport {
  seed: number
  calls: number
  kinds: Record<string, number>
  kills: number
  stops: number
  lostWrites: number
  badKept: number
  worstMs: number
  worstKind: string
  totalMs: number
  problems: string[]
}

describe(`a soak of one session (${CALLS} calls, seed ${SEED})`, () => {
  let ws = ''
  const report: SoakReport = { seed: SEED, calls: 0, kinds: {}, kills: 0, stops: 0, lostWrites: 0, badKept: 0, worstMs: 0, worstKind: '', totalMs: 0, problems: [] }

  beforeAll(async () => {
    ws = shopWorkspace('dsh-soak-')
    const money = join(ws, 'src/money.ts')
    const random = prng(SEED)
    const s = new ClaudeSession(ws)
    await s.start()
    await s.prompt('Work on the money module for a while.')
    const started = Date.now()
    let commented = false
    let injected = ''
    for (let i = 0; i < CALLS && Date.now() - started < BUDGET_MS; i++) {
      const r = random()
      if (i > 0 && r < 0.04) {
        const pid = (await hostStatus(join(ws, '.dsh'), 500)).pid
        if (pid) {
          process.kill(pid, r < 0.02 ? 'SIGKILL' : 'SIGSTOP')
          if (r < 0.02) report.kills++
          else report.stops++
          injected = r < 0.02 ? 'after SIGKILL' : 'after SIGSTOP'
        }
      }
      const pick = random()
      const kind = pick < 0.5 ? 'good' : pick < 0.8 ? 'bad' : 'refused'
      report.kinds[kind] = (report.kinds[kind] ?? 0) + 1
      const before = readFileSync(money, 'utf8')
      const t0 = Date.now()
      let run
      if (kind === 'good') run = await s.edit('src/money.ts', commented ? GOOD : ROUNDING, commented ? ROUNDING : GOOD)
      else if (kind === 'bad') run = await s.edit('src/money.ts', ADD, ADD_BROKEN)
      else await s.refusedEdit('src/money.ts', ADD, ADD_BROKEN)
      const ms = Date.now() - t0
      if (ms > report.worstMs) Object.assign(report, { worstMs: ms, worstKind: `${kind}${injected ? ` ${injected}` : ''} (call ${i})` })
      injected = ''
      const after = readFileSync(money, 'utf8')
      if (kind === 'good') {
        const expected = commented ? before.replace(GOOD, ROUNDING) : before.replace(ROUNDING, GOOD)
        if (after !== expected) {
          report.lostWrites++
          report.problems.push(`call ${i} good: ${JSON.stringify(shown(run!))}`)
        } else {
          commented = !commented
        }
      } else if (after.includes(ADD_BROKEN)) {
        report.badKept++
        report.problems.push(`call ${i} ${kind}: kept; ${JSON.stringify(shown(run ?? { answer: undefined, stdout: '', ms: 0 }))}`)
        // Put it back so later calls measure against a sound project.
        const { writeFileSync } = await import('node:fs')
        writeFileSync(money, after.replace(ADD_BROKEN, ADD))
      }
      report.calls++
    }
    await s.stop()
    report.totalMs = Date.now() - started
    console.log(`soak report: ${JSON.stringify(report, null, 2)}`)
  }, BUDGET_MS + 600_000)

  afterAll(() => killHost(ws))

  it('loses no write and keeps no bad write', () => {
    expect(report.problems).toEqual([])
    expect(report.calls).toBeGreaterThan(0)
  })
})
