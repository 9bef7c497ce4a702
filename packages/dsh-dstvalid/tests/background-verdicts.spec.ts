import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import { tempDir } from 'dsh-testkit'
import { PENDING_NOTE } from 'dsh-dstvalid'
import { boot, breakDiscount, discountTestFails, expectRolledBack, makeWorkspace, STOPPED, testRuns } from './helpers.ts'

const goodEdit = { path: 'src/money.ts', old_string: 'return a + b', new_string: 'return b + a' }
const typeBreak = { path: 'src/money.ts', old_string: 'export function add(a: Cents, b: Cents): Cents {', new_string: 'export function add(a: Cents, b: string): Cents {' }

const script = (...steps: object[]) => steps.map(s => JSON.stringify(s)).join('\n')

describe('background verdicts: a write returns once its type-check passed, its tests run while the model thinks', { timeout: 180_000 }, () => {
  it('a good write returns kept for now before its tests ran; they run after, and it ends kept', async () => {
    const root = makeWorkspace()
    const h = await boot(root, { background: true })
    expect(await h.exec('edit_file', goodEdit)).toEqual({ content: `edited src/money.ts\n${PENDING_NOTE}` })
    // Returned: the type-check judged it, no test has run yet, no final verdict on the tests.
    expect(testRuns(h)).toEqual([])
    expect(h.results.map(r => [r.check, r.outcome])).toEqual([])
    expect(h.session.ofType('verify/deferred').map(e => e.data)).toEqual([{ sessionId: h.session.id, callId: 'c1', tool: 'edit_file', paths: ['src/money.ts'] }])
    await h.ctx.serial('verify/settle', h.session.id)
    expect(testRuns(h).map(r => r.at(-1))).toContain('pass')
    expect(h.results.map(r => [r.check, r.outcome])).toEqual([['typecheck', 'pass'], ['test', 'pass']])
    expect(h.snapshot!.log).toEqual(['commit call:c1'])
    expect(readFileSync(join(root, 'src/money.ts'), 'utf8')).toContain('return b + a')
    // The next call runs: nothing was undone.
    expect(await h.exec('edit_file', { path: 'src/money.ts', old_string: 'return b + a', new_string: 'return a + b' })).toEqual({ content: `edited src/money.ts\n${PENDING_NOTE}` })
  })

  it('a test-breaking write returns kept for now; the next call is refused with the reason, the file restored byte for byte before it, and the call after runs on it', async () => {
    const root = makeWorkspace()
    const h = await boot(root, { background: true })
    const file = join(root, 'src/money.ts')
    const before = readFileSync(file)
    expect(await h.exec('edit_file', breakDiscount)).toEqual({ content: `edited src/money.ts\n${PENDING_NOTE}` })
    expect(readFileSync(file, 'utf8')).toContain('Math.ceil')
    const denied = await h.exec('bash', { command: 'cat src/money.ts' })
    expect(denied).toEqual({
      isError: true,
      content: [
        'not run: the verdict on your earlier edit_file of src/money.ts came in: rolled back: test failed after edit_file on src/money.ts',
        discountTestFails,
        'the file is as before; call again',
      ].join('\n'),
    })
    // When the refusal is answered the rollback is done: the refused call would have seen the bytes from before the write.
    expect(readFileSync(file)).toEqual(before)
    expect(h.snapshot!.log).toEqual(['rollback call:c1: test failed after edit_file on src/money.ts'])
    expect(h.results.map(r => [r.callId, r.check, r.outcome])).toEqual([['c1', 'typecheck', 'pass'], ['c1', 'test', 'rolled-back']])
    // Said once: the call again runs, on the restored file.
    const again = await h.exec('bash', { command: 'cat src/money.ts' })
    expect(again.isError).toBe(false)
    expect(again.content).toContain('Math.round(amount')
    expect(again.content).not.toContain('Math.ceil')
  })

  it('the next call made while the verdict still runs waits for it at dsh-tools\' execute, the one settle point: refused with the rollback, the file as before', async () => {
    const hold = join(tempDir('dsh-dstvalid-hold-'), 'hold')
    // A test of the discount that waits while the hold file exists: the verdict stays pending until the spec lets it go.
    const held = `import { existsSync } from 'node:fs'\nimport { expect, it } from 'vitest'\nimport { applyDiscount } from '../src/money.ts'\n\nit('discounts, once let through', async () => {\n  while (existsSync(${JSON.stringify(hold)})) await new Promise(resolve => setTimeout(resolve, 50))\n  expect(applyDiscount(999, 10)).toBe(899)\n}, 600_000)\n`
    const root = makeWorkspace('shop', { 'tests/held.test.ts': held })
    const h = await boot(root, { background: true }, { snapshot: { real: {} } })
    const file = join(root, 'src/money.ts')
    // A good write first, its verdict in with the test let through: the baseline is measured.
    await h.exec('edit_file', goodEdit)
    await h.ctx.serial('verify/settle', h.session.id)
    const before = readFileSync(file)
    writeFileSync(hold, '')
    onTestFinished(() => rmSync(hold, { force: true }))
    expect(await h.exec('edit_file', breakDiscount)).toEqual({ content: `edited src/money.ts\n${PENDING_NOTE}` })
    // Called while the verdict is held: it must not reach dsh-dstvalid's listener before the verdict is in.
    const next = h.exec('bash', { command: 'cat src/money.ts' })
    rmSync(hold)
    const denied = await next
    expect(denied.isError).toBe(true)
    expect(denied.content.split('\n')[0]).toBe('not run: the verdict on your earlier edit_file of src/money.ts came in: rolled back: test failed after edit_file on src/money.ts')
    expect(readFileSync(file)).toEqual(before)
  })

  it('a shell call whose type-check passed returns kept for now; its test break refuses the next call, the file restored before it', async () => {
    const root = makeWorkspace()
    const h = await boot(root, { background: true }, { snapshot: { real: {} } })
    const file = join(root, 'src/money.ts')
    const before = readFileSync(file)
    const sed = await h.exec('bash', { command: "sed -i 's/Math.round(amount/Math.ceil(amount/' src/money.ts" })
    expect(sed.isError).toBe(false)
    expect(sed.content.endsWith(`\n${PENDING_NOTE}`)).toBe(true)
    expect(h.session.ofType('verify/deferred').map(e => e.data)).toEqual([{ sessionId: h.session.id, callId: 'c1', tool: 'bash', paths: ['src/money.ts'] }])
    expect(readFileSync(file, 'utf8')).toContain('Math.ceil')
    const denied = await h.exec('bash', { command: 'cat src/money.ts' })
    expect(denied).toEqual({
      isError: true,
      content: ['not run: the verdict on your earlier bash of src/money.ts came in: rolled back: test failed after bash on src/money.ts', discountTestFails, 'the file is as before; call again'].join('\n'),
    })
    expect(readFileSync(file)).toEqual(before)
    expect(h.results.map(r => [r.callId, r.check, r.outcome])).toEqual([['c1', 'typecheck', 'pass'], ['c1', 'test', 'rolled-back']])
  })

  it('a type-breaking write is still rolled back in its own result', async () => {
    const root = makeWorkspace()
    const h = await boot(root, { background: true })
    await expectRolledBack(h, 'edit_file', typeBreak,
      'rolled back: typecheck failed after edit_file on src/money.ts',
      "src/money.ts:5 TS2322 Type 'string' is not assignable to type 'number'.",
      STOPPED,
    )
    expect(h.session.ofType('verify/deferred')).toEqual([])
    expect(testRuns(h)).toEqual([])
    // Nothing pending: the next call runs.
    expect(await h.exec('edit_file', goodEdit)).toEqual({ content: `edited src/money.ts\n${PENDING_NOTE}` })
  })

  it('a stop waits for the pending verdict: the undone write refuses it with the reason, then the turn ends with the file as before', async () => {
    const root = makeWorkspace()
    const before = readFileSync(join(root, 'src/money.ts'))
    const s = script(
      { toolCalls: [{ id: 'bad', name: 'edit_file', arguments: breakDiscount }] },
      { text: 'Done.' },
      { text: 'Understood.' },
    )
    const h = await boot(root, { background: true }, { script: s })
    await h.ctx.agents.create(h.session).send('Round the discount up.')
    const results = h.session.ofType('tool/result').map(e => [e.data.callId, e.data.isError, e.data.content])
    expect(results).toEqual([['bad', false, `edited src/money.ts\n${PENDING_NOTE}`]])
    const said = h.session.ofType('context/message').filter(e => e.data.source === 'dsh-dstvalid').map(e => e.data.text)
    expect(said).toEqual([
      `not done yet: the verdict on your earlier edit_file of src/money.ts came in: rolled back: test failed after edit_file on src/money.ts\n${discountTestFails}\nthe file is as before;`,
    ])
    expect(readFileSync(join(root, 'src/money.ts'))).toEqual(before)
    // The next model request (step 1) began while the verdict ran; the final verdict is logged before the stop is answered and the turn ends.
    const types = h.session.events.map(e => e.type).filter(t => t === 'verify/deferred' || t === 'verify/verdict' || t === 'step/start' || t === 'turn/end')
    expect(types).toEqual(['step/start', 'verify/deferred', 'step/start', 'verify/verdict', 'verify/verdict', 'step/start', 'turn/end'])
  })

  it('verify/settle (a checkpoint, a proof reader) resolves once the verdict is final: the rollback applied', async () => {
    const root = makeWorkspace()
    const before = readFileSync(join(root, 'src/money.ts'))
    const h = await boot(root, { background: true })
    await h.exec('edit_file', breakDiscount)
    await h.ctx.serial('verify/settle', h.session.id)
    expect(readFileSync(join(root, 'src/money.ts'))).toEqual(before)
    expect(h.session.ofType('verify/verdict').map(e => [e.data.check, e.data.outcome])).toEqual([['typecheck', 'pass'], ['test', 'rolled-back']])
  })

  it('background off: the write waits for its whole verdict, as before', async () => {
    const root = makeWorkspace()
    const h = await boot(root, { background: false })
    await expectRolledBack(h, 'edit_file', breakDiscount, 'rolled back: test failed after edit_file on src/money.ts', discountTestFails)
    expect(h.session.ofType('verify/deferred')).toEqual([])
    expect(await h.exec('edit_file', goodEdit)).toEqual({ content: 'edited src/money.ts' })
  })
})
