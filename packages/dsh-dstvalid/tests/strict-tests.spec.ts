import { describe, expect, it } from 'vitest'
import { boot, expectRolledBack, makeWorkspace, readText } from './helpers.ts'

const newTest = `import { expect, it } from 'vitest'
import { add } from '../src/money.ts'

it('subtracts cents', () => expect(add(5, -3)).toBe(3))
`

describe('strictTests', () => {
  it('under strictTests, a new failing test is a regression', async () => {
    const root = makeWorkspace()
    const h = await boot(root, { strictTests: true })
    await expectRolledBack(h, 'write_file', { path: 'tests/subtract.test.ts', content: newTest },
      'rolled back: test failed after write_file on tests/subtract.test.ts',
      'tests/subtract.test.ts:4 FAIL subtracts cents — AssertionError: expected 2 to be 3 // Object.is equality',
    )
    expect(() => readText(root, 'tests/subtract.test.ts')).toThrow(/ENOENT/)
  })
})
