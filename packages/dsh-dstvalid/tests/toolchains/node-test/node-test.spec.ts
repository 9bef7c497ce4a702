import { describe, expect, it } from 'vitest'
import { bootForSuite, makeWorkspace, runnerScenarios } from '../../helpers.ts'

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

  runnerScenarios(suite, {
    testDir: 'test',
    // testArgs are vitest's, not passed on.
    goodEditRuns: runs => expect(runs.map(x => [x.argv[0], x.argv[1], x.argv.slice(4)])).toEqual([
      [process.execPath, '--test', ['test/total.test.js']],
    ]),
    behaviourBreak: [
      'test/sum.test.js:5 FAIL adds — AssertionError: Expected values to be strictly equal: -1 !== 3',
      'test/total.test.js:6 FAIL total > sums a list — AssertionError: Expected values to be strictly equal: -6 !== 6',
    ],
    rerunAlone: '--test-name-pattern=^(adds)$',
    syntaxError: [
      'test/sum.test.js FAIL test file failed: SyntaxError: Unexpected token \'}\'',
      'test/total.test.js FAIL test file failed: SyntaxError: Unexpected token \'}\'',
      'src/sum.js:3 PARSE_ERROR SyntaxError: Unexpected token \'}\'',
    ],
    testFirst: {
      name: 'label.test.js',
      content: "import { test } from 'node:test'\nimport assert from 'node:assert/strict'\nimport { label } from '../src/label.js'\n\ntest('says one item', () => assert.equal(label(1), '1 item'))\n",
      failure: "test/label.test.js:5 FAIL says one item — AssertionError: Expected values to be strictly equal: + actual - expected + '1 items' - '1 item' ^",
    },
  })
})
