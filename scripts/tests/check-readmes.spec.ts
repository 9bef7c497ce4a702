import { readFileSync } from 'node:fs'
import Schema from '@deepseek-ai/schemastery'
import { describe, expect, it } from 'vitest'
import { compareConfigTable, formatConfigTable } from '../lib/config-table.ts'
import { findTables } from '../lib/markdown.ts'
import { loadPackagePlugins } from '../lib/plugins.ts'
import { checkReadmes, checkReadmeText, type ReadmeFacts } from '../lib/readme-shape.ts'
import { regenerate } from '../lib/generated.ts'
import { scanEventDeclarations, uniqueEvents } from '../lib/events.ts'
import { listPackages } from '../lib/workspace.ts'
import { main } from '../check-readmes.ts'
import { captureMain, fixture, runScript } from './helpers.ts'

const root = fixture('readmes')

async function factsFor(name: string): Promise<{ facts: ReadmeFacts; readme: string }> {
  const pkg = listPackages(root).find(p => p.name === name)!
  const declarations = scanEventDeclarations(root)
  const { plugins } = await loadPackagePlugins(pkg)
  return {
    facts: { events: uniqueEvents(declarations), ownEvents: declarations.filter(d => d.file.startsWith(`${pkg.rel}/`)), plugins },
    readme: readFileSync(fixture('readmes', pkg.rel, 'README.md'), 'utf8'),
  }
}

describe('check-readmes on the fixture packages', async () => {
  const report = await checkReadmes({ root })
  const problemsOf = (pkg: string) => report.problems.filter(p => p.file === `packages/${pkg}/README.md`).map(p => `${p.line}: ${p.message}`)

  it('accepts a plugin README of the one shape, with two plugins and two Config tables', () => {
    expect(problemsOf('fx-plugin')).toEqual([])
  })

  it('asks a library for no Events, Config or cordis.yml section', () => {
    expect(problemsOf('fx-lib')).toEqual([])
  })

  it('reports every drifted Config row and Events row', () => {
    expect(problemsOf('fx-drift')).toEqual([
      '16: event `drift/declared` (declared at packages/fx-drift/src/index.ts:7) is missing from the Events table',
      '18: event `drift/mode`: mode is emit here, waterfall at packages/fx-drift/src/index.ts:9',
      '19: event `drift/gone` is declared in no package source',
      '25: Config `added`: missing from the table',
      '27: Config `intervalMs`: default is `1000` here, the schema says `2000`',
      '28: Config `path`: description is "Where the script is." here, the schema says "Where the script lives."',
      '29: Config `retries`: type is `string` here, the schema says `number`',
      '30: Config `mode`: default is see source here, the schema says `"fast"`',
      '31: Config `removed`: no such option in the schema (stale row?)',
      '32: Config `undocumented`: the schema has no .description(); add one',
    ])
  })

  it('reports a README of the wrong shape', () => {
    expect(problemsOf('fx-shape')).toEqual([
      '1: the title should name the package ("# fx-shape")',
      '1: missing section "## Config"',
      '1: missing section "## cordis.yml"',
      '1: no ```yaml cordis.yml entry naming `fx-shape`',
      "1: no ```ts example that imports 'fx-shape' (an ignore-check block does not count)",
      '3: the purpose should be one sentence (found 2)',
      '5: section "## API" should come after "## Provides" (order: Provides, API, Events, Config, cordis.yml, Not here)',
    ])
  })

  it('reports a package without a README, and fails overall', () => {
    expect(problemsOf('fx-noreadme')).toEqual(['1: missing README.md'])
    expect(report.ok).toBe(false)
    expect(report.lines.slice(-2)).toEqual(['check-readmes: 5 package READMEs, 3 with problems', 'check-readmes: FAILED'])
  })
})

describe('a Config row that drifts', () => {
  it('is reported whichever cell of whichever row changes', async () => {
    const { facts, readme } = await factsFor('fx-plugin')
    expect(checkReadmeText('README.md', readme, 'fx-plugin', facts)).toEqual([])
    const lines = readme.split('\n')
    const rows = lines.map((l, i) => [l, i] as const).filter(([l]) => /^\| `[a-zA-Z]+` \|/.test(l))
    expect(rows).toHaveLength(6)
    for (const [line, index] of rows) {
      for (let cell = 1; cell <= 3; cell++) {
        const cells = line.split(' | ')
        cells[cell] = cell === 3 ? 'Something else. |' : 'drifted'
        const mutated = [...lines.slice(0, index), cells.join(' | '), ...lines.slice(index + 1)].join('\n')
        const problems = checkReadmeText('README.md', mutated, 'fx-plugin', facts)
        expect(problems.map(p => p.line), `${line} cell ${cell}`).toEqual([index + 1])
      }
    }
  })

  it('is reported when a row is deleted', async () => {
    const { facts, readme } = await factsFor('fx-plugin')
    const mutated = readme.replace(/^\| `globs` .*\n/m, '')
    expect(checkReadmeText('README.md', mutated, 'fx-plugin', facts).map(p => p.message)).toEqual(['fx-plugin: Config `globs`: missing from the table'])
  })

  it('is reported when it differs from the generated text only in how a value is written', async () => {
    const { facts, readme } = await factsFor('fx-plugin')
    const mutated = readme.replace('| `timeoutMs` | `number` | `120000` |', '| `timeoutMs` | `number` | `120_000` |')
    expect(mutated).not.toBe(readme)
    expect(checkReadmeText('README.md', mutated, 'fx-plugin', facts).map(p => p.message)).toEqual([
      'fx-plugin: Config `timeoutMs`: default is `120_000` here, the schema says `120000`',
    ])
    const spaced = readme.replace('| `level` | `"low" \\| "high"` |', '| `level` |  `"low" \\| "high"` |')
    expect(spaced).not.toBe(readme)
    expect(checkReadmeText('README.md', spaced, 'fx-plugin', facts).map(p => p.message)).toEqual([
      'Config table of `fx-plugin` differs from what the sources generate: expected "| `level` | `\\"low\\" \\\\| \\"high\\"` | `\\"low\\"` | How loud to be. |"; run `pnpm docs:check --write` to regenerate it',
    ])
  })

  it('belongs to the plugin its markers name; a table without markers is reported', async () => {
    const { facts, readme } = await factsFor('fx-plugin')
    const unmarked = readme.replace('<!-- config:fx-plugin/extra -->\n', '').replace(/(\| `enabled` .*\n)<!-- \/config -->\n/, '$1')
    expect(checkReadmeText('README.md', unmarked, 'fx-plugin', facts).map(p => `${p.line}: ${p.message}`)).toEqual([
      '38: Config table of `fx-plugin/extra` is not between <!-- config:fx-plugin/extra --> markers; run `pnpm docs:check --write` to regenerate it',
    ])
  })
})

