import { describe, expect, it } from 'vitest'
import { bootForSuite, expectRolledBack, makeWorkspace, runs } from './helpers.ts'

/*
 * Node's own test runner (`"test": "node --test"`): a small ES-module
 * project with no tsconfig and no vitest or Jest, so the node-test
 * toolchain alone judges. Related tests come from the import graph.
 */

const nodeProject: Record<string, string> = {
  'package.json': JSON.stringify({ name: 'np', private: true, type: 'module', scripts: { test: 'node --test' } }),
  'src/sum.js': 'export function sum(a, b) {\n  return a + b\n}\n',
  'src/total.js': "import { sum } from './sum.js'\n\nexport const total = list => list.reduce(sum, 0)\n",
  'src/legacy.js': 'export const legacy = () => 1\n',
  'src/label.js': "export const label = n => `${n} items`\n",
  'test/sum.test.js': "import { test } from 'node:test'\nimport assert from 'node:assert/strict'\nimport { sum } from '../src/sum.js'\n\ntest('adds', () => assert.equal(sum(1, 2), 3))\n",
  'test/total.test.js': "import { describe, it } from 'node:test'\nimport assert from 'node:assert/strict'\nimport { total } from '../src/total.js'\n\ndescribe('total', () => {\n  it('sums a list', () => assert.equal(total([1, 2, 3]), 6))\n})\n",
  'test/legacy.test.js': "import { test } from 'node:test'\nimport assert from 'node:assert/strict'\nimport { legacy } from '../src/legacy.js'\n\ntest('was always broken', () => assert.equal(legacy(), 2))\n",
}

describe('node:test (a "node --test" test script): related test files from the import graph, its own reporter', () => {
  const suite = bootForSuite(() => makeWorkspace('', nodeProject), { testArgs: ['--pool=threads'] })

  it('keeps an unrelated good edit next to a pre-existing failure, running only the related test files', async () => {
    const { h } = suite
    const r = await h.exec('edit_file', { path: 'src/total.js', old_string: 'list.reduce(sum, 0)', new_string: 'list.reduce((a, b) => sum(a, b), 0)' })
    expect(r).toEqual({ content: 'edited src/total.js' })
    // The accepted state of the related tests, then the same tests after the write; testArgs are vitest's, not passed on.
    expect(runs(h.session).map(x => [x.argv[0], x.argv[1], x.argv.slice(4)])).toEqual([
      [process.execPath, '--test', ['test/total.test.js']],
      [process.execPath, '--test', ['test/total.test.js']],
    ])
  })

  it('rolls back a behaviour change failing tests through an import, byte for byte, after re-running them alone', async () => {
    const { h } = suite
    await expectRolledBack(h, 'edit_file', { path: 'src/sum.js', old_string: 'return a + b', new_string: 'return a - b' },
      'rolled back: test failed after edit_file on src/sum.js',
      'test/sum.test.js:5 FAIL adds — AssertionError: Expected values to be strictly equal: -1 !== 3',
      'test/total.test.js:6 FAIL total > sums a list — AssertionError: Expected values to be strictly equal: -6 !== 6',
    )
    expect(runs(h.session).map(x => x.argv.find(a => a.startsWith('--test-name-pattern')))).toContain('--test-name-pattern=^(adds)$')
  })

  it('rolls back a syntax error in an edited source file: the test files that load it, and the parse error itself', async () => {
    await expectRolledBack(suite.h, 'edit_file', { path: 'src/sum.js', old_string: 'return a + b', new_string: 'return a +' },
      'rolled back: test failed after edit_file on src/sum.js',
      'test/sum.test.js FAIL test file failed: SyntaxError: Unexpected token \'}\'',
      'test/total.test.js FAIL test file failed: SyntaxError: Unexpected token \'}\'',
      'src/sum.js:3 PARSE_ERROR SyntaxError: Unexpected token \'}\'',
    )
  })

  it('keeps a test-first test file with the warning', async () => {
    const { h } = suite
    const r = await h.exec('write_file', { path: 'test/label.test.js', content: "import { test } from 'node:test'\nimport assert from 'node:assert/strict'\nimport { label } from '../src/label.js'\n\ntest('says one item', () => assert.equal(label(1), '1 item'))\n" })
    expect(r).toEqual({
      content: [
        'created test/label.test.js (176 bytes)',
        'warning: kept, but test has new problems in tests (test-first work? make them pass):',
        "test/label.test.js:5 FAIL says one item — AssertionError: Expected values to be strictly equal: + actual - expected + '1 items' - '1 item' ^",
      ].join('\n'),
    })
  })
})
