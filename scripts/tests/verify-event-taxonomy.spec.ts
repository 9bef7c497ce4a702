import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { declarationProblems, declarationsInSource, scanEventDeclarations } from '../lib/events.ts'
import { compareTaxonomy, parseTaxonomy, verifyEventTaxonomy } from '../lib/taxonomy.ts'
import { main } from '../verify-event-taxonomy.ts'
import { captureMain, fixture, runScript } from './helpers.ts'

const root = fixture('taxonomy')

describe('event declarations in source', () => {
  it('finds Cordis Events members with their @mode, and SessionEventMap members as log events', () => {
    const found = scanEventDeclarations(root).map(d => `${d.kind} ${d.name} ${d.mode} ${d.file}:${d.line}`)
    expect(found).toEqual([
      'cordis session/created emit packages/dsh-session/src/index.ts:9',
      'cordis session/flush parallel packages/dsh-session/src/index.ts:11',
      'log user/message log packages/dsh-session/src/types.ts:4',
      'log turn/start log packages/dsh-session/src/types.ts:5',
      'log usage log packages/dsh-session/src/types.ts:6',
      'cordis fx/ping parallel packages/fx-plugin/src/index.ts:6',
      'cordis fx/filter waterfall packages/fx-plugin/src/index.ts:11',
      'log fx/logged log packages/fx-plugin/src/index.ts:18',
      'cordis fx/nested serial packages/fx-plugin/src/internal/more.ts:4',
    ])
  })

  it('ignores an Events interface outside the Cordis module and a SessionEventMap outside the log package', () => {
    const source = readFileSync(fixture('taxonomy', 'packages/fx-plugin/src/index.ts'), 'utf8')
    const names = declarationsInSource('x.ts', source, 'fx-plugin').map(d => d.name)
    expect(names).not.toContain('fx/not-an-event')
    expect(names).not.toContain('other/event')
    expect(names).not.toContain('fx/in-a-string')
    const topLevelMap = 'export interface SessionEventMap { "a/b": {} }'
    expect(declarationsInSource('y.ts', topLevelMap, 'not-the-log-package')).toEqual([])
    expect(declarationsInSource('y.ts', topLevelMap, 'dsh-session').map(d => d.name)).toEqual(['a/b'])
  })

  it('reports a missing or unknown @mode, and two declarations that disagree', () => {
    const source = [
      "declare module '@deepseek-ai/cordis' {",
      '  interface Events {',
      '    /** No mode here. */',
      "    'a/none'(): void",
      '    /** @mode broadcast */',
      "    'a/odd'(): void",
      '    /** @mode emit */',
      "    'a/twice'(): void",
      '  }',
      '}',
      "declare module '@deepseek-ai/cordis' {",
      '  interface Events {',
      '    /** @mode parallel */',
      "    'a/twice'(): Promise<void>",
      '  }',
      '}',
    ].join('\n')
    expect(declarationProblems(declarationsInSource('s.ts', source, 'p'))).toEqual([
      's.ts:4: `a/none` has no @mode tag (add "@mode emit|parallel|serial|waterfall|bail" to its JSDoc)',
      's.ts:6: `a/odd` has unknown @mode "broadcast" (expected one of emit, parallel, serial, waterfall, bail)',
      's.ts:14: `a/twice` is declared as parallel here but as emit at s.ts:8',
    ])
  })
})

describe('the taxonomy table', () => {
  it('agrees with the source: several tables, several names per cell, backticked modes', () => {
    const report = verifyEventTaxonomy({ root })
    expect(report.lines).toEqual([
      'event taxonomy: 9 rows in docs/architecture.md, 9 events declared in packages/*/src',
      'event taxonomy: ok',
    ])
    expect(report.ok).toBe(true)
  })

  it('reports a missing event, a stale event and a mode mismatch', () => {
    const report = verifyEventTaxonomy({ root, doc: 'docs/drift.md' })
    expect(report.lines).toEqual([
      'event taxonomy: 9 rows in docs/drift.md, 9 events declared in packages/*/src',
      'missing from docs/drift.md (declared in source):',
      '  `fx/filter` (waterfall) declared at packages/fx-plugin/src/index.ts:11',
      'stale in docs/drift.md (declared nowhere in source):',
      '  `fx/removed` (emit) at docs/drift.md:9',
      'mode mismatches:',
      '  `fx/ping`: docs/drift.md:7 says emit, packages/fx-plugin/src/index.ts:6 says parallel',
      'event taxonomy: FAILED',
    ])
    expect(report.ok).toBe(false)
  })

  it('reports a row listed twice, a row without a backticked name, and a document without the table', () => {
    const table = parseTaxonomy([
      '| event | mode | emitted by | purpose |',
      '|---|---|---|---|',
      '| `a/b` | emit | x | y |',
      '| a/c | emit | x | y |',
      '| `a/b` | emit | x | y |',
    ].join('\n'), 'doc.md')
    expect(table.problems).toEqual([
      'doc.md:4: row has no event name in backticks',
      'doc.md:5: `a/b` is listed twice (first at line 3)',
    ])
    const none = verifyEventTaxonomy({ root, doc: 'packages/fx-plugin/package.json' })
    expect(none.problems).toContain('packages/fx-plugin/package.json: no table with header "| event | mode | emitted by | purpose |"')
    expect(none.ok).toBe(false)
    expect(verifyEventTaxonomy({ root, doc: 'docs/nowhere.md' }).problems).toContain('docs/nowhere.md: not found')
  })

  it('compares names and modes only where both sides have them', () => {
    const diff = compareTaxonomy(
      [{ name: 'a/x', kind: 'cordis', mode: undefined, file: 'f.ts', line: 1, packageName: 'p', doc: '' }],
      [{ name: 'a/x', mode: 'emit', line: 3 }],
    )
    expect(diff).toEqual({ missing: [], stale: [], modeMismatches: [] })
  })
})

describe('scripts/verify-event-taxonomy.ts', () => {
  it('exits 1 on drift, printing what is missing and what is stale, and 0 when the table agrees', async () => {
    const drift = await runScript('verify-event-taxonomy', ['--root', root, '--doc', 'docs/drift.md'])
    expect(drift.exitCode).toBe(1)
    expect(drift.stdout).toContain('missing from docs/drift.md (declared in source):\n  `fx/filter`')
    expect(drift.stdout).toContain('stale in docs/drift.md (declared nowhere in source):\n  `fx/removed`')
    const clean = await captureMain(main, ['--root', root])
    expect(clean.exitCode).toBe(0)
  })
})
