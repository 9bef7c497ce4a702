import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import {
  buildImportGraph, diffEntryStates, formatReport, locateError, removedIds, resolveImport, scanImports, scopeOf, staleFiles, type EntryState,
} from 'dsh-cli/dev'
import { tempDir } from 'dsh-testkit'

function files(tree: Record<string, string>): string {
  const dir = tempDir('dsh-graph-')
  for (const [path, text] of Object.entries(tree)) {
    mkdirSync(join(dir, path, '..'), { recursive: true })
    writeFileSync(join(dir, path), text)
  }
  return dir
}

describe('dsh dev: import graph', () => {
  it('scans static, side-effect, re-export, multi-line and literal dynamic imports', () => {
    const source = `import { a } from './a.ts'
import type { T } from "./types.ts"
import './side.ts'
export * from './re.ts'
export { b } from './b.ts'
import {
  c,
  d,
} from './cd.ts'
const lazy = await import('./lazy.ts')
const notAnImport = 'from the start'
`
    expect(scanImports(source)).toEqual(['./a.ts', './types.ts', './side.ts', './re.ts', './b.ts', './cd.ts', './lazy.ts'])
  })

  it('resolves .ts paths, .js written for .ts, extensionless and index files; not builtins', () => {
    const dir = files({ 'src/a.ts': '', 'src/b.ts': '', 'src/dir/index.ts': '', 'src/c.mts': '' })
    const from = join(dir, 'src/main.ts')
    expect(resolveImport('./a.ts', from)).toBe(join(dir, 'src/a.ts'))
    expect(resolveImport('./b.js', from)).toBe(join(dir, 'src/b.ts'))
    expect(resolveImport('./a', from)).toBe(join(dir, 'src/a.ts'))
    expect(resolveImport('./dir', from)).toBe(join(dir, 'src/dir/index.ts'))
    expect(resolveImport('./c.mjs', from)).toBe(join(dir, 'src/c.mts'))
    expect(resolveImport(pathToFileURL(join(dir, 'src/a.ts')).href, from)).toBe(join(dir, 'src/a.ts'))
    expect(resolveImport('node:fs', from)).toBeUndefined()
    expect(resolveImport('./missing.ts', from)).toBeUndefined()
  })

  it('builds the graph inside the package scope, and a change makes its importers up to the entry stale — nothing else', () => {
    const dir = files({
      'package.json': '{"type":"module"}',
      'src/index.ts': `import { x } from './x.ts'\nimport { y } from './y.ts'\nimport '../../outside.ts'\nimport dep from 'dep'\n`,
      'src/x.ts': `import { leaf } from './leaf.ts'\n`,
      'src/y.ts': `export const y = 1\n`,
      'src/leaf.ts': `export const leaf = 1\n`,
      'src/unused.ts': `import './x.ts'\n`,
      'node_modules/dep/package.json': '{"name":"dep","main":"index.js"}',
      'node_modules/dep/index.js': `export default 1\n`,
    })
    const entry = join(dir, 'src/index.ts')
    expect(scopeOf(entry)).toBe(dir)
    const graph = buildImportGraph(entry, dir)
    expect([...graph.files].sort()).toEqual(['src/index.ts', 'src/leaf.ts', 'src/x.ts', 'src/y.ts'].map(f => join(dir, f)))
    expect([...staleFiles(graph, [join(dir, 'src/leaf.ts')])].sort()).toEqual(['src/index.ts', 'src/leaf.ts', 'src/x.ts'].map(f => join(dir, f)))
    expect([...staleFiles(graph, [join(dir, 'src/y.ts')])].sort()).toEqual(['src/index.ts', 'src/y.ts'].map(f => join(dir, f)))
    expect([...staleFiles(graph, [join(dir, 'src/unused.ts')])]).toEqual([])
  })

  it('follows import cycles once, and a package importing itself by name through a symlink', () => {
    const dir = files({
      'pkg/package.json': '{"name":"selfpkg","type":"module","exports":{".":"./src/index.ts","./extra":"./src/extra.ts"}}',
      'pkg/src/index.ts': `import './a.ts'\n`,
      'pkg/src/a.ts': `import './b.ts'\n`,
      'pkg/src/b.ts': `import './a.ts'\nimport 'selfpkg/extra'\n`,
      'pkg/src/extra.ts': ``,
    })
    mkdirSync(join(dir, 'pkg/node_modules'))
    symlinkSync(join(dir, 'pkg'), join(dir, 'pkg/node_modules/selfpkg'), 'dir')
    const graph = buildImportGraph(join(dir, 'pkg/src/index.ts'), join(dir, 'pkg'))
    expect([...graph.files].map(f => f.slice(dir.length + 1)).sort()).toEqual(['pkg/src/a.ts', 'pkg/src/b.ts', 'pkg/src/extra.ts', 'pkg/src/index.ts'])
    expect([...staleFiles(graph, [join(dir, 'pkg/src/extra.ts')])].map(f => f.slice(dir.length + 1)).sort())
      .toEqual(['pkg/src/a.ts', 'pkg/src/b.ts', 'pkg/src/extra.ts', 'pkg/src/index.ts'])
  })
})

