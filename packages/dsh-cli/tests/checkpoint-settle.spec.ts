/**
 * dsh-claims' checkpoint tool against a verdict still running (dsh-dstvalid's
 * background verdicts, with the real dsh-snapshot, tsc and vitest): a
 * checkpoint called right after a write that its slow test will roll back
 * waits for that verdict, so it is held against the rollback, not against a
 * write that looked kept; the file is as before when the checkpoint answers.
 */
import { cpSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import * as Claims from 'dsh-claims'
import DstValidService, { PENDING_NOTE } from 'dsh-dstvalid'
import * as Snapshot from 'dsh-snapshot'
import { harness, tempDir } from 'dsh-testkit'
import { repoRoot } from './helpers.ts'

/** A test of the discount that takes seconds: the write's verdict is still running when the checkpoint is called. */
const SLOW_TEST = `import { expect, it } from 'vitest'
import { applyDiscount } from '../src/money.ts'

it('rounds a discount to the cent, slowly', async () => {
  await new Promise(resolve => setTimeout(resolve, 3000))
  expect(applyDiscount(999, 10)).toBe(899)
})
`
const ROUND_UP = { path: 'src/money.ts', old_string: 'Math.round(amount * (1 - percent / 100))', new_string: 'Math.ceil(amount * (1 - percent / 100))' }

describe('the checkpoint tool while a verdict runs in the background', { timeout: 180_000 }, () => {
  it('waits for the verdict and is held against its rollback: the receipt asks about the rolled-back write, the file is as before', async () => {
    const ws = join(tempDir('dsh-checkpoint-settle-'), 'shop')
    cpSync(join(repoRoot, 'examples/demo/workspace'), ws, { recursive: true })
    writeFileSync(join(ws, 'tests/slow.test.ts'), SLOW_TEST)
    symlinkSync(join(repoRoot, 'node_modules'), join(ws, 'node_modules'), 'dir')
    const money = join(ws, 'src/money.ts')
    const before = readFileSync(money)
    const kit = await harness({
      workspace: ws,
      plugins: [[Snapshot, {}], [DstValidService, { background: true, verdicts: 'strict', warmOnStart: false }], [Claims, Claims.Config({})]],
    })
    onTestFinished(() => kit.dispose())
    const session = kit.session
    expect(await kit.call('edit_file', ROUND_UP, { callId: 'up' })).toEqual({ content: `edited src/money.ts\n${PENDING_NOTE}` })
    // Returned kept for now: the write is in the file, its tests' verdict not in yet.
    expect(readFileSync(money, 'utf8')).toContain('Math.ceil')
    expect(session.ofType('verify/verdict').filter(e => e.data.check === 'test')).toEqual([])
    const receipt = await kit.call('checkpoint', { summary: 'Rounded the discount up.', verified: [], failed: [], next: [] }, { callId: 'cp' })
    // The verdict came in before the checkpoint was held against the session: the rollback is applied and asked about.
    expect(readFileSync(money)).toEqual(before)
    expect(session.ofType('verify/verdict').filter(e => e.data.callId === 'up').map(e => [e.data.check, e.data.outcome])).toEqual([['typecheck', 'pass'], ['test', 'rolled-back']])
    expect(receipt).toEqual({ content: [
      'Recorded as given; one question:',
      '- failed is empty, but a command failed in this session: `test of edit_file on src/money.ts` (rolled back). Did something not work? If so, checkpoint again with it in failed.',
    ].join('\n') })
  })
})
