import { renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { SourceWatcher } from 'dsh-cli/dev'
import { tempDir } from './helpers.ts'
import { withTimeout } from './dev-helpers.ts'

/** A watcher whose batches are recorded; `next()` resolves with the next batch. */
function recorder(debounceMs: number) {
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
  return { watcher, batches, next }
}

describe('dsh dev: source watcher', () => {
  it('a burst of saves to several files is one batch; a save right after a batch (inside chokidar\'s 50 ms change throttle) is not lost', async () => {
    const dir = tempDir('dsh-watch-')
    const a = join(dir, 'a.ts')
    const b = join(dir, 'b.ts')
    writeFileSync(a, '0')
    writeFileSync(b, '0')
    const { watcher, batches, next } = recorder(30)
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
    const dir = tempDir('dsh-watch-')
    const a = join(dir, 'a.ts')
    const b = join(dir, 'b.ts')
    writeFileSync(a, 'a0')
    writeFileSync(b, 'b0')
    const { watcher, batches, next } = recorder(20)
    try {
      await watcher.set([a, b])
      let batch = next()
      writeFileSync(a + '.tmp', 'a1')
      renameSync(a + '.tmp', a)
      expect(await batch).toEqual([a])

      writeFileSync(a, 'a1') // same content
      await delay(200)
      expect(batches).toHaveLength(1)

      await watcher.set([b])
      expect(watcher.files).toEqual([b])
      batch = next()
      writeFileSync(a, 'a2')
      writeFileSync(b, 'b1')
      expect(await batch).toEqual([b])
      await delay(150)
      expect(batches).toHaveLength(2)
    } finally {
      await watcher.close()
    }
  })
})