describe('regenerating the tables (docs:check --write)', () => {
  it('wraps tables written before markers, fixes them, adds missing event rows, and is idempotent', async () => {
    const { facts, readme } = await factsFor('fx-plugin')
    const legacy = readme
      .replace(/<!-- \/?(config|events)[^>]*-->\n/g, '')
      .replace('| `timeoutMs` | `number` | `120000` |', '| `timeoutMs` | number | `120_000` |')
      .replace(/\| `fx\/ping` .*\n/, '')
    expect(checkReadmeText('README.md', legacy, 'fx-plugin', facts).length).toBeGreaterThan(0)
    const once = regenerate(legacy, 'fx-plugin', facts).text
    expect(once).toContain('| `fx/ping` | parallel | The fixture pinged. |')
    expect(checkReadmeText('README.md', once, 'fx-plugin', facts)).toEqual([])
    expect(regenerate(once, 'fx-plugin', facts).text).toBe(once)
  })

  it('inserts a missing Config table at the end of the Config section', async () => {
    const { facts, readme } = await factsFor('fx-plugin')
    const without = readme.replace(/<!-- config:fx-plugin\/extra -->[\s\S]*?<!-- \/config -->\n/, '')
    const regenerated = regenerate(without, 'fx-plugin', facts).text
    expect(regenerated.indexOf('<!-- config:fx-plugin/extra -->')).toBeGreaterThan(regenerated.indexOf('### `fx-plugin/extra`'))
    expect(regenerated.indexOf('<!-- config:fx-plugin/extra -->')).toBeLessThan(regenerated.indexOf('## cordis.yml'))
    expect(checkReadmeText('README.md', regenerated, 'fx-plugin', facts)).toEqual([])
  })
})

describe('the Config table format', () => {
  const schema = Schema.object({
    timeoutMs: Schema.natural().default(120_000).description('Kill after this.'),
    level: Schema.union(['low', 'high'] as const).default('low').description('How loud.'),
    prompt: Schema.string().default('A long default prompt that nobody wants in a table cell.').description('The prompt.'),
    path: Schema.string().description('Where.'),
    token: Schema.string().required().description('The key.'),
    nested: Schema.object({ a: Schema.string() }).description('Grouped options.'),
    internal: Schema.natural().default(3).hidden().description('Internal.'),
  })

  it('generates a table that passes its own check (the --print-config output)', () => {
    const text = formatConfigTable(schema)
    expect(text.split('\n')).toEqual([
      '| key | type | default | description |',
      '|---|---|---|---|',
      '| `timeoutMs` | `number` | `120000` | Kill after this. |',
      '| `level` | `"low" \\| "high"` | `"low"` | How loud. |',
      '| `prompt` | `string` | `"A long default prompt that nob…"` | The prompt. |',
      '| `path` | `string` | — | Where. |',
      '| `token` | `string` | required | The key. |',
      '| `nested` | `{ a?: string }` | `{}` | Grouped options. |',
    ])
    expect(compareConfigTable(schema, findTables(text)[0])).toEqual([])
  })

  it('leaves a hidden option out, and says so of a row that lists one', () => {
    const text = formatConfigTable(schema)
    expect(text).not.toContain('internal')
    const withHidden = `${text}\n| \`internal\` | \`number\` | \`3\` | Internal. |`
    expect(compareConfigTable(schema, findTables(withHidden)[0]).map(p => p.message)).toEqual(['Config `internal`: a hidden option; leave it out'])
  })
})

describe('scripts/check-readmes.ts', () => {
  it('exits 1 listing the problems, and 0 for the packages that are clean', async () => {
    const all = await runScript('check-readmes', ['--root', root])
    expect(all.exitCode).toBe(1)
    expect(all.stdout).toContain('packages/fx-drift/README.md:27: Config `intervalMs`: default is `1000` here, the schema says `2000`')
    const clean = await captureMain(main, ['--root', root, 'fx-plugin', 'fx-lib'])
    expect(clean.stdout.trim().split('\n')).toEqual(['check-readmes: 2 package READMEs, 0 with problems', 'check-readmes: ok'])
    expect(clean.exitCode).toBe(0)
  })

  it('prints the Config tables of a package with --print-config', async () => {
    const printed = await captureMain(main, ['--root', root, '--print-config', 'fx-plugin'])
    expect(printed.exitCode).toBe(0)
    expect(printed.stdout).toContain('`fx-plugin/extra`:\n\n| key | type | default | description |\n|---|---|---|---|\n| `enabled` | `boolean` | `true` | Turn the extra on. |')
  })
})
