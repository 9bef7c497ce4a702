import { renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { SourceWatcher } from 'dsh-cli/dev'
import { tempDir } from 'dsh-testkit'
import { withTimeout } from './dev-helpers.ts'

/**
 * Two files `a.ts` and `b.ts` (with the given contents) in a fresh dir, and
 * a watcher whose batches are recorded; `next()` resolves with the next batch.
 */
function watchTwo(debounceMs: number, [a0, b0]: [string, string]) {
  const dir = tempDir('dsh-watch-')
  const a = join(dir, 'a.ts')
  const b = join(dir, 'b.ts')
  writeFileSync(a, a0)
  writeFileSync(b, b0)
  const batches: string[][] = []
  let waiting: ((files: string[]) => void) | undefined
  const watcher = new SourceWatcher({
    debounceMs,
    async onBatch(files) {
      batches.push([...files].sort())
      waiting?.(files)
      waiting = undefined
    },
  })
  const next = () => withTimeout(new Promise<string[]>(resolve => { waiting = resolve }), 5_000, 'no batch')
  return { a, b, watcher, batches, next }
}

describe('dsh dev: source watcher', () => {
  it('a burst of saves to several files is one batch; a save right after a batch (inside chokidar\'s 50 ms change throttle) is not lost', async () => {
    const { a, b, watcher, batches, next } = watchTwo(30, ['0', '0'])
    try {
      await watcher.set([a, b])
      let batch = next()
      for (let i = 1; i <= 4; i++) writeFileSync(i % 2 ? a : b, `${i}`)
      expect((await batch).sort()).toEqual([a, b])
      batch = next()
      writeFileSync(a, 'again') // within 50 ms of the previous change of a
      expect(await batch).toEqual([a])
      expect(batches).toHaveLength(2)
    } finally {
      await watcher.close()
    }
  })

  it('sees a save by rename, ignores a save that changes nothing, and stops watching files dropped from the set', async () => {
    const { a, b, watcher, batches, next } = watchTwo(20, ['a0', 'b0'])
    try {
      await watcher.set([a, b])
      let batch = next()
      writeFileSync(a + '.tmp', 'a1')
      renameSync(a + '.tmp', a)
      expect(await batch).toEqual([a])

      // A save of a that changes nothing, then a real change of b: the next batch is b's alone.
      batch = next()
      writeFileSync(a, 'a1')
      writeFileSync(b, 'b1')
      expect(await batch).toEqual([b])

      await watcher.set([b])
      expect(watcher.files).toEqual([b])
      batch = next()
      writeFileSync(a, 'a2')
      writeFileSync(b, 'b2')
      expect(await batch).toEqual([b])
      // a (no longer watched) made no batch of its own: the next one is b's again.
      batch = next()
      writeFileSync(b, 'b3')
      expect(await batch).toEqual([b])
      expect(batches).toEqual([[a], [b], [b], [b]])
    } finally {
      await watcher.close()
    }
  })
})
