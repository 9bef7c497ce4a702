import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { JsonlError } from 'dsh-common'
import { formatLintReport, lintLog } from 'dsh-invariants'
import { CORE_ENTRIES } from 'dsh-testkit'
import { dsh, fixture } from './helpers.ts'

const BROKEN = fixture('broken-session.jsonl')

/** Every violation planted in the hand-made fixture: [line, seq, rule]. */
const PLANTED = [
  [9, 8, 'result-without-call'], // result for callId c9, never called
  [11, 9, 'seq'], // seq 9 repeated
  [12, 10, 'outside-step'], // a chunk between two steps
  [17, 15, 'result-without-call'], // result of c2 (called in step 0.1) in step 0.2
  [18, 16, 'turn-end-open-step'], // turn 0 ends with step 0.2 open
  [23, 21, 'turn-overlap'], // turn 2 starts inside turn 1
  [25, 22, 'step-outside-turn'], // step names turn 1 while turn 2 is open
  [26, 23, 'step-overlap'], // step 2.1 starts inside step 1.0
  [27, 24, 'step-end'], // step/end of 2.5 while 2.1 is open
  [28, 25, 'turn-end'], // turn/end of 1 while 2 is open
  [29, 26, 'turn-end'], // turn/end with no open turn
  [30, 27, 'shape'], // turn/start without a turn number
  [32, 29.5, 'seq'], // non-integer seq
  [35, 32, 'result-without-call'], // result before its call
]

const temps: string[] = []
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-'))
  temps.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true })
})

describe('lintLog (the core)', () => {
  it('finds every planted violation in the hand-made broken log, with its line', async () => {
    const report = await lintLog(BROKEN)
    expect(report.violations.map(v => [v.line, v.seq, v.rule])).toEqual(PLANTED)
    expect(report.events).toBe(38)
    expect(formatLintReport(report).split('\n').at(-2)).toBe(`${BROKEN}: 14 violations in 38 events`)
    expect(formatLintReport(report).split('\n')[0]).toBe(`${BROKEN}:9: seq 8 tool/result [result-without-call] `
      + 'tool/result for callId "c9" has no earlier tool/call in step 0.0 (last events: 4 usage, 5 assistant/message, 6 tool/call, 7 tool/result, 8 tool/result)')
  })

  it('skips a torn last line and names a corrupt line in the middle', async () => {
    const dir = tempDir()
    const good = '{"seq":0,"time":0,"type":"user/message","data":{"text":"a"}}\n'
    writeFileSync(join(dir, 'torn.jsonl'), good + '{"seq":1,"time":0,"ty')
    expect(await lintLog(join(dir, 'torn.jsonl'))).toEqual({ file: join(dir, 'torn.jsonl'), events: 1, violations: [] })
    writeFileSync(join(dir, 'corrupt.jsonl'), good + '{"seq":1,\n' + good)
    await expect(lintLog(join(dir, 'corrupt.jsonl'))).rejects.toThrow(JsonlError)
    await expect(lintLog(join(dir, 'corrupt.jsonl'))).rejects.toThrow(`${join(dir, 'corrupt.jsonl')}:2: corrupt JSON line`)
  })
})

describe('dsh lint-log (the command)', () => {
  it('lists every violation and exits 1; --json gives the same as data', async () => {
    const text = await dsh(['lint-log', BROKEN])
    expect(text.exitCode).toBe(1)
    const lines = text.stdout.trimEnd().split('\n')
    expect(lines.slice(0, -1).map(l => Number(/:(\d+): seq/.exec(l)?.[1]))).toEqual(PLANTED.map(p => p[0]))
    expect(lines.at(-1)).toBe(`${BROKEN}: 14 violations in 38 events`)

    const json = await dsh(['lint-log', BROKEN, '--json'])
    expect(json.exitCode).toBe(1)
    const report = JSON.parse(json.stdout) as { file: string; events: number; violations: { line: number; seq: number; rule: string; message: string }[] }
    expect(report.violations.map(v => [v.line, v.seq, v.rule])).toEqual(PLANTED)
    expect(report.violations[1]).toMatchObject({ line: 11, type: 'step/end', message: 'seq 9 does not increase (previous seq 9)' })
  })

  it('exits 2 for a missing file, a corrupt line (named), and bad usage', async () => {
    const dir = tempDir()
    const missing = join(dir, 'nope.jsonl')
    const r1 = await dsh(['lint-log', missing])
    expect([r1.exitCode, r1.stdout, r1.stderr]).toEqual([2, '', `dsh lint-log: ${missing}: cannot read (ENOENT)\n`])
    writeFileSync(join(dir, 'bad.jsonl'), '{"seq":0,"time":0,"type":"x","data":{}}\nnot json\n')
    const r2 = await dsh(['lint-log', join(dir, 'bad.jsonl')])
    expect(r2.exitCode).toBe(2)
    expect(r2.stderr).toMatch(new RegExp(`^dsh lint-log: ${join(dir, 'bad.jsonl')}:2: corrupt JSON line \\(`))
    const r3 = await dsh(['lint-log'])
    expect([r3.exitCode, r3.stderr]).toEqual([2, 'dsh lint-log: missing FILE.jsonl (see dsh lint-log --help)\n'])
  })
})

