import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { bodyEdit, commentOnly, predictedNames, resolveFromWorkspace, TestMap, VitestCheck, vitestCommand, WarmVitestCheck, type CheckIO } from 'dsh-dstvalid'
import { label, util } from '../../map-sources.ts'
import { boot, BODY_EDIT_LINES, makeWorkspace, readText, runs, type Harness } from '../../helpers.ts'

const line = (value: unknown) => JSON.stringify(value)

/**
 * \`count\` test files importing src/util.ts: t00 and t01 run \`splitPath\`, t02 up to
 * \`direct\` \`shout\` directly, the rest \`label\` (src/label.ts, which runs \`shout\`).
 */
function files(count = 40, direct = 10): Record<string, string> {
  const out: Record<string, string> = {
    'package.json': '{ "name": "map-fixture", "private": true, "type": "module" }\n',
    'tsconfig.json': JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'ESNext', moduleResolution: 'bundler', allowImportingTsExtensions: true, strict: true, noEmit: true, skipLibCheck: true, types: [] }, include: ['src', 'tests'] }),
    'src/util.ts': util,
    'src/label.ts': label,
  }
  for (let i = 0; i < count; i++) {
    const n = String(i).padStart(2, '0')
    const body = i < 2
      ? `import { splitPath } from '../src/util.ts'\nit('splits ${n}', () => { expect(splitPath('a/b')).toEqual(['a', 'b']) })\n`
      : i < direct
        ? `import { shout } from '../src/util.ts'\nit('shouts ${n}', () => { expect(shout('a/b')).toBe('A/B') })\n`
        : `import '../src/util.ts'\nimport { label } from '../src/label.ts'\nit('labels ${n}', () => { expect(label('/x')).toBe('/X') })\n`
    out[`tests/t${n}.test.ts`] = `import { expect, it } from 'vitest'\n${body}`
  }
  return out
}

/** The test runs of the session so far, as `argv (outcome)`. */
function testRuns(h: Harness): string[] {
  return runs(h.session).filter(r => r.check === 'test').map(r => `${r.argv.join(' ')} (${r.outcome})`)
}

/** `vitest run` of these test files, as the warm runner records a run of named files. */
function ran(numbers: number[]): string {
  return `vitest run ${numbers.map(i => `tests/t${String(i).padStart(2, '0')}.test.ts`).join(' ')} (warm)`
}

/** Three related test files of src/util.ts, one of which runs `shout` and reads src/util.ts as a file: no FIXME left in it. */
function readingWorkspace(): string {
  return makeWorkspace('', {
    ...Object.fromEntries(Object.entries(files(3, 3)).filter(([f]) => f !== 'tests/t01.test.ts')),
    'tests/reads.test.ts': [
      '/// <reference types="node" />',
      "import { readFileSync } from 'node:fs'",
      "import { expect, it } from 'vitest'",
      "import { shout } from '../src/util.ts'",
      "it('shouts', () => { expect(shout('a')).toBe('A') })",
      "it('leaves no FIXME in util.ts', () => { expect(readFileSync(new URL('../src/util.ts', import.meta.url), 'utf8')).not.toContain('FIXME') })",
      '',
    ].join('\n'),
  })
}

