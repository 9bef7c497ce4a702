import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { cannotRead, readTextFile } from 'dsh-common'

class ThingError extends Error {}

describe('readTextFile / cannotRead', () => {
  it('reads a file; a missing file or a directory is one line with the errno code, thrown as the caller\'s error', () => {
    // dsh-common is below dsh-testkit, so no tempDir() here (as in its other specs).
    const dir = mkdtempSync(join(tmpdir(), 'dsh-read-text-'))
    writeFileSync(join(dir, 'a.txt'), 'héllo\n')
    expect(readTextFile(join(dir, 'a.txt'), 'thing', m => new ThingError(m))).toBe('héllo\n')
    const missing = join(dir, 'missing.txt')
    expect(() => readTextFile(missing, 'thing', m => new ThingError(m))).toThrow(new ThingError(`${missing}: cannot read thing (ENOENT)`))
    mkdirSync(join(dir, 'sub'))
    let caught: unknown
    try {
      readTextFile(join(dir, 'sub'), 'thing', m => new ThingError(m))
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(ThingError)
    expect((caught as Error).message).toBe(`${join(dir, 'sub')}: cannot read thing (EISDIR)`)
  })

  it('cannotRead falls back to the message when there is no errno code, and leaves out an unnamed kind', () => {
    expect(cannotRead('f.jsonl', new Error('boom'))).toBe('f.jsonl: cannot read (boom)')
    expect(cannotRead('f.jsonl', 'odd')).toBe('f.jsonl: cannot read (odd)')
  })
})
