/**
 * A write that changes only comments and whitespace in TypeScript sources
 * cannot change what the type-check reports: it is not type-checked (the
 * style checks still run). A directive comment is code, and a JavaScript
 * file under `checkJs` (whose JSDoc comments are types) is always checked.
 * Real TypeScript and Prettier, through the guard.
 */
import { describe, expect, it } from 'vitest'
import { boot, expectRolledBack, makeWorkspace, readText, runs, STOPPED } from '../../helpers.ts'

const files = {
  'tsconfig.json': JSON.stringify({
    compilerOptions: { target: 'ES2022', lib: ['ES2022'], module: 'ESNext', moduleResolution: 'bundler', allowImportingTsExtensions: true, allowJs: true, checkJs: true, strict: true, noEmit: true, skipLibCheck: true, types: [] },
    include: ['src'],
  }),
  '.prettierrc': '{ "semi": false, "singleQuote": true, "printWidth": 120 }\n',
  '.prettierignore': 'tests\n',
  'src/calc.js': '/** @param {number} n */\nexport function double(n) {\n  return n * 2\n}\n',
}

describe('a comment-only write is not type-checked', { timeout: 300_000 }, () => {
  it('kept without a type-check, style still judged; a directive comment and a JavaScript comment are checked; later verdicts stay right', async () => {
    const root = makeWorkspace('shop', files, { nodeModules: 'package' })
    const h = await boot(root, { tests: 'off', style: 'warn', styleTools: ['prettier'] })
    const typechecks = () => runs(h.session).filter(r => r.check === 'typecheck').length

    // A comment, with trailing blanks Prettier would remove: no type-check, the style warning still comes.
    const comment = await h.exec('edit_file', { path: 'src/money.ts', old_string: 'export function add(', new_string: '// Adds two amounts.   \nexport function add(' })
    expect(comment).toEqual({ content: ['edited src/money.ts', 'warning: kept, but style has 1 new problem (not rolled back; fix it):', 'src/money.ts prettier not formatted (prettier --write fixes it)'].join('\n') })
    expect(typechecks()).toBe(1)
    expect(h.notices.map(n => n.text)).toContain('typecheck: not run: only comments and whitespace changed in src/money.ts')
    expect(h.results.map(r => [r.check, r.outcome])).toEqual([['typecheck', 'pass'], ['style', 'pass']])

    // A directive comment is code: an unused @ts-expect-error is type-checked, and rolled back.
    await expectRolledBack(h, 'edit_file', { path: 'src/money.ts', old_string: '  return a + b', new_string: '  // @ts-expect-error\n  return a + b' },
      'rolled back: typecheck failed after edit_file on src/money.ts',
      "src/money.ts:6 TS2578 Unused '@ts-expect-error' directive.",
      STOPPED)
    expect(typechecks()).toBe(2)

    // In JavaScript under checkJs a comment may be a type: checked, even for a plain one.
    expect(await h.exec('edit_file', { path: 'src/calc.js', old_string: 'export function double', new_string: '// Twice n.\nexport function double' })).toEqual({ content: 'edited src/calc.js' })
    expect(typechecks()).toBe(3)

    // The accepted state is still right after the unchecked write: a real break is caught, at its line now.
    await expectRolledBack(h, 'edit_file', { path: 'src/money.ts', old_string: 'return a + b', new_string: "return a + 'b'" },
      'rolled back: typecheck failed after edit_file on src/money.ts',
      "src/money.ts:6 TS2322 Type 'string' is not assignable to type 'number'.",
      STOPPED)
    expect(readText(root, 'src/money.ts')).toContain('// Adds two amounts.')
  })
})
