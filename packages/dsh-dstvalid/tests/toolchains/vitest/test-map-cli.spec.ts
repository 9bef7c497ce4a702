import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { label, util } from '../../map-sources.ts'
import { boot, makeWorkspace, runs, type Harness } from '../../helpers.ts'
import { vitestInstall } from '../../registry-installs.ts'

/** Installing a vitest from the registry on a fresh clone takes a while. */
const INSTALL_MS = 600_000

/**
 * 8 test files importing src/util.ts: t00 and t01 run `splitPath`, t02–t05 `shout`, t06 and t07 `label`
 * (src/label.ts, which runs `shout`); t07 has an `afterAll` of its own, which vitest 1 runs in parallel with
 * the recorder's (its default hook order): what it runs would be missed, so there t07 is never mapped
 * (vitest 2 runs hooks in the `stack` order: the recorder's last).
 */
function files(): Record<string, string> {
  const out: Record<string, string> = {
    'package.json': '{ "name": "map-cli-fixture", "private": true, "type": "module" }\n',
    'tsconfig.json': JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'ESNext', moduleResolution: 'bundler', allowImportingTsExtensions: true, strict: true, noEmit: true, skipLibCheck: true, types: [] }, include: ['src', 'tests'] }),
    'src/util.ts': util,
    'src/label.ts': label,
  }
  for (let i = 0; i < 8; i++) {
    const n = String(i).padStart(2, '0')
    const body = i < 2
      ? `import { splitPath } from '../src/util.ts'\nit('splits ${n}', () => { expect(splitPath('a/b')).toEqual(['a', 'b']) })\n`
      : i < 6
        ? `import { shout } from '../src/util.ts'\nit('shouts ${n}', () => { expect(shout('a/b')).toBe('A/B') })\n`
        : `import '../src/util.ts'\nimport { label } from '../src/label.ts'\nit('labels ${n}', () => { expect(label('/x')).toBe('/X') })\n`
    const hook = i === 7 ? "afterAll(() => { expect(label('/y')).toBe('/Y') })\n" : ''
    out[`tests/t${n}.test.ts`] = `import { ${hook ? 'afterAll, ' : ''}expect, it } from 'vitest'\n${body}${hook}`
  }
  return out
}

/** The test runs of the session so far, as `argv (outcome)`: vitest's arguments up to this package's reporter (the recording config's temporary path left out). */
function testRuns(h: Harness): string[] {
  return runs(h.session).filter(r => r.check === 'test').map(r => `${r.argv.slice(2).join(' ').replace(/ --config \S+/, '').replace(/ --reporter=.*/, '')} (${r.outcome})`)
}

/** A related run of src/util.ts that leaves these test files out (in one glob: vitest 1 takes one `--exclude`). */
function relatedRun(leftOut: number[], outcome = 'pass'): string {
  return `related src/util.ts --run --exclude {${leftOut.map(i => `tests/t${String(i).padStart(2, '0')}.test.ts`).join(',')}} (${outcome})`
}

const lastNote = (h: Harness) => h.notices.map(n => n.text).filter(t => t.startsWith('tests: ')).at(-1)

