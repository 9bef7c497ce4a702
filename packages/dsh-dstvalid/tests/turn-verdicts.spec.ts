import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { PENDING_NOTE } from 'dsh-dstvalid'
import { boot, breakDiscount, discountTestFails, makeWorkspace, readText, runs, type Harness } from './helpers.ts'

/** The first write of a rename of `add` to `sum` in the shop fixture, made one file per call, definition first (as agents make it). */
const RENAME = [
  { path: 'src/money.ts', old_string: 'export function add(', new_string: 'export function sum(' },
] as const

/** src/cart.ts after the rename, written whole (its import and its use in one call: each file consistent in itself). */
const CART = `import { sum, applyDiscount, type Cents } from './money.ts'

export interface Line {
  sku: string
  price: Cents
  qty: number
}

export function subtotal(lines: Line[]): Cents {
  return lines.reduce((acc, line) => sum(acc, line.price * line.qty), 0)
}

export function total(lines: Line[], discountPercent = 0): Cents {
  return applyDiscount(subtotal(lines), discountPercent)
}
`

const call = (id: string, args: object, name = 'edit_file') => ({ id, name, arguments: args })
const script = (...steps: object[]) => steps.map(s => JSON.stringify(s)).join('\n')

const KEPT_FOR_NOW = [
  'edited src/money.ts',
  'kept for now: 1 file no longer type-checks against this change:',
  "src/cart.ts:1 TS2305 Module '\"./money.ts\"' has no exported member 'add'.",
  '(typecheck stopped at the first new errors: possibly more in files not checked)',
  'fix them before you finish, or this change is undone',
].join('\n')

function results(h: { session: { ofType(t: 'tool/result'): { data: { callId: string; content: string; isError: boolean } }[] } }) {
  return h.session.ofType('tool/result').map(e => [e.data.callId, e.data.isError, e.data.content])
}

/** The checks' commands that ran after the turn's last tool result: what its stop measured. */
function stopRuns(h: Harness) {
  const last = h.session.ofType('tool/result').at(-1)!.seq
  return h.session.ofType('verify/run').filter(e => e.seq > last).map(e => [e.data.check, e.data.argv.join(' ')])
}

const JUDGED_ALREADY = /^the turn's change \(src\/money\.ts\): judged by the verdicts of its \d+ writes?, every check measured on the content as it is \(nothing run again\)$/

function notices(h: { session: { ofType(t: 'context/message'): { data: { source: string; text: string } }[] } }) {
  return h.session.ofType('context/message').filter(e => e.data.source === 'dsh-dstvalid').map(e => e.data.text)
}

