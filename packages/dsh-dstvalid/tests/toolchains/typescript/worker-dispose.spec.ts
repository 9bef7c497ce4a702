import { createRequire } from 'node:module'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { TsWorkerClient } from 'dsh-dstvalid'
import { makeWorkspace } from '../../helpers.ts'

// A host whose process ends by running out of work (the DeepSeek Harness's
// headless mode) disposes the plugins and waits for pending timers: a check
// cut short by disposal must be answered at once, not when its timeout fires.
describe('type-check worker disposal', () => {
  const LONG = 3_600_000
  const client = (root: string) => new TsWorkerClient(
    { root, configPath: join(root, 'tsconfig.json'), typescriptPath: createRequire(import.meta.url).resolve('typescript') },
    { maxHeapMb: 0 },
  )

  it('answers a check whose worker is still starting', async () => {
    const c = client(makeWorkspace())
    const answer = c.check([], LONG)
    await c.dispose()
    await expect(answer).resolves.toEqual({ status: 'error', error: 'type-check worker disposed' })
    expect(c.alive).toBe(false)
  })

  it('answers a check in flight on a started worker', async () => {
    const c = client(makeWorkspace())
    await c.start()
    const answer = c.check([], LONG)
    await c.dispose()
    // Disposed before or after the request reached the worker: either way answered now.
    await expect(answer).resolves.toEqual({ status: 'error', error: expect.stringMatching(/^type-check worker (disposed|is gone)$/) })
  })
})