describe('the map of executed functions (test selection for body-only edits)', () => {
  it('decides body-only edits on the syntax tree and names functions as V8 does', async () => {
    const base = [
      ...BODY_EDIT_LINES,
      '',
    ].join('\n')
    const cases: [string, string][] = [
      ['/** doc */', '/** other doc */\n// more'],
      ['return a + b', 'return b + a'],
      ['a * b', 'b * a'],
      ['const h = () => k', 'const h = () => k + 0'],
      ['return new Box', 'void 0; return new Box'],
      ['this.v * 2', 'this.v * 3'],
      ['f = () => 1', 'f = () => 2'],
      ['v => v + 1', 'v => v + 2'],
      ['add(a: number, b: number)', 'add(a: number, b = 1)'],
      ["'./x'", "'./y'"],
      ['return a + b', 'return a +'],
    ]
    const outcomes = await Promise.all(cases.map(([from, to]) => bodyEdit('src/calc.ts', base, base.replace(from, to))))
    expect(outcomes).toEqual([
      { kind: 'body', functions: [] },
      { kind: 'body', functions: ['add'] },
      { kind: 'body', functions: ['mul'] },
      { kind: 'body', functions: ['h'] },
      { kind: 'body', functions: ['scale'] },
      { kind: 'body', functions: ['get double'] },
      { kind: 'body', functions: ['f'] },
      { kind: 'other', reason: 'src/calc.ts: a function without a name changed at line 6' },
      { kind: 'other', reason: 'src/calc.ts: code outside function bodies changed' },
      { kind: 'other', reason: 'src/calc.ts: code outside function bodies changed' },
      { kind: 'other', reason: 'src/calc.ts does not parse' },
    ])
    expect([...(await predictedNames('src/calc.ts', base))!].sort()).toEqual(['', '<instance_members_initializer>', '<static_initializer>', '<static_members_initializer>', 'Box', 'add', 'f', 'get', 'get double', 'h', 'mul', 'scale'])
    // A conditional's branch is named after the variable it initialises (V8's inferred name), not in a property's value; a default after its parameter.
    const dual = "export const dual = (n: number, g = () => true) => { const first = n > 0 ? (x: number) => x + 1 : ((x: number) => x - 1); const o = { m: n > 0 ? () => 1 : null }; return [first, o, g] }\n"
    expect(await bodyEdit('src/dual.ts', dual, dual.replace('x - 1', 'x - 2'))).toEqual({ kind: 'body', functions: ['first'] })
    expect(await bodyEdit('src/dual.ts', dual, dual.replace('() => 1', '() => 2'))).toEqual({ kind: 'body', functions: ['dual'] })
    expect(await bodyEdit('src/dual.ts', dual, dual.replace('=> true', '=> false'))).toEqual({ kind: 'body', functions: ['g'] })
    expect([...(await predictedNames('src/dual.ts', dual))!].sort()).toEqual(['', '<instance_members_initializer>', '<static_initializer>', '<static_members_initializer>', 'dual', 'first', 'g', 'get'])
  })

  it('tells a write that changed only comments and whitespace from one that changed code or a directive comment', async () => {
    const base = [
      "import { x } from './x'",
      '/** Adds. */',
      'export function add(a: number, b: number): number {',
      '  // @ts-expect-error',
      '  const s: string = a',
      '  return a + b',
      '}',
      'export const lazy = () => import(/* @vite-ignore */ x)',
      'export function one() {',
      '  return 1',
      '}',
      '',
    ].join('\n')
    const cases: [string, string][] = [
      ['/** Adds. */', '/**\n * Adds two numbers.\n */\n// more'],
      ['  return a + b', '\t\treturn   a+b'],
      ['  // @ts-expect-error\n', '  // @ts-expect-error\n\n  // why\n'],
      ['  // @ts-expect-error\n', '  // @ts-expect-error: a number is no string\n'],
      ['  // @ts-expect-error\n  const s: string = a', '  // @ts-expect-error\n  const s: string =\n    a'],
      ['/* @vite-ignore */ ', ''],
      ['  return 1', '  return /*#__PURE__*/ 1'],
      ['  return 1', '  return 1 /* istanbul ignore next */'],
      ["'./x'", "'./x'\n/// <reference types=\"node\" />"],
      ['/** Adds. */', '/** Adds. @internal */'],
      ['}\n', '}\n//# sourceMappingURL=calc.js.map\n'],
      ['  return 1', '  return\n    1'],
      ['  return 1', "  return ' 1'"],
    ]
    const outcomes = await Promise.all(cases.map(([from, to]) => commentOnly('src/calc.ts', base, base.replace(from, to))))
    expect(outcomes).toEqual([
      true,
      true,
      true,
      'src/calc.ts: a directive comment changed before line 5',
      'src/calc.ts: a directive comment changed before line 5',
      'src/calc.ts: a directive comment changed before line 8',
      'src/calc.ts: a directive comment changed before line 10',
      'src/calc.ts: a directive comment changed before line 11',
      'src/calc.ts: a directive comment changed before line 4',
      'src/calc.ts: a directive comment changed before line 3',
      'src/calc.ts: a directive comment changed before line 9',
      'src/calc.ts: a line break changes how the code parses',
      'src/calc.ts: code changed at line 10',
    ])
    // A directive comment inside a body is that function's change; a line break that ends a statement too.
    expect(await bodyEdit('src/calc.ts', base, base.replace('/* @vite-ignore */ ', ''))).toEqual({ kind: 'body', functions: ['lazy'] })
    expect(await bodyEdit('src/calc.ts', base, base.replace('  return 1', '  return\n    1'))).toEqual({ kind: 'body', functions: ['one'] })

    // JavaScript: a JSDoc tag is a type under checkJs; JSX text keeps its spaces; the #! line; not a script; no parse.
    const js = '/** @param {number} a */\nexport function g(a) { return a }\n'
    const jsx = 'export const C = () => <div>a b</div>\n'
    expect(await Promise.all([
      commentOnly('src/g.js', js, js.replace('{number}', '{string}')),
      commentOnly('src/g.js', js, `// g\n${js}`),
      commentOnly('src/c.tsx', jsx, jsx.replace('a b', 'a  b')),
      commentOnly('src/c.tsx', jsx, jsx.replace('<div>', '<div >')),
      commentOnly('src/c.tsx', jsx, `/** @jsx h */\n${jsx}`),
      commentOnly('bin/x.ts', '#!/usr/bin/env node\nx()\n', '#!/usr/bin/env tsx\nx()\n'),
      commentOnly('data.json', '{}', '{ }'),
      commentOnly('src/a.ts', 'x(', 'x( '),
    ])).toEqual([
      'src/g.js: a directive comment changed before line 2',
      true,
      'src/c.tsx: code changed at line 1',
      true,
      'src/c.tsx: a directive comment changed before line 2',
      'bin/x.ts: its #! line changed',
      'data.json is not a JavaScript or TypeScript module',
      'src/a.ts does not parse',
    ])
  })

  it('a rolled-back edit takes back what its selection noted as equivalent: five rolled-back edits in a row leave the entries current', () => {
    const map = new TestMap()
    const hashes: Record<string, string> = { 'src/a.ts': 'original', 'tests/a.test.ts': 'test' }
    map.record({ 'tests/a.test.ts': { 'src/a.ts': ['used'], 'tests/a.test.ts': [''] } }, ['tests/a.test.ts'], f => hashes[f])
    for (const edited of ['one', 'two', 'three', 'four', 'five']) {
      map.begin()
      // \`unused\` gets a new body: the test file never ran it, so it is left out and the edited content noted for it.
      const picked = map.select(['tests/a.test.ts'], new Map([['src/a.ts', ['unused']]]), f => hashes[f], f => (f === 'src/a.ts' ? edited : hashes[f]))
      expect(picked).toEqual({ run: [], unmapped: [], stale: [] })
      map.undo()
    }
    // The rolled-back contents are gone from the entry, the original is still there.
    expect(map.select(['tests/a.test.ts'], new Map([['src/a.ts', ['unused']]]), f => hashes[f], () => undefined)).toEqual({ run: [], unmapped: [], stale: [] })
    hashes['src/a.ts'] = 'five'
    expect(map.select(['tests/a.test.ts'], new Map([['src/a.ts', ['unused']]]), f => hashes[f], () => undefined)).toEqual({ run: ['tests/a.test.ts'], unmapped: [], stale: ['tests/a.test.ts'] })
  })

  it('a body edit runs the 2 of 40 test files that ran the function and catches its break; a top-level edit runs the import closure; a stale entry runs and is re-recorded', async () => {
    const root = makeWorkspace('', files(40, 37))
    const h = await boot(root, { testSelection: 'functions' })
    // The guard of this session's workspace, with its vault (the map is kept there).
    h.ctx.dstvalid.guardFor(root, h.session.vault)
    await h.ready()
    expect(testRuns(h)).toEqual(['vitest run (warm) (pass)'])
    const mapFile = join(h.session.vault, 'test-map', 'vitest.json')
    expect(existsSync(mapFile)).toBe(true)

    // A body edit of splitPath, behaviour kept: the two test files that ran it.
    const note = 'tests: 2 of 40 related test files: those that ran `splitPath`'
    const kept = await h.exec('edit_file', { path: 'src/util.ts', old_string: 'part => part.length > 0', new_string: 'part => part !== \'\'' })
    expect(kept).toEqual({ content: `edited src/util.ts\n${note}` })
    expect(testRuns(h).at(-1)).toBe(`${ran([0, 1])} (pass)`)

    // Broken: caught by those two, rolled back.
    const broken = await h.exec('edit_file', { path: 'src/util.ts', old_string: 'part => part !== \'\'', new_string: 'part => part !== \'a\'' })
    expect(broken.isError).toBe(true)
    expect(broken.content.split('\n')).toEqual([
      'rolled back: test failed after edit_file on src/util.ts',
      "tests/t00.test.ts:3 FAIL splits 00 — AssertionError: expected [ 'b' ] to deeply equal [ 'a', 'b' ]",
      "tests/t01.test.ts:3 FAIL splits 01 — AssertionError: expected [ 'b' ] to deeply equal [ 'a', 'b' ]",
    ])
    expect(testRuns(h).slice(2)).toEqual([
      `${ran([0, 1])} (fail)`,
      // The failures alone, file by file (their accepted result is the baseline's, still current), until one
      // repeats: that decides the rollback, t01's is not re-run.
      'vitest run tests/t00.test.ts -t ^(splits 00)$ (warm) (fail)',
    ])

    // A top-level change: the test files that import the module (its import closure), and the notice says why.
    const topLevel = await h.exec('edit_file', { path: 'src/label.ts', old_string: 'export function depth', new_string: 'export const SEPARATOR = \'/\'\n\nexport function depth' })
    expect(topLevel).toEqual({ content: 'edited src/label.ts' })
    expect(testRuns(h).at(-1)).toBe('vitest related src/label.ts --run (warm) (pass)')
    expect(h.notices.map(n => n.text)).toContain('tests: related test files by imports (src/label.ts: code outside function bodies changed)')

    // Behind the guard's back, label starts running splitPath: the entries of t37–t39 are stale (label.ts is
    // not what they ran on), so a body edit of splitPath runs them too — and the break they catch rolls it back.
    writeFileSync(join(root, 'src/label.ts'), label.replace('return shout(name)', "return '/' + shout(splitPath(name).join('/'))"))
    const staleBreak = await h.exec('edit_file', { path: 'src/util.ts', old_string: 'part => part !== \'\'', new_string: 'part => part !== \'x\'' })
    expect(staleBreak.content.split('\n')[0]).toBe('rolled back: test failed after edit_file on src/util.ts')
    expect(staleBreak.content.split('\n').slice(1)).toEqual([37, 38, 39].map(i => `tests/t${i}.test.ts:4 FAIL labels ${i} — AssertionError: expected '/' to be '/X' // Object.is equality`))
    const stale = h.notices.map(n => n.text).filter(t => t.startsWith('tests: ')).at(-1)
    expect(stale).toBe('tests: 5 of 40 related test files: those that ran `splitPath`, and 3 whose map is stale')

    // The rollback put back the entries as they were before it (recorded on the label.ts that is gone): still
    // stale, so the next body edit runs t37–t39 again; kept, that run re-records them, and the one after finds
    // them among those that ran splitPath.
    const again = await h.exec('edit_file', { path: 'src/util.ts', old_string: 'part => part !== \'\'', new_string: 'part => part.length !== 0' })
    expect(again).toEqual({ content: 'edited src/util.ts\ntests: 5 of 40 related test files: those that ran `splitPath`, and 3 whose map is stale' })
    const mapped = await h.exec('edit_file', { path: 'src/util.ts', old_string: 'part => part.length !== 0', new_string: 'part => part.length >= 1' })
    expect(mapped).toEqual({ content: 'edited src/util.ts\ntests: 5 of 40 related test files: those that ran `splitPath`' })
    expect(JSON.parse(readFileSync(mapFile, 'utf8')).tests['tests/t37.test.ts']['src/util.ts'].ran).toContain('splitPath')

    // Comments and whitespace only: no test runs — not even a related test file the map has no entry for (t40, written
    // behind the guard's back), nor the changed test file itself.
    writeFileSync(join(root, 'tests/t40.test.ts'), "import { expect, it } from 'vitest'\nimport { shout } from '../src/util.ts'\nit('shouts 40', () => { expect(shout('x')).toBe('X') })\n")
    const before = testRuns(h).length
    expect(await h.exec('edit_file', { path: 'src/util.ts', old_string: 'export function shout', new_string: '/** Upper case. */\nexport function shout' }))
      .toEqual({ content: 'edited src/util.ts\ntests: none run: only comments and whitespace changed in src/util.ts' })
    expect(await h.exec('edit_file', { path: 'tests/t05.test.ts', old_string: "it('shouts 05'", new_string: "// Upper case.\n  it('shouts 05'" }))
      .toEqual({ content: 'edited tests/t05.test.ts\ntests: none run: only comments and whitespace changed in tests/t05.test.ts' })
    expect(testRuns(h).length).toBe(before)
    expect(readText(root, 'src/util.ts')).toContain('/** Upper case. */')
    // A directive comment is code: \`@ts-expect-error\` on a line with no error fails the type-check.
    const directive = await h.exec('edit_file', { path: 'src/util.ts', old_string: '/** Upper case. */\n', new_string: '/** Upper case. */\n// @ts-expect-error\n' })
    expect(directive.content.split('\n')[0]).toBe('rolled back: typecheck failed after edit_file on src/util.ts')
  }, 480_000)

  it('a test file two vitest projects run down different paths is mapped with what both runs executed', async () => {
    const root = makeWorkspace('', {
      'package.json': '{ "name": "map-projects", "private": true, "type": "module" }\n',
      'tsconfig.json': JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'ESNext', moduleResolution: 'bundler', allowImportingTsExtensions: true, strict: true, noEmit: true, skipLibCheck: true, types: [] }, include: ['src', 'tests'] }),
      // One test file in two projects, each with its own SIDE: project a runs viaA, project b viaB.
      'vitest.config.ts': [
        "import { defineConfig } from 'vitest/config'",
        'export default defineConfig({ test: { projects: [',
        "  { test: { name: 'a', include: ['tests/**/*.test.ts'], env: { SIDE: 'a' } } },",
        "  { test: { name: 'b', include: ['tests/**/*.test.ts'], env: { SIDE: 'b' } } },",
        '] } })',
        '',
      ].join('\n'),
      'src/side.ts': [
        "const env = (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env ?? {}",
        "export function viaA(): string { return 'a' }",
        "export function viaB(): string { return 'b' }",
        "export function side(): string { return env.SIDE === 'b' ? viaB() : viaA() }",
        '',
      ].join('\n'),
      'tests/side.test.ts': "import { expect, it } from 'vitest'\nimport { side } from '../src/side.ts'\nit('takes its project side', () => { expect(side()).toMatch(/^[ab]$/) })\n",
    })
    const h = await boot(root, { testSelection: 'functions' })
    h.ctx.dstvalid.guardFor(root, h.session.vault)
    await h.ready()
    const entry = JSON.parse(readFileSync(join(h.session.vault, 'test-map', 'vitest.json'), 'utf8')).tests['tests/side.test.ts']
    expect(entry['src/side.ts'].ran).toEqual(expect.arrayContaining(['side', 'viaA', 'viaB']))
    // Either function broken: the test file runs (in both projects) and catches it — whichever project's run wrote last.
    for (const fn of ['viaA', 'viaB']) {
      const broken = await h.exec('edit_file', { path: 'src/side.ts', old_string: `export function ${fn}(): string { return '${fn.at(-1)!.toLowerCase()}' }`, new_string: `export function ${fn}(): string { return 'c' }` })
      expect(broken.content.split('\n')[0]).toBe('rolled back: test failed after edit_file on src/side.ts')
    }
  }, 240_000)

  it('under isolate: false, a function a module ran when it was imported is in the map of every test file that uses the module, not only the first one', async () => {
    const root = makeWorkspace('', {
      'package.json': '{ "name": "map-shared", "private": true, "type": "module" }\n',
      'tsconfig.json': JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'ESNext', moduleResolution: 'bundler', allowImportingTsExtensions: true, strict: true, noEmit: true, skipLibCheck: true, types: [] }, include: ['src', 'tests'] }),
      // One worker runs every test file, sharing its modules: src/table.ts is evaluated once, by whichever file imports it first.
      'vitest.config.ts': "import { defineConfig } from 'vitest/config'\nexport default defineConfig({ test: { isolate: false, fileParallelism: false } })\n",
      'src/util.ts': "export function build(): string[] {\n  return ['a', 'b']\n}\n\nexport function shout(text: string): string {\n  return text.toUpperCase()\n}\n",
      // build runs at import time only.
      'src/table.ts': "import { build } from './util.ts'\n\nexport const TABLE = build()\n",
      ...Object.fromEntries(Array.from({ length: 8 }, (_, i) => {
        const n = String(i).padStart(2, '0')
        const body = i >= 6
          ? `import { TABLE } from '../src/table.ts'\n\nit('tables ${n}', () => { expect(TABLE).toEqual(['a', 'b']) })\n`
          : `import { shout } from '../src/util.ts'\nit('shouts ${n}', () => { expect(shout('a')).toBe('A') })\n`
        return [`tests/t${n}.test.ts`, `import { expect, it } from 'vitest'\n${body}`]
      })),
    })
    const h = await boot(root, { testSelection: 'functions' })
    h.ctx.dstvalid.guardFor(root, h.session.vault)
    await h.ready()
    const tests = JSON.parse(readFileSync(join(h.session.vault, 'test-map', 'vitest.json'), 'utf8')).tests
    // Both table tests ran build: the first to import src/table.ts in its own run, the other through what ran when it was imported.
    // (The shout tests run first here and evaluate src/util.ts alone: had it been evaluated with src/table.ts, by a table test, what
    // ran then — build — would be in the entry of every test file that uses src/util.ts.)
    for (const t of ['tests/t06.test.ts', 'tests/t07.test.ts']) expect(tests[t]['src/util.ts'].ran).toContain('build')
    for (const t of ['tests/t00.test.ts', 'tests/t05.test.ts']) expect(tests[t]['src/util.ts'].ran).not.toContain('build')
    const note = 'tests: 2 of 8 related test files: those that ran `build`'
    expect(await h.exec('edit_file', { path: 'src/util.ts', old_string: "return ['a', 'b']", new_string: "return ['a', 'b'].slice()" })).toEqual({ content: `edited src/util.ts\n${note}` })
    expect(testRuns(h).at(-1)).toBe(`${ran([6, 7])} (pass)`)
    // Broken: both table tests catch it, whichever of them evaluates src/table.ts in this run.
    const broken = await h.exec('edit_file', { path: 'src/util.ts', old_string: "return ['a', 'b'].slice()", new_string: "return ['a']" })
    expect(broken.content.split('\n').slice(0, 3)).toEqual([
      'rolled back: test failed after edit_file on src/util.ts',
      "tests/t06.test.ts:4 FAIL tables 06 — AssertionError: expected [ 'a' ] to deeply equal [ 'a', 'b' ]",
      "tests/t07.test.ts:4 FAIL tables 07 — AssertionError: expected [ 'a' ] to deeply equal [ 'a', 'b' ]",
    ])
    expect(h.notices.map(n => n.text).filter(t => t.startsWith('tests: ')).at(-1)).toBe(note)
  }, 240_000)

  it('a run past its time limit is cancelled, not killed: the test files that finished keep their map entries', async () => {
    const limit = 6_000
    const root = makeWorkspace('', {
      'package.json': '{ "name": "map-timeout", "private": true, "type": "module" }\n',
      // One file at a time, in the order of their names.
      'vitest.config.ts': [
        "import { defineConfig } from 'vitest/config'",
        "import { BaseSequencer, type TestSpecification } from 'vitest/node'",
        'class ByName extends BaseSequencer {',
        '  override async sort(files: TestSpecification[]) { return [...files].sort((a, b) => a.moduleId.localeCompare(b.moduleId)) }',
        '}',
        'export default defineConfig({ test: { fileParallelism: false, sequence: { sequencer: ByName } } })',
        '',
      ].join('\n'),
      'src/util.ts': "export function shout(text: string): string {\n  return text.toUpperCase()\n}\n",
      'tests/a.test.ts': "import { expect, it } from 'vitest'\nimport { shout } from '../src/util.ts'\nit('shouts', () => { expect(shout('a')).toBe('A') })\n",
      // Once \`slow\` exists, runs past the limit, then ends (a cancelled run lets the running tests finish).
      'tests/b.test.ts': [
        '/// <reference types="node" />',
        "import { existsSync } from 'node:fs'",
        "import { expect, it } from 'vitest'",
        "import { shout } from '../src/util.ts'",
        `it('shouts late', async () => { if (existsSync(new URL('../slow', import.meta.url))) await new Promise(r => setTimeout(r, ${limit + 3_000})); expect(shout('b')).toBe('B') }, 60_000)`,
        '',
      ].join('\n'),
    })
    const map = new TestMap()
    const cli = new VitestCheck({ root, command: vitestCommand(root)!, mode: 'related' })
    const check = new WarmVitestCheck({ root, vitestNode: resolveFromWorkspace(root, 'vitest/node')!, mode: 'related', cli, maxRssMb: 0, testMap: map })
    const io = (timeoutMs: number): CheckIO => ({ record: () => {}, notice: () => {}, timeoutMs, maxOutputBytes: 1 << 20 })
    try {
      // Started and warm (no limit that matters): both files mapped.
      expect((await check.measure(undefined, io(600_000))).status).toBe('ok')
      expect(map.size).toBe(2)
      const pid = check.pid
      // Forget both entries (a module they loaded changed behind the runner's back), then a whole run past its limit.
      writeFileSync(join(root, 'src/util.ts'), readText(root, 'src/util.ts').replace('toUpperCase()', 'toUpperCase() // again'))
      map.record({}, ['tests/a.test.ts', 'tests/b.test.ts'], () => undefined)
      expect(map.size).toBe(0)
      writeFileSync(join(root, 'slow'), '')
      const late = await check.measure(undefined, io(limit))
      expect(late).toMatchObject({ status: 'timeout', error: `vitest timed out after ${limit / 1000} s (run cancelled)` })
      // a.test.ts finished before the cancel: mapped; b.test.ts ended after it: not.
      expect(map.select(['tests/a.test.ts', 'tests/b.test.ts'], new Map([['src/util.ts', ['other']]]), () => undefined, () => undefined).unmapped).toEqual(['tests/b.test.ts'])
      expect(check.starts).toBe(1)
      expect(check.pid).toBe(pid)
    } finally {
      await check.dispose()
    }
  }, 240_000)

  it('a test file that reads a changed module as text runs for a comment and for a body edit of a function it never ran', async () => {
    const root = readingWorkspace()
    const h = await boot(root, { testSelection: 'functions' })
    h.ctx.dstvalid.guardFor(root, h.session.vault)
    await h.ready()
    const fixme = 'rolled back: test failed after edit_file on src/util.ts'
    // A comment: not "comments only" for a test file that reads the module's text.
    const comment = await h.exec('edit_file', { path: 'src/util.ts', old_string: 'export function shout', new_string: '// FIXME: shout less\nexport function shout' })
    expect(comment.content.split('\n').slice(0, 2)).toEqual([fixme, expect.stringMatching(/^tests\/reads\.test\.ts:6 FAIL leaves no FIXME in util\.ts — AssertionError: /)])
    expect(h.notices.map(n => n.text).filter(t => t.startsWith('tests: ')).at(-1)).toBe('tests: 1 of 3 related test files: no function changed, and 1 that reads a changed file')
    // A body edit of splitPath, which the reading test file never ran.
    const body = await h.exec('edit_file', { path: 'src/util.ts', old_string: 'part => part.length > 0', new_string: "part => part.length > 0 && part !== 'FIXME'" })
    expect(body.content.split('\n').slice(0, 2)).toEqual([fixme, expect.stringMatching(/^tests\/reads\.test\.ts:6 FAIL leaves no FIXME in util\.ts — AssertionError: /)])
    expect(h.notices.map(n => n.text).filter(t => t.startsWith('tests: ')).at(-1)).toBe('tests: 2 of 3 related test files: those that ran `splitPath`, and 1 that reads a changed file')
  }, 240_000)

  it('a comment keeps the map current: the body edit after it runs only the test files that ran the function', async () => {
    const root = makeWorkspace('', files(6, 3))
    const h = await boot(root, { testSelection: 'functions' })
    h.ctx.dstvalid.guardFor(root, h.session.vault)
    await h.ready()
    const comment = await h.exec('edit_file', { path: 'src/util.ts', old_string: 'export function shout', new_string: '// Upper case.\nexport function shout' })
    expect(comment).toEqual({ content: 'edited src/util.ts\ntests: none run: only comments and whitespace changed in src/util.ts' })
    // Not "6 of 6 … whose map is stale": every entry ran the same on the commented content.
    const body = await h.exec('edit_file', { path: 'src/util.ts', old_string: 'part => part.length > 0', new_string: "part => part !== ''" })
    expect(body).toEqual({ content: 'edited src/util.ts\ntests: 2 of 6 related test files: those that ran `splitPath`' })
    expect(testRuns(h).at(-1)).toBe(`${ran([0, 1])} (pass)`)
  }, 240_000)

  it('a comment as the first write, nothing mapped yet: only the test file that may read the module as text runs', async () => {
    const root = readingWorkspace()
    // Using `globalThis` is not using the file system (hono: 25 test files taken for readers by `\bglob`).
    appendFileSync(join(root, 'tests/t00.test.ts'), "it('has a global object', () => { expect(typeof globalThis.structuredClone).toBe('function') })\n")
    // No ready(): no whole-suite run has recorded the map.
    const h = await boot(root, { testSelection: 'functions' })
    expect(existsSync(join(h.session.vault, 'test-map', 'vitest.json'))).toBe(false)
    const comment = await h.exec('edit_file', { path: 'src/util.ts', old_string: 'export function shout', new_string: '// Upper case.\nexport function shout' })
    expect(comment).toEqual({ content: 'edited src/util.ts\ntests: 1 of 3 related test files: no function changed, and 1 that reads a changed file' })
    expect(testRuns(h)).toEqual(['vitest run tests/reads.test.ts (warm) (pass)'])
  }, 240_000)

  it('a call added in the same step (in another source, in a test file) runs the tests that start executing the function', async () => {
    const root = makeWorkspace('', files(10, 5))
    const script = [
      // splitPath keeps a leading empty part (t00/t01 do not see it) while label starts calling it: only the
      // label tests, which never ran splitPath before, catch it.
      line({ text: 'Two writes in one step.', toolCalls: [
        { id: 'w1', name: 'edit_file', arguments: { path: 'src/util.ts', old_string: 'part => part.length > 0', new_string: 'part => part === part' } },
        { id: 'w2', name: 'edit_file', arguments: { path: 'src/label.ts', old_string: 'return shout(name)', new_string: "return shout(name) + (splitPath(name).length === 1 ? '' : '?')" } },
      ] }),
      // shout merges double slashes while a test file that never ran shout starts calling it.
      line({ text: 'A test file starts calling shout.', toolCalls: [
        { id: 'w3', name: 'edit_file', arguments: { path: 'src/util.ts', old_string: 'return text.toUpperCase()', new_string: "return text.toUpperCase().replace('//', '/')" } },
        { id: 'w4', name: 'edit_file', arguments: { path: 'tests/t00.test.ts', old_string: "import { splitPath } from '../src/util.ts'\n", new_string: "import { shout, splitPath } from '../src/util.ts'\nit('shouts a double slash', () => { expect(shout('a//b')).toBe('A//B') })\n" } },
      ] }),
      line({ text: 'Done.' }),
    ].join('\n')
    const h = await boot(root, { per: 'step', testSelection: 'functions' }, { script })
    h.ctx.dstvalid.guardFor(root, h.session.vault)
    await h.ready()
    const agent = h.ctx.agents.create(h.session)
    expect(await agent.send('go')).toBe('completed')
    const results = Object.fromEntries(h.session.ofType('tool/result').map(e => [e.data.callId, e.data]))
    const first = String(results.w2!.content).split('\n')
    expect(first[0]).toBe('rolled back: test failed after edit_file on src/util.ts, src/label.ts')
    expect(first).toContain("tests/t05.test.ts:4 FAIL labels 05 — AssertionError: expected '/X?' to be '/X' // Object.is equality")
    const notes = h.notices.map(n => n.text).filter(t => t.startsWith('tests: '))
    expect(notes[0]).toBe('tests: 7 of 10 related test files: those that ran `splitPath`, `label`')
    // The rollback was byte for byte: the entries re-recorded on the rolled-back content are put back, so
    // the next step finds them current. Its test file runs (it changed); its new test fails: a warning.
    expect(String(results.w4!.content).split('\n')).toEqual([
      'edited tests/t00.test.ts',
      'warning: kept, but test has new problems in tests (test-first work? make them pass):',
      "tests/t00.test.ts:3 FAIL shouts a double slash — AssertionError: expected 'A/B' to be 'A//B' // Object.is equality",
      'tests: 9 of 10 related test files: those that ran `shout`, and 1 changed test file',
    ])
  }, 480_000)
})
