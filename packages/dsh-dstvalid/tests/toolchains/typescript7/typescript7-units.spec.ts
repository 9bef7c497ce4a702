import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { flattenMessage } from '../../../src/toolchains/typescript7/api.ts'
import { parseJsonc, projectGraph } from '../../../src/toolchains/typescript7/projects.ts'
import { parseTscOutput } from '../../../src/toolchains/typescript7/build.ts'
import { resolveSpecifier, scanImports } from '../../../src/toolchains/js/imports.ts'
import { tempDir } from 'dsh-testkit'

const root = tempDir('dsh-ts7-units-')

describe('TypeScript 7 helpers', () => {
  it('scans static specifiers, marking type-only ones, and ignores commented-out imports', () => {
    const text = [
      "import { a } from './a.js'",
      "import type { B } from './b'",
      "import { type C, type D } from './cd'",
      "export { e } from './e'",
      "export type { F } from './f'",
      "import './side.css'",
      "const lazy = () => import('./lazy')",
      "// import { gone } from './gone'",
      "/* import { gone2 } from './gone2' */",
      "const s = '// not a comment'",
    ].join('\n')
    expect(scanImports(text)).toEqual([
      { specifier: './a.js', typeOnly: false },
      { specifier: './b', typeOnly: true },
      { specifier: './cd', typeOnly: true },
      { specifier: './e', typeOnly: false },
      { specifier: './f', typeOnly: true },
      { specifier: './side.css', typeOnly: false },
      { specifier: './lazy', typeOnly: false },
    ])
  })

  it('resolves relative specifiers to program sources (.js → .ts, directory → index) and `paths` patterns', () => {
    const files = new Set(['/w/src/a.ts', '/w/src/App.tsx', '/w/src/lib/index.ts', '/w/src/util/x.ts'])
    expect(resolveSpecifier('./a.js', '/w/src/main.ts', files)).toBe('/w/src/a.ts')
    expect(resolveSpecifier('./App.tsx', '/w/src/main.ts', files)).toBe('/w/src/App.tsx')
    expect(resolveSpecifier('./App', '/w/src/main.ts', files)).toBe('/w/src/App.tsx')
    expect(resolveSpecifier('./lib', '/w/src/main.ts', files)).toBe('/w/src/lib/index.ts')
    expect(resolveSpecifier('react', '/w/src/main.ts', files)).toBeUndefined()
    expect(resolveSpecifier('@/util/x', '/w/src/main.ts', files, [{ pattern: '@/*', substitutions: ['/w/src/*'] }])).toBe('/w/src/util/x.ts')
  })

  it('reads tsconfig JSONC and follows references in build order', () => {
    mkdirSync(join(root, 'a'), { recursive: true })
    mkdirSync(join(root, 'b'), { recursive: true })
    writeFileSync(join(root, 'tsconfig.json'), '{\n  // solution\n  "files": [],\n  "references": [{ "path": "./b" }, { "path": "./a/tsconfig.json" },],\n}\n')
    writeFileSync(join(root, 'a', 'tsconfig.json'), '{ "compilerOptions": { "composite": true /* lib */ } }')
    writeFileSync(join(root, 'b', 'tsconfig.json'), '{ "references": [{ "path": "../a" }] }')
    expect(parseJsonc('{ "a": "//x", /* c */ "b": [1,], }')).toEqual({ a: '//x', b: [1] })
    expect(projectGraph(join(root, 'tsconfig.json'))).toEqual([join(root, 'a', 'tsconfig.json'), join(root, 'b', 'tsconfig.json'), join(root, 'tsconfig.json')])
  })

  it('parses `tsc --pretty false` output with chained lines, and flattens API message chains the same way', () => {
    const out = [
      "src/a.ts(3,7): error TS2322: Type '{ x: number; }' is not assignable to type 'P'.",
      "  Property 'y' is missing in type '{ x: number; }' but required in type 'P'.",
      "error TS2688: Cannot find type definition file for 'node'.",
      '',
    ].join('\n')
    expect(parseTscOutput(out, '/w')).toEqual([
      { file: 'src/a.ts', line: 3, code: 2322, category: 'error', message: "Type '{ x: number; }' is not assignable to type 'P'.\n  Property 'y' is missing in type '{ x: number; }' but required in type 'P'." },
      { file: '', code: 2688, category: 'error', message: "Cannot find type definition file for 'node'." },
    ])
    expect(flattenMessage({ text: "Type '{ x: number; }' is not assignable to type 'P'.", messageChain: [{ text: "Property 'y' is missing in type '{ x: number; }' but required in type 'P'." }] }))
      .toBe("Type '{ x: number; }' is not assignable to type 'P'.\n  Property 'y' is missing in type '{ x: number; }' but required in type 'P'.")
  })
})