describe('turn verdicts (ADR 0037)', { timeout: 180_000 }, () => {
  it('a rename across files, one file per call, definition first: every write kept, nothing rolled back', async () => {
    const root = makeWorkspace()
    const s = script(
      { toolCalls: [call('def', RENAME[0])] },
      { toolCalls: [call('imp', { path: 'src/cart.ts', content: CART }, 'write_file')] },
      { toolCalls: [call('test', { path: 'tests/money.test.ts', old_string: "import { add, applyDiscount } from '../src/money.ts'", new_string: "import { sum as add, applyDiscount } from '../src/money.ts'" })] },
      { text: 'Renamed.' },
    )
    const h = await boot(root, { verdicts: 'turn' }, { snapshot: { real: {} }, script: s })
    await h.ctx.agents.create(h.session).send('Rename add to sum.')
    const r = results(h)
    expect(r[0]).toEqual(['def', false, KEPT_FOR_NOW])
    expect(r.slice(1)).toEqual([
      ['imp', false, "wrote src/cart.ts (382 bytes)\nthe problems this turn's earlier writes left in other files are fixed (the whole change is checked again when you finish)"],
      ['test', false, 'edited tests/money.test.ts\nnot type-checked: tests/money.test.ts is in no tsconfig program'],
    ])
    expect(r.every(([, isError]) => !isError)).toBe(true)
    expect(r.some(([, , content]) => String(content).includes('rolled back'))).toBe(false)
    expect(notices(h)).toEqual([])
    expect(h.notices.map(n => n.text)).toContain("the turn's change is no worse than the turn's start: 3 held writes kept")
    expect(readText(root, 'src/money.ts')).toContain('export function sum(')
    expect(readText(root, 'src/cart.ts')).toContain('sum(acc, line.price * line.qty)')
    expect(readText(root, 'tests/money.test.ts')).toContain('sum as add')
    // Nothing left open in the snapshot journal: every held write was committed at the stop.
    expect(h.results.filter(x => x.outcome === 'rolled-back')).toEqual([])
  })

  it('the rename stopped after its first write: the stop refused once with the breakage, then (nothing written since) the definition undone byte for byte, unrelated work kept', async () => {
    const root = makeWorkspace()
    const money = readFileSync(join(root, 'src/money.ts'))
    const cart = readFileSync(join(root, 'src/cart.ts'))
    const s = script(
      { toolCalls: [call('def', RENAME[0])] },
      { toolCalls: [call('other', { path: 'src/greeting.ts', old_string: 'Hello', new_string: 'Hi' })] },
      // Half an importer update, through the shell: it built on the change, so it goes with it.
      { toolCalls: [call('sh', { command: "sed -i 's/^import { add,/import { sum, add,/' src/cart.ts" }, 'bash')] },
      { text: 'Done.' },
      // Asked to fix, the model only answers: its stop is not refused again (stopRefusals: 2), the change is undone.
      { text: 'Done, really.' },
      { text: 'Done.' },
    )
    const h = await boot(root, { verdicts: 'turn', tests: 'off' }, { snapshot: { real: {} }, script: s })
    await h.ctx.agents.create(h.session).send('Rename add to sum.')
    expect(notices(h)).toEqual([
      [
        'not done: this turn leaves the project worse than it began (stop refused, 1 of 2): 1 file no longer type-checks:',
        "src/cart.ts:1 TS2305 Module '\"./money.ts\"' has no exported member 'add'.",
        'fix them, then finish; stopping again without writing a fix undoes edit_file on src/money.ts; bash on src/cart.ts',
      ].join('\n'),
      [
        'undone at the end of the turn: edit_file on src/money.ts; bash on src/cart.ts; it left the project worse than the turn began: 1 file no longer type-checks:',
        "src/cart.ts:1 TS2305 Module '\"./money.ts\"' has no exported member 'add'.",
        'kept: edit_file on src/greeting.ts',
        'to make this change, update every file it breaks in the same turn before you finish',
      ].join('\n'),
    ])
    expect(readFileSync(join(root, 'src/money.ts'))).toEqual(money)
    expect(readFileSync(join(root, 'src/cart.ts'))).toEqual(cart)
    expect(readText(root, 'src/greeting.ts')).toContain('Hi, ${name}!')
    expect(h.results.filter(x => x.outcome === 'rolled-back').map(x => [x.callId, x.check])).toEqual([['def', 'typecheck'], ['sh', 'typecheck']])
    expect(h.notices.map(n => n.text)).toContain('the stop came with nothing written since it was refused: the unfinished change is undone now (1 refusal of 2)')
    // The model's steps: the three calls, the refused stop, the stop that undid the change; the last answer was never asked for.
    expect(h.session.ofType('step/start')).toHaveLength(5)
    // The next write is judged against the state the turn began with.
    expect(await h.exec('edit_file', { path: 'src/money.ts', old_string: 'return a + b', new_string: 'return b + a' })).toEqual({ content: 'edited src/money.ts' })
  })

  it('refused, then the model only reads, makes a call that fails and runs a command that changes nothing: nothing was written, so the next stop undoes the change (one refusal, not two)', async () => {
    const root = makeWorkspace()
    const money = readFileSync(join(root, 'src/money.ts'))
    const s = script(
      { toolCalls: [call('bug', breakDiscount)] },
      { text: 'Done.' },
      { toolCalls: [call('read', { path: 'src/money.ts' }, 'read_file')] },
      { toolCalls: [call('miss', { path: 'src/money.ts', old_string: 'not in the file', new_string: 'x' })] },
      { toolCalls: [call('look', { command: 'cat tests/money.test.ts' }, 'bash')] },
      { text: 'Done.' },
      { text: 'Done.' },
    )
    const h = await boot(root, { verdicts: 'turn' }, { snapshot: { real: {} }, script: s })
    await h.ctx.agents.create(h.session).send('Round the discount up.')
    expect(results(h).map(([id, isError]) => [id, isError])).toEqual([['bug', false], ['read', false], ['miss', true], ['look', false]])
    const said = notices(h)
    expect(said).toHaveLength(2)
    expectRefusedThenUndone(said, root, money, 2)
    expect(h.results.filter(x => x.outcome === 'rolled-back').map(x => [x.callId, x.check])).toEqual([['bug', 'test']])
  })

  it('refused, then a write that does not fix it: refused again; then a stop with nothing written since undoes the change before the refusals are spent', async () => {
    const root = makeWorkspace()
    const money = readFileSync(join(root, 'src/money.ts'))
    const note = { path: 'src/money.ts', old_string: '/** Amounts are integer cents. */', new_string: '/** Amounts are integer cents, discounts rounded up. */' }
    const s = script(
      { toolCalls: [call('bug', breakDiscount)] },
      { text: 'Done.' },
      { toolCalls: [call('note', note)] },
      { text: 'Fixed.' },
      { text: 'Done.' },
      { text: 'Done.' },
    )
    const h = await boot(root, { verdicts: 'turn', stopRefusals: 3 }, { snapshot: { real: {} }, script: s })
    await h.ctx.agents.create(h.session).send('Round the discount up.')
    expect(results(h).map(([id, isError]) => [id, isError])).toEqual([['bug', false], ['note', false]])
    const said = notices(h)
    expect(said.map(t => t.split('\n')[0])).toEqual([
      'not done: this turn leaves the project worse than it began (stop refused, 1 of 3): 1 test in 1 file fails:',
      'not done: this turn leaves the project worse than it began (stop refused, 2 of 3): 1 test in 1 file fails:',
      'undone at the end of the turn: edit_file on src/money.ts; edit_file on src/money.ts; it left the project worse than the turn began: 1 test in 1 file fails:',
    ])
    expect(said[1]!.split('\n').at(-1)).toBe('fix them, then finish; stopping again without writing a fix undoes edit_file on src/money.ts; edit_file on src/money.ts')
    expect(readFileSync(join(root, 'src/money.ts'))).toEqual(money)
    expect(h.results.filter(x => x.outcome === 'rolled-back').map(x => [x.callId, x.check])).toEqual([['bug', 'test'], ['note', 'test']])
  })

  it('refused, then a write that does not fix it, with the default two refusals: refused again, then undone at the next stop', async () => {
    const root = makeWorkspace()
    const money = readFileSync(join(root, 'src/money.ts'))
    const note = { path: 'src/money.ts', old_string: '/** Amounts are integer cents. */', new_string: '/** Amounts are integer cents, discounts rounded up. */' }
    const s = script({ toolCalls: [call('bug', breakDiscount)] }, { text: 'Done.' }, { toolCalls: [call('note', note)] }, { text: 'Fixed.' }, { toolCalls: [call('note2', { ...note, old_string: note.new_string, new_string: '/** Cents. */' })] }, { text: 'Done.' })
    const h = await boot(root, { verdicts: 'turn' }, { snapshot: { real: {} }, script: s })
    await h.ctx.agents.create(h.session).send('Round the discount up.')
    const said = notices(h)
    expect(said.map(t => t.split('\n')[0])).toEqual([
      'not done: this turn leaves the project worse than it began (stop refused, 1 of 2): 1 test in 1 file fails:',
      'not done: this turn leaves the project worse than it began (stop refused, 2 of 2): 1 test in 1 file fails:',
      'undone at the end of the turn: edit_file on src/money.ts; edit_file on src/money.ts; edit_file on src/money.ts; it left the project worse than the turn began: 1 test in 1 file fails:',
    ])
    expect(said[0]!.split('\n').at(-1)).toBe('fix them, then finish; stopping again without writing a fix undoes edit_file on src/money.ts')
    // The last refusal: any stop with the problems open undoes the change.
    expect(said[1]!.split('\n').at(-1)).toBe('fix them, then finish; stopping with them open undoes edit_file on src/money.ts; edit_file on src/money.ts')
    expect(readFileSync(join(root, 'src/money.ts'))).toEqual(money)
    expect(h.results.filter(x => x.outcome === 'rolled-back').map(x => x.callId)).toEqual(['bug', 'note', 'note2'])
  })

  it('refused, then a fix that breaks its own file (rolled back at once): that is writing, so the stop is refused again', async () => {
    const root = makeWorkspace()
    const money = readFileSync(join(root, 'src/money.ts'))
    const s = script(
      { toolCalls: [call('bug', breakDiscount)] },
      { text: 'Done.' },
      { toolCalls: [call('typo', { path: 'src/money.ts', old_string: 'return a + b', new_string: "return 'a + b'" })] },
      { text: 'Fixed.' },
      { text: 'Done.' },
      { text: 'Done.' },
    )
    const h = await boot(root, { verdicts: 'turn', stopRefusals: 3 }, { snapshot: { real: {} }, script: s })
    await h.ctx.agents.create(h.session).send('Round the discount up.')
    const [, typo] = results(h)
    expect(typo![1]).toBe(true)
    expect(String(typo![2]).split('\n')[0]).toBe('rolled back: typecheck failed after edit_file on src/money.ts')
    const said = notices(h)
    expect(said.map(t => t.split('\n')[0])).toEqual([
      'not done: this turn leaves the project worse than it began (stop refused, 1 of 3): 1 test in 1 file fails:',
      'not done: this turn leaves the project worse than it began (stop refused, 2 of 3): 1 test in 1 file fails:',
      'undone at the end of the turn: edit_file on src/money.ts; it left the project worse than the turn began: 1 test in 1 file fails:',
    ])
    expect(readFileSync(join(root, 'src/money.ts'))).toEqual(money)
  })

  it('refused, then fixed: the next stop commits the turn', async () => {
    const root = makeWorkspace()
    const fix = { path: 'src/money.ts', old_string: breakDiscount.new_string, new_string: breakDiscount.old_string }
    const s = script({ toolCalls: [call('bug', breakDiscount)] }, { text: 'Done.' }, { toolCalls: [call('fix', fix)] }, { text: 'Fixed.' })
    const h = await boot(root, { verdicts: 'turn' }, { snapshot: { real: {} }, script: s })
    await h.ctx.agents.create(h.session).send('Round the discount up.')
    expect(notices(h)).toEqual([[
      'not done: this turn leaves the project worse than it began (stop refused, 1 of 2): 1 test in 1 file fails:',
      discountTestFails,
      'fix them, then finish; stopping again without writing a fix undoes edit_file on src/money.ts',
    ].join('\n')])
    expect(h.notices.map(n => n.text)).toContain("the turn's change is no worse than the turn's start: 2 held writes kept")
    expect(readText(root, 'src/money.ts')).toContain('Math.round(amount * (1 - percent / 100))')
    expect(h.results.filter(x => x.outcome === 'rolled-back')).toEqual([])
    expect(h.session.ofType('turn/end').map(e => e.data.reason)).toEqual(['completed'])
  })

  it('a behaviour change its tests catch, never fixed: kept for now, gone by the end of the turn', async () => {
    const root = makeWorkspace()
    const money = readFileSync(join(root, 'src/money.ts'))
    const h = await boot(root, { verdicts: 'turn', stopRefusals: 1 }, { snapshot: { real: {} }, script: script({ toolCalls: [call('bug', breakDiscount)] }, { text: 'Done.' }, { text: 'Done.' }) })
    await h.ctx.agents.create(h.session).send('Round the discount up.')
    const [first] = results(h)
    expect(first).toEqual(['bug', false, ['edited src/money.ts', 'kept for now: 1 test in 1 file fails against this change:', discountTestFails, 'fix them before you finish, or this change is undone'].join('\n')])
    const said = notices(h)
    expect(said).toHaveLength(2)
    expectRefusedThenUndone(said, root, money)
  })

  it('a behaviour change its tests catch, then fixed: the stop judges the turn by the verdicts already measured, nothing run again', async () => {
    const root = makeWorkspace()
    const fix = { path: 'src/money.ts', old_string: breakDiscount.new_string, new_string: breakDiscount.old_string }
    const h = await boot(root, { verdicts: 'turn' }, { snapshot: { real: {} }, script: script({ toolCalls: [call('bug', breakDiscount)] }, { toolCalls: [call('fix', fix)] }, { text: 'Done.' }) })
    await h.ctx.agents.create(h.session).send('Round the discount up, then back.')
    const [first, second] = results(h)
    expect(first![2]).toContain('kept for now: 1 test in 1 file fails against this change:')
    expect(second).toEqual(['fix', false, "edited src/money.ts\nthe problems this turn's earlier writes left in other files are fixed (the whole change is checked again when you finish)"])
    // Both writes' tests ran after them (the fix's verdict measured the content as it is): the stop runs nothing.
    expect(runs(h.session).filter(r => r.check === 'test').length).toBeGreaterThan(0)
    expect(stopRuns(h)).toEqual([])
    expect(h.notices.map(n => n.text).filter(t => JUDGED_ALREADY.test(t))).toHaveLength(1)
    expect(h.notices.map(n => n.text)).toContain("the turn's change is no worse than the turn's start: 2 held writes kept")
    expect(notices(h)).toEqual([])
    expect(readText(root, 'src/money.ts')).toContain('Math.round(amount * (1 - percent / 100))')
    expect(h.results.filter(x => x.outcome === 'rolled-back')).toEqual([])
  })

  it('a behaviour change its tests catch, never fixed: the stop refuses and undoes it on the failures its verdict measured, nothing run again', async () => {
    const root = makeWorkspace()
    const money = readFileSync(join(root, 'src/money.ts'))
    const h = await boot(root, { verdicts: 'turn', stopRefusals: 1 }, { snapshot: { real: {} }, script: script({ toolCalls: [call('bug', breakDiscount)] }, { text: 'Done.' }, { text: 'Done.' }) })
    await h.ctx.agents.create(h.session).send('Round the discount up.')
    const said = notices(h)
    expectRefusedThenUndone(said, root, money)
    expect(stopRuns(h)).toEqual([])
    expect(h.notices.map(n => n.text).filter(t => JUDGED_ALREADY.test(t))).toHaveLength(1)
    expect(h.results.filter(x => x.outcome === 'rolled-back').map(x => [x.callId, x.check])).toEqual([['bug', 'test']])
  })

  it('a behaviour change its tests catch, never fixed, beside unrelated work: after undoing it the stop measures only what the undone file can affect', async () => {
    const root = makeWorkspace()
    const money = readFileSync(join(root, 'src/money.ts'))
    const other = call('other', { path: 'src/greeting.ts', old_string: 'return `Hello, ${name}!`', new_string: 'const text = `Hello, ${name}!`\n  return text' })
    const h = await boot(root, { verdicts: 'turn', stopRefusals: 1 }, { snapshot: { real: {} }, script: script({ toolCalls: [call('bug', breakDiscount)] }, { toolCalls: [other] }, { text: 'Done.' }, { text: 'Done.' }) })
    await h.ctx.agents.create(h.session).send('Round the discount up, and greet shorter.')
    const said = notices(h)
    expect(said[1]!.split('\n')).toContain('kept: edit_file on src/greeting.ts')
    expect(readFileSync(join(root, 'src/money.ts'))).toEqual(money)
    expect(readText(root, 'src/greeting.ts')).toContain('return text')
    // The greeting's tests ran once, after its write; what stays is judged by them and by src/money.ts's tests after it was put back.
    expect(runs(h.session).filter(r => r.check === 'test' && r.argv.includes('src/greeting.ts'))).toHaveLength(1)
    expect(stopRuns(h).filter(([check]) => check === 'test')).toEqual([['test', 'vitest related src/money.ts --run (warm)']])
    expect(h.results.filter(x => x.outcome === 'rolled-back').map(x => [x.callId, x.check])).toEqual([['bug', 'test']])
  })

  it('background verdicts: the behaviour change returns pending, its turn verdict comes in before the stop is judged, then the same refusal and undo', async () => {
    const root = makeWorkspace()
    const money = readFileSync(join(root, 'src/money.ts'))
    const h = await boot(root, { verdicts: 'turn', stopRefusals: 1, background: true }, { snapshot: { real: {} }, script: script({ toolCalls: [call('bug', breakDiscount)] }, { text: 'Done.' }, { text: 'Done.' }) })
    await h.ctx.agents.create(h.session).send('Round the discount up.')
    expect(results(h)).toEqual([['bug', false, `edited src/money.ts\n${PENDING_NOTE}`]])
    const said = notices(h)
    expect(said).toHaveLength(3)
    expect(said[0]).toBe(['the verdict on your earlier edit_file of src/money.ts came in: kept', 'kept for now: 1 test in 1 file fails against this change:', discountTestFails, 'fix them before you finish, or this change is undone'].join('\n'))
    expect(said[1]!.split('\n')[0]).toBe('not done: this turn leaves the project worse than it began (stop refused, 1 of 1): 1 test in 1 file fails:')
    expect(said[2]!.split('\n')[0]).toBe('undone at the end of the turn: edit_file on src/money.ts; it left the project worse than the turn began: 1 test in 1 file fails:')
    expect(readFileSync(join(root, 'src/money.ts'))).toEqual(money)
  })

  it("strict verdicts: the rename's first write is rolled back at once, as before", async () => {
    const root = makeWorkspace()
    const money = readFileSync(join(root, 'src/money.ts'))
    const h = await boot(root, { verdicts: 'strict', tests: 'off' }, { snapshot: { real: {} } })
    const r = await h.exec('edit_file', RENAME[0])
    expect(r).toEqual({ isError: true, content: [
      'rolled back: typecheck failed after edit_file on src/money.ts',
      "src/cart.ts:1 TS2305 Module '\"./money.ts\"' has no exported member 'add'.",
      '(typecheck stopped at the first new errors: possibly more in files not checked)',
    ].join('\n') })
    expect(readFileSync(join(root, 'src/money.ts'))).toEqual(money)
  })
})

/**
 * The discount bug's stop refused once, then undone: what the model was told, and the file as before. `of`: the
 * refusals allowed; under one, the refusal says a stop without a fix undoes it.
 */
function expectRefusedThenUndone(said: string[], root: string, money: Buffer, of = 1): void {
  expect(said[0]).toBe([
    `not done: this turn leaves the project worse than it began (stop refused, 1 of ${of}): 1 test in 1 file fails:`,
    discountTestFails,
    `fix them, then finish; ${of > 1 ? 'stopping again without writing a fix' : 'stopping with them open'} undoes edit_file on src/money.ts`,
  ].join('\n'))
  expect(said[1]!.split('\n')[0]).toBe('undone at the end of the turn: edit_file on src/money.ts; it left the project worse than the turn began: 1 test in 1 file fails:')
  expect(readFileSync(join(root, 'src/money.ts'))).toEqual(money)
}
