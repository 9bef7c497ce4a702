/**
 * How many test files a change relates to is said when its tests time out;
 * a measurement that ran only a part of them (chosen by the functions they
 * ran, or none for a comment-only write) must not be taken for that count.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Guard, type GuardIO } from '../src/measure.ts'
import type { Change, Check, Measurement } from '../src/types.ts'

const root = mkdtempSync(join(tmpdir(), 'dsh-engine-related-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

/** A related-tests check answering from a script: each measurement is the next one given. */
function scripted(answers: Measurement[]): Check {
  return {
    name: 'test', verb: 'testing', lazyBaseline: true,
    measure: async () => answers.shift() ?? { status: 'error', problems: [], scope: [], error: 'no answer scripted' },
  }
}

const io: GuardIO = { record: () => {}, notice: () => {} }
const change: Change = { paths: [join(root, 'src/url.ts')], files: ['src/url.ts'] }

describe('the related count in a timeout', () => {
  it('comes from a run of every related test file, never from a narrower selection', async () => {
    const timedOut: Measurement = { status: 'timeout', problems: [], scope: [] }
    const narrow = new Guard({ root, checks: [scripted([{ status: 'ok', problems: [], passed: [], scope: [], selected: true }, timedOut])], rules: { strictTests: false, isTestFile: () => true }, timeoutMs: 1000, maxOutputBytes: 1 << 20, confirmFlaky: false })
    await narrow.measure(change, io, 'edit_file')
    expect((await narrow.measure(change, io, 'edit_file')).checks[0]!.error).toBe('test took longer than 1 s (related test files not counted)')

    const full = new Guard({ root, checks: [scripted([{ status: 'ok', problems: [], passed: [], scope: ['tests/a.test.ts', 'tests/b.test.ts'] }, timedOut])], rules: { strictTests: false, isTestFile: () => true }, timeoutMs: 1000, maxOutputBytes: 1 << 20, confirmFlaky: false })
    await full.measure(change, io, 'edit_file')
    expect((await full.measure(change, io, 'edit_file')).checks[0]!.error).toBe('test took longer than 1 s (2 related test files)')
  })
})