describe.each([1, 2] as const)('the map of executed functions on the vitest CLI (vitest %i, installed from the registry)', major => {
  // vitest 1: t07 is not mapped, vitest runs it as related; vitest 2: it is, and is left out with the others.
  const t07 = major === 1 ? 1 : 0
  const unmapped = major === 1 ? ', and 1 not mapped yet' : ''
  it('a body edit runs the test files that ran the function and catches its break; a top-level edit runs every related file; a stale entry runs and is re-recorded; a comment keeps the map current', async () => {
    const root = makeWorkspace('', files(), { nodeModules: await vitestInstall(major) })
    const h = await boot(root, { testSelection: 'functions' })
    h.ctx.dstvalid.guardFor(root, h.session.vault)
    await h.ready()
    const mapFile = join(h.session.vault, 'test-map', 'vitest.json')

    // The accepted state, the whole suite, records the map (vitest 1: t07 aside, its afterAll).
    expect(testRuns(h)).toEqual(['run (pass)'])
    const mapped = () => JSON.parse(readFileSync(mapFile, 'utf8')) as { tests: Record<string, Record<string, { ran: string[] }>> }
    expect(Object.keys(mapped().tests).sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7].slice(0, 8 - t07).map(i => `tests/t0${i}.test.ts`))
    expect(mapped().tests['tests/t00.test.ts']!['src/util.ts']!.ran).toContain('splitPath')
    expect(mapped().tests['tests/t02.test.ts']!['src/util.ts']!.ran).not.toContain('splitPath')

    // A body edit of splitPath, behaviour kept: the two test files that ran it (vitest 1: and t07, which vitest finds related and the map does not know).
    const leftOut = [2, 3, 4, 5, 6, 7].slice(0, 6 - t07)
    const note = `tests: ${2 + t07} of 8 related test files: those that ran \`splitPath\`${unmapped}`
    expect(await h.exec('edit_file', { path: 'src/util.ts', old_string: 'part => part.length > 0', new_string: 'part => part !== \'\'' }))
      .toEqual({ content: `edited src/util.ts\n${note}` })
    expect(testRuns(h).at(-1)).toBe(relatedRun(leftOut))

    // Broken: caught by those two, rolled back.
    const broken = await h.exec('edit_file', { path: 'src/util.ts', old_string: 'part => part !== \'\'', new_string: 'part => part !== \'a\'' })
    expect(broken.content.split('\n')).toEqual([
      'rolled back: test failed after edit_file on src/util.ts',
      "tests/t00.test.ts:3 FAIL splits 00 — AssertionError: expected [ 'b' ] to deeply equal [ 'a', 'b' ]",
      "tests/t01.test.ts:3 FAIL splits 01 — AssertionError: expected [ 'b' ] to deeply equal [ 'a', 'b' ]",
    ])
    expect(lastNote(h)).toBe(note)
    expect(testRuns(h).filter(r => r.startsWith('related ')).at(-1)).toBe(relatedRun(leftOut, 'fail'))

    // A top-level change: every related test file, and the notice says why.
    const before = testRuns(h).length
    expect(await h.exec('edit_file', { path: 'src/label.ts', old_string: 'export function depth', new_string: 'export const SEPARATOR = \'/\'\n\nexport function depth' }))
      .toEqual({ content: 'edited src/label.ts' })
    expect(testRuns(h).slice(before)).toEqual(['related src/label.ts --run (pass)'])
    expect(h.notices.map(n => n.text)).toContain('tests: related test files by imports (src/label.ts: code outside function bodies changed)')

    // Behind the guard's back, label starts running splitPath: the entries of t06 (and t07) are stale (label.ts is not
    // what they ran on), so a body edit of splitPath runs them too — and the break they catch rolls the edit back.
    writeFileSync(join(root, 'src/label.ts'), label.replace('return shout(name)', "return '/' + shout(splitPath(name).join('/'))"))
    const staleBreak = await h.exec('edit_file', { path: 'src/util.ts', old_string: 'part => part !== \'\'', new_string: 'part => part !== \'x\'' })
    expect(staleBreak.content.split('\n')[0]).toBe('rolled back: test failed after edit_file on src/util.ts')
    expect(staleBreak.content.split('\n').slice(1)).toEqual([6, 7].map(i => `tests/t0${i}.test.ts:4 FAIL labels 0${i} — AssertionError: expected '/' to be '/X' // Object.is equality`))
    const staleNote = `tests: 4 of 8 related test files: those that ran \`splitPath\`, and ${major === 1 ? '1 not mapped yet and 1' : '2'} whose map is stale`
    expect(lastNote(h)).toBe(staleNote)

    // The rollback put back the stale entries as they were (recorded on the label.ts that is gone): still stale, so the
    // next body edit runs them again; kept, that run re-records them, and the edit after that finds them among those that ran splitPath.
    expect(await h.exec('edit_file', { path: 'src/util.ts', old_string: 'part => part !== \'\'', new_string: 'part => part.length !== 0' }))
      .toEqual({ content: `edited src/util.ts\n${staleNote}` })
    expect(mapped().tests['tests/t06.test.ts']!['src/util.ts']!.ran).toContain('splitPath')
    expect(await h.exec('edit_file', { path: 'src/util.ts', old_string: 'part => part.length !== 0', new_string: 'part => part.length > 0' }))
      .toEqual({ content: `edited src/util.ts\ntests: 4 of 8 related test files: those that ran \`splitPath\`${unmapped}` })
    expect(testRuns(h).at(-1)).toBe(relatedRun([2, 3, 4, 5]))

    // A comment runs no test and keeps the entries current: the body edit after it runs the same selection, not
    // every test file that loaded src/util.ts as stale.
    const beforeComment = testRuns(h).length
    expect((await h.exec('edit_file', { path: 'src/util.ts', old_string: 'export function shout', new_string: '/** Upper case. */\nexport function shout' })).content.split('\n')[0])
      .toBe('edited src/util.ts')
    expect(testRuns(h).length).toBe(beforeComment)
    expect(await h.exec('edit_file', { path: 'src/util.ts', old_string: 'part => part.length > 0', new_string: 'part => part.length >= 1' }))
      .toEqual({ content: `edited src/util.ts\ntests: 4 of 8 related test files: those that ran \`splitPath\`${unmapped}` })
  }, INSTALL_MS)
})