describe('dsh run → dsh lint-log, dsh-invariants loaded by name from a cordis.yml', () => {
  const config = (breaker: boolean) => `${CORE_ENTRIES}- id: sessions-jsonl
  name: dsh-session/jsonl
${breaker ? '- id: breaker\n  name: ./breaker.mjs\n' : ''}- id: invariants
  name: dsh-invariants
  disabled: !!js process.env.NODE_ENV === 'production'
`
  // A plugin that breaks the contract: a stray turn/start in the middle of a step.
  const BREAKER = `export const name = 'breaker'
export function apply(ctx) {
  ctx.on('agent/step-results', async (batch, next) => {
    batch.session.append('turn/start', { turn: 99 })
    return next()
  })
}
`
  const setup = (breaker: boolean) => {
    const dir = tempDir()
    mkdirSync(join(dir, 'ws'))
    writeFileSync(join(dir, 'cordis.yml'), config(breaker))
    writeFileSync(join(dir, 'breaker.mjs'), BREAKER)
    writeFileSync(join(dir, 'script.jsonl'), [
      { text: 'writing', toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'one\n' } }] },
      { toolCalls: [{ name: 'bash', arguments: { command: 'cat a.txt; false' } }, { name: 'read_file', arguments: { path: 'missing.txt' } }] },
      { text: 'done' },
    ].map(s => JSON.stringify(s)).join('\n') + '\n')
    const args = ['run', '--workspace', join(dir, 'ws'), '--script', join(dir, 'script.jsonl'), '--config', join(dir, 'cordis.yml')]
    const log = () => join(dir, 'ws/.dsh/sessions', readdirSync(join(dir, 'ws/.dsh/sessions'))[0]!)
    return { args, log }
  }

  it('a clean run completes with the tripwire on, and its log lints clean', async () => {
    const { args, log } = setup(false)
    const run = await dsh(args)
    expect(run.exitCode).toBe(0)
    const lint = await dsh(['lint-log', log()])
    expect([lint.exitCode, lint.stdout]).toEqual([0, `${log()}: ok, ${readFileSync(log(), 'utf8').trim().split('\n').length} events, no violations\n`])
  })

  it('a plugin breaking the contract fails the turn under the tripwire; with NODE_ENV=production it is off, and lint-log catches it afterwards', async () => {
    const on = setup(true)
    const run = await dsh(on.args)
    expect(run.exitCode).toBe(1)
    const events = readFileSync(on.log(), 'utf8').trim().split('\n').map(l => JSON.parse(l) as { type: string; data: { message?: string } })
    expect(events.find(e => e.type === 'error')?.data.message).toMatch(/^invariant violated in session \S+ at seq \d+ \(turn\/start\): \[turn-overlap\] turn 99 starts while turn 0 is open;/)

    const off = setup(true)
    const prod = await dsh(off.args, { NODE_ENV: 'production' })
    expect(prod.exitCode).toBe(0)
    const lintOff = await dsh(['lint-log', off.log()])
    expect(lintOff.exitCode).toBe(1)
    expect(lintOff.stdout).toContain('[turn-overlap] turn 99 starts while turn 0 is open')
    const offEvents = readFileSync(off.log(), 'utf8').trim().split('\n').map(l => JSON.parse(l) as { type: string })
    expect(offEvents.filter(e => e.type === 'error')).toEqual([])
  })
})
