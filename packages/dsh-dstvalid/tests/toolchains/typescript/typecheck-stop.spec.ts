/**
 * A write the type-check rejects is answered at the first new errors: the
 * changed file is checked first, then its direct importers, and the check
 * stops at the first file whose new errors already make the write worse
 * (the rest cannot change the verdict). A write with no new error is still
 * checked whole. Real TypeScript, through the guard: a hub module with six
 * importers.
 */
import { describe, expect, it } from 'vitest'
import { boot, makeWorkspace, readText, runs, STOPPED } from '../../helpers.ts'

const IMPORTERS = 6
const importer = (i: number, name: string) => `import { ${name} } from './hub.ts'\n\nexport const loud${i}: string = ${name}('${i}')\n`
const files: Record<string, string> = {
  'src/hub.ts': 'export function shout(s: string): string {\n  return s.toUpperCase()\n}\n',
}
for (let i = 0; i < IMPORTERS; i++) files[`src/use-${i}.ts`] = importer(i, 'shout')

const line = (value: unknown) => JSON.stringify(value)
const edit = (id: string, path: string, from: string, to: string) => ({ id, name: 'edit_file', arguments: { path, old_string: from, new_string: to } })

describe('a rejected write stops the type-check at the first new errors', { timeout: 300_000 }, () => {
  it('a rename breaking six importers is rolled back after re-checking two files; the rename with its importers updated is kept, checked whole; the next verdicts are right', async () => {
    const root = makeWorkspace('shop', files)
    const renameAll = Array.from({ length: IMPORTERS }, (_, i) => ({ id: `all${i}`, name: 'write_file', arguments: { path: `src/use-${i}.ts`, content: importer(i, 'yell') } }))
    const script = [
      line({ text: 'Rename shout.', toolCalls: [edit('rename', 'src/hub.ts', 'function shout(', 'function yell(')] }),
      line({ text: 'Rename it everywhere.', toolCalls: [edit('hub', 'src/hub.ts', 'function shout(', 'function yell('), ...renameAll] }),
      line({ text: 'Break the last importer only.', toolCalls: [edit('last', `src/use-${IMPORTERS - 1}.ts`, `loud${IMPORTERS - 1}: string`, `loud${IMPORTERS - 1}: number`)] }),
      line({ text: 'Make yell take a number.', toolCalls: [edit('number', 'src/hub.ts', 'yell(s: string): string {\n  return s.toUpperCase()', 'yell(s: number): string {\n  return String(s)')] }),
      line({ text: 'A body-only edit.', toolCalls: [edit('fine', 'src/hub.ts', 'return s.toUpperCase()', 'return s.trim().toUpperCase()')] }),
      line({ text: 'Done.' }),
    ].join('\n')
    const h = await boot(root, { per: 'step', tests: 'off' }, { script })
    expect(await h.ctx.agents.create(h.session).send('go')).toBe('completed')
    const results = Object.fromEntries(h.session.ofType('tool/result').map(e => [e.data.callId, e.data]))

    // The hub first (no new error of its own), then its first importer: the write is worse, the other five are never checked.
    expect(results.rename).toMatchObject({ isError: true, content: [
      'rolled back: typecheck failed after edit_file on src/hub.ts',
      "src/use-0.ts:1 TS2305 Module '\"./hub.ts\"' has no exported member 'shout'.",
      STOPPED,
    ].join('\n') })
    for (let i = 0; i < IMPORTERS; i++) expect(results[`all${i}`]).toMatchObject({ isError: false })
    expect(results.last).toMatchObject({ isError: true, content: [
      `rolled back: typecheck failed after edit_file on src/use-${IMPORTERS - 1}.ts`,
      `src/use-${IMPORTERS - 1}.ts:3 TS2322 Type 'string' is not assignable to type 'number'.`,
      STOPPED,
    ].join('\n') })
    expect(results.number).toMatchObject({ isError: true, content: [
      'rolled back: typecheck failed after edit_file on src/hub.ts',
      "src/use-0.ts:3 TS2345 Argument of type 'string' is not assignable to parameter of type 'number'.",
      STOPPED,
    ].join('\n') })
    expect(results.fine).toMatchObject({ isError: false })
    expect(readText(root, 'src/hub.ts')).toBe('export function yell(s: string): string {\n  return s.trim().toUpperCase()\n}\n')
    expect(readText(root, 'src/use-0.ts')).toBe(importer(0, 'yell'))

    // What each check re-checked, from its run record: the rejected writes stop after a file or two;
    // the kept rename re-checks the hub and all six importers.
    const mode = runs(h.session).filter(r => r.check === 'typecheck').map(r => r.argv.at(-1))
    expect(mode).toEqual([
      '(in-process, cold)',
      '(in-process, incremental; stopped at the first new errors, 2 files re-checked)',
      '(in-process, incremental)',
      '(in-process, incremental; stopped at the first new errors, 1 file re-checked)',
      '(in-process, incremental; stopped at the first new errors, 2 files re-checked)',
      '(in-process, incremental)',
    ])
    // Every rollback was byte for byte: nothing re-checked after it.
    expect(h.notices.filter(n => n.text === 'accepted state confirmed: every file is back byte for byte (nothing re-checked)')).toHaveLength(3)
  })
  it('the importers that mention the changed export are checked first, whatever their place in the program', async () => {
    const twoExports = 'export function shout(s: string): string {\n  return s.toUpperCase()\n}\n\nexport function whisper(s: string): string {\n  return s.toLowerCase()\n}\n'
    const spread: Record<string, string> = { 'src/hub.ts': twoExports }
    // Five importers of `whisper` come first in the program; only the last imports `shout`.
    for (let i = 0; i < IMPORTERS; i++) spread[`src/use-${i}.ts`] = importer(i, i === IMPORTERS - 1 ? 'shout' : 'whisper')
    const root = makeWorkspace('shop', spread)
    const script = [
      line({ text: 'Rename shout.', toolCalls: [edit('rename', 'src/hub.ts', 'function shout(', 'function yell(')] }),
      line({ text: 'Done.' }),
    ].join('\n')
    const h = await boot(root, { per: 'step', tests: 'off' }, { script })
    expect(await h.ctx.agents.create(h.session).send('go')).toBe('completed')
    const [result] = h.session.ofType('tool/result').map(e => e.data)
    expect(result).toMatchObject({ isError: true, content: [
      'rolled back: typecheck failed after edit_file on src/hub.ts',
      `src/use-${IMPORTERS - 1}.ts:1 TS2305 Module '"./hub.ts"' has no exported member 'shout'.`,
      STOPPED,
    ].join('\n') })
    // The hub, then the one importer that names `shout` (in the program's order it is the sixth of six).
    expect(runs(h.session).filter(r => r.check === 'typecheck').map(r => r.argv.at(-1))).toEqual([
      '(in-process, cold)',
      '(in-process, incremental; stopped at the first new errors, 2 files re-checked)',
    ])
  })
})
