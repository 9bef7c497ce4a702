import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { boot, cleanupWorkspaces, makeWorkspace, readText, type Harness } from './helpers.ts'

let h: Harness | undefined
afterEach(async () => { await h?.dispose(); h = undefined })
afterAll(cleanupWorkspaces)

const newTest = `import { expect, it } from 'vitest'
import { add } from '../src/money.ts'

it('subtracts cents', () => expect(add(5, -3)).toBe(3))
`

describe('strictTests', () => {
  it('under strictTests, a new failing test is a regression', async () => {
    const root = makeWorkspace()
    h = await boot(root, { strictTests: true })
    const r = await h.exec('write_file', { path: 'tests/subtract.test.ts', content: newTest })
    expect(r).toEqual({
      isError: true,
      content: [
        'rolled back: test failed after write_file on tests/subtract.test.ts',
        'tests/subtract.test.ts:4 FAIL subtracts cents — AssertionError: expected 2 to be 3 // Object.is equality',
      ].join('\n'),
    })
    expect(() => readText(root, 'tests/subtract.test.ts')).toThrow(/ENOENT/)
  })
})