describe('dsh dev: error location', () => {
  it('reads file, line and column out of a transform error', () => {
    const error = new Error('Transform failed with 1 error:\n/work/p/plugins/a.ts:7:12: ERROR: Expected ")" but found "}"')
    expect(locateError(error)).toEqual({ message: 'Expected ")" but found "}"', file: '/work/p/plugins/a.ts', line: 7, column: 13 })
  })

  it('takes the first stack frame inside the plugin scope, without the version query and never in node_modules', () => {
    const error = new TypeError('cannot read x')
    error.stack = [
      'TypeError: cannot read x',
      '    at helper (file:///work/node_modules/lib/index.js:3:9)',
      '    at apply (/work/p/plugins/a.ts:12:5)',
      '    at Fiber._reload (/work/node_modules/cordis/lib/index.js:1:1)',
    ].join('\n')
    expect(locateError(error, ['/work/p'])).toEqual({ message: 'TypeError: cannot read x', file: '/work/p/plugins/a.ts', line: 12, column: 5 })
    error.stack = 'TypeError: cannot read x\n    at apply (file:///work/p/plugins/a.ts?dshv=4:12:5)'
    expect(locateError(error, ['/work/p'])).toEqual({ message: 'TypeError: cannot read x', file: '/work/p/plugins/a.ts', line: 12, column: 5 })
    expect(locateError(error, ['/elsewhere'])).toEqual({ message: 'TypeError: cannot read x' })
  })

  it('reads the location Node puts first in the stack of a SyntaxError in plain JavaScript', () => {
    const error = new SyntaxError('Unexpected token \'}\'')
    error.stack = 'file:///work/p/plugins/b.mjs?dshv=2:3\n}\n^\n\nSyntaxError: Unexpected token \'}\'\n    at ModuleLoader.moduleStrategy (node:internal/modules/esm/translators:168:18)'
    expect(locateError(error)).toEqual({ message: 'SyntaxError: Unexpected token \'}\'', file: '/work/p/plugins/b.mjs', line: 3 })
  })
})

describe('dsh dev: cordis.yml differ and report lines', () => {
  const state = (id: string, more: Partial<EntryState> = {}): EntryState => ({ id, name: `./${id}.ts`, disabled: false, config: '{}', ...more })

  it('names added, removed, enabled, disabled, reconfigured and renamed entries', () => {
    const before = [state('a'), state('b'), state('c', { disabled: true }), state('d'), state('e'), state('f')]
    const after = [state('a'), state('c'), state('d', { disabled: true }), state('e', { config: '{"x":1}' }), state('f', { name: './g.ts' }), state('n')]
    expect(diffEntryStates(before, after)).toEqual({
      added: ['n'], removed: ['b'], enabled: ['c'], disabled: ['d'], reconfigured: ['e'], renamed: ['f'],
    })
    expect(diffEntryStates(before, before)).toEqual({ added: [], removed: [], enabled: [], disabled: [], reconfigured: [], renamed: [] })
    expect(removedIds(['a', 'b', 'c'], ['c', 'a'])).toEqual(['b'])
  })

  it('prints what reloaded and how long it took, what failed and what runs now', () => {
    expect(formatReport({
      kind: 'plugins', files: ['/p/plugins/a.ts'], durationMs: 41.6, restarted: ['agents'], errors: [{ message: 'boom', file: '/p/plugins/c.ts', line: 2 }],
      entries: [
        { id: 'a', outcome: 'reloaded' },
        { id: 'b', outcome: 'failed', stage: 'import', running: 'previous', error: { message: 'Unexpected "}"', file: '/p/plugins/a.ts', line: 3, column: 1 } },
      ],
    }, '/p')).toEqual([
      'reloaded a (plugins/a.ts) in 42 ms',
      'reload of b failed: plugins/a.ts:3:1: Unexpected "}" — the previous version keeps running; fix it and save again',
      '  also restarted (they inject a reloaded service): agents',
      '  error: plugins/c.ts:2: boom',
    ])
    expect(formatReport({
      kind: 'config', file: '/p/cordis.yml', durationMs: 7, restarted: [], errors: [], entries: [],
      diff: { added: ['n'], removed: ['b'], enabled: [], disabled: ['d'], reconfigured: ['e'], renamed: [] },
    }, '/p')).toEqual(['cordis.yml: added n; removed b; disabled d; restarted e with new config in 7 ms'])
    expect(formatReport({
      kind: 'config', file: '/p/cordis.yml', durationMs: 1, restarted: [], errors: [], entries: [],
      error: { message: '/p/cordis.yml:4:3: invalid YAML (bad indentation)' },
    }, '/elsewhere')).toEqual(['/p/cordis.yml:4:3: invalid YAML (bad indentation) — not applied, the running plugins are unchanged; fix it and save again'])
  })
})
