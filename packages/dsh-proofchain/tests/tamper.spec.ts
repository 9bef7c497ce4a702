import { readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { verifyChainFile, describeProblem, headPath, ProofChain, GENESIS, readChainSeal, sealEntry, writeChainSeal, type ProofEntry } from 'dsh-proofchain'
import { fill, freshChain, lines, sample, writeLines } from './helpers.ts'

async function chainOf(n: number) {
  const chain = freshChain()
  await fill(chain, n)
  return chain.file
}

/** 1-based line holding byte `offset` (a newline belongs to the line it ends). */
function lineOf(bytes: Buffer, offset: number): number {
  let line = 1
  for (let i = 0; i < offset; i++) if (bytes[i] === 0x0a) line++
  return line
}

describe('verify: an intact chain', () => {
  it('is green, with its head and entry count', async () => {
    const file = await chainOf(20)
    const report = verifyChainFile(file)
    expect(report.ok).toBe(true)
    expect(report.entries).toBe(20)
    expect(report.head?.seq).toBe(19)
    expect(report.headRecord?.seq).toBe(19)
    expect(report.problem).toBeUndefined()
  })

  it('starts at genesis and links every entry to the one before', async () => {
    const file = await chainOf(5)
    const rows = lines(file).map(l => JSON.parse(l))
    expect(rows[0].prevHash).toBe(GENESIS)
    for (let i = 1; i < rows.length; i++) {
      expect(rows[i].seq).toBe(i)
      expect(rows[i].prevHash).toBe(rows[i - 1].hash)
    }
  })
})

describe('verify: tampering', () => {
  it('names the line of any single changed byte (property)', async () => {
    const file = await chainOf(12)
    const original = readFileSync(file)
    const copy = `${file}.tampered`
    fc.assert(fc.property(fc.nat({ max: original.length - 1 }), fc.integer({ min: 1, max: 255 }), (offset, delta) => {
      const bytes = Buffer.from(original)
      bytes[offset] = (bytes[offset]! + delta) % 256
      writeFileSync(copy, bytes)
      const report = verifyChainFile(copy)
      expect(report.ok).toBe(false)
      expect(report.problem!.line).toBe(lineOf(original, offset))
    }), { numRuns: 400 })
  })

  it('names the edited entry as a hash mismatch when the JSON stays valid', async () => {
    const file = await chainOf(10)
    const rows = lines(file)
    rows[4] = rows[4]!.replace('"outcome":"fail"', '"outcome":"ok"').replace('"outcome":"ok"', '"outcome":"fail"')
    writeLines(file, rows)
    const report = verifyChainFile(file)
    expect(report.problem).toMatchObject({ line: 5, seq: 4, kind: 'hash mismatch' })
    expect(describeProblem(report.problem!)).toMatch(/^line 5 \(seq 4\): hash mismatch — stored [0-9a-f]{12}…, recomputed [0-9a-f]{12}…$/)
  })

  it('detects a deleted line wherever it was, naming the line after the gap', async () => {
    const file = await chainOf(10)
    const rows = lines(file)
    for (let k = 0; k < rows.length; k++) {
      writeLines(file, rows.filter((_, i) => i !== k))
      const report = verifyChainFile(file)
      expect(report.ok, `deleting line ${k + 1}`).toBe(false)
      if (k < rows.length - 1) {
        expect(report.problem).toMatchObject({ line: k + 1, seq: k + 1, kind: 'broken link' })
      } else {
        // The newest entry: only the head record can tell it is gone.
        expect(report.problem).toMatchObject({ line: 10, seq: 9, kind: 'missing entries' })
      }
    }
  })

  it('detects two swapped lines, naming the first one out of place', async () => {
    const file = await chainOf(10)
    const rows = lines(file)
    for (let k = 0; k < rows.length - 1; k++) {
      const swapped = [...rows]
      ;[swapped[k], swapped[k + 1]] = [swapped[k + 1]!, swapped[k]!]
      writeLines(file, swapped)
      const report = verifyChainFile(file)
      expect(report.problem, `swapping lines ${k + 1} and ${k + 2}`).toMatchObject({ line: k + 1, kind: 'broken link' })
    }
  })

  it('detects a truncation mid-line as a torn line', async () => {
    const file = await chainOf(10)
    const size = readFileSync(file).length
    const last = lines(file).at(-1)!.length
    truncateSync(file, size - Math.floor(last / 2))
    expect(verifyChainFile(file).problem).toMatchObject({ line: 10, kind: 'torn line' })
    truncateSync(file, 100)
    expect(verifyChainFile(file).problem).toMatchObject({ line: 1, kind: 'torn line' })
  })

  it('detects a truncation at a line boundary through the head record', async () => {
    const file = await chainOf(10)
    writeLines(file, lines(file).slice(0, 6))
    expect(verifyChainFile(file).problem).toMatchObject({ line: 7, seq: 6, kind: 'missing entries' })
  })

  it('detects the first line deleted (no genesis, no anchor)', async () => {
    const file = await chainOf(4)
    writeLines(file, lines(file).slice(1))
    const problem = verifyChainFile(file).problem!
    expect(problem).toMatchObject({ line: 1, seq: 1, kind: 'broken link' })
    expect(problem.message).toBe('the chain starts at seq 1 with no anchor (expected seq 0 linked to genesis)')
  })

  it('detects an entry re-sealed with a fresh hash: the next entry no longer links to it', async () => {
    const file = await chainOf(8)
    const rows = lines(file)
    const reseal = (i: number) => {
      const e = JSON.parse(rows[i]!) as ProofEntry
      return JSON.stringify(sealEntry({ ...e, outcome: e.outcome === 'ok' ? 'fail' : 'ok' }))
    }
    writeLines(file, rows.map((r, i) => (i === 3 ? reseal(3) : r)))
    const problem = verifyChainFile(file).problem!
    expect(problem).toMatchObject({ line: 5, seq: 4, kind: 'broken link' })
    expect(problem.message).toMatch(/^prevHash [0-9a-f]{12}… does not match seq 3 \([0-9a-f]{12}…\)$/)
    // The newest entry has no successor; the head record catches it instead.
    writeLines(file, rows.map((r, i) => (i === 7 ? reseal(7) : r)))
    expect(verifyChainFile(file).problem).toMatchObject({ line: 8, seq: 7, kind: 'hash mismatch' })
  })

  it('detects an added field and a blank line', async () => {
    const file = await chainOf(6)
    const rows = lines(file)
    writeLines(file, rows.map((r, i) => (i === 2 ? r.replace('{', '{"extra":1,') : r)))
    expect(verifyChainFile(file).problem).toMatchObject({ line: 3, kind: 'hash mismatch' })
    writeLines(file, [...rows.slice(0, 3), '', ...rows.slice(3)])
    expect(verifyChainFile(file).problem).toMatchObject({ line: 4, kind: 'corrupt line' })
  })

  it('reports a removed chain file when its head record remains', async () => {
    const file = await chainOf(3)
    rmSync(file)
    expect(verifyChainFile(file).problem).toMatchObject({ kind: 'missing entries' })
    rmSync(headPath(file))
    expect(verifyChainFile(file).problem).toMatchObject({ kind: 'missing entries', message: expect.stringMatching(/^the chain file is gone, but dsh sealed seq 2 \([0-9a-f]{12}…\) in it at \S+: it was removed$/) })
  })

  it('says "no proof chain" only for a chain never sealed here', async () => {
    const chain = freshChain({ seal: false })
    await fill(chain, 3)
    rmSync(chain.file)
    rmSync(headPath(chain.file))
    expect(() => verifyChainFile(chain.file)).toThrow(/no proof chain at/)
  })
})

/** The chain rewritten as a forger with the code (not the key) would: outcomes flipped, every hash recomputed, the head record too. */
function forge(file: string, edit: (entry: ProofEntry) => ProofEntry = e => ({ ...e, outcome: 'ok' })): ProofEntry[] {
  let prevHash = GENESIS
  const forged = lines(file).map(line => {
    const { hash: _hash, ...rest } = edit(JSON.parse(line) as ProofEntry)
    const entry = sealEntry({ ...rest, prevHash })
    prevHash = entry.hash
    return entry
  })
  writeLines(file, forged.map(e => JSON.stringify(e)))
  const last = forged.at(-1)!
  writeFileSync(headPath(file), JSON.stringify({ seq: last.seq, hash: last.hash, time: last.time }) + '\n')
  return forged
}

describe('verify: forgery by something without the key (the seal in dsh\'s key store)', () => {
  it('a chain rewritten with recomputed hashes and head record: not the entry dsh sealed', async () => {
    const file = await chainOf(6)
    forge(file)
    expect(verifyChainFile(file)).toMatchObject({ ok: false, problem: { line: 6, seq: 5, kind: 'hash mismatch', message: expect.stringMatching(/^not the entry dsh sealed: the seal has hash [0-9a-f]{12}… for seq 5, the file has [0-9a-f]{12}… \(rewritten, hashes recomputed\)$/) } })
  })

  it('a forged entry appended with a valid hash: not sealed', async () => {
    const file = await chainOf(4)
    const last = JSON.parse(lines(file).at(-1)!) as ProofEntry
    const extra = sealEntry({ ...sample(99), seq: last.seq + 1, time: last.time + 1, detail: '', prevHash: last.hash })
    writeLines(file, [...lines(file), JSON.stringify(extra)])
    writeFileSync(headPath(file), JSON.stringify({ seq: extra.seq, hash: extra.hash, time: extra.time }) + '\n')
    expect(verifyChainFile(file).problem).toEqual({ line: 5, seq: 4, kind: 'not sealed', message: 'dsh sealed the chain at seq 3; the entries after it (to seq 4) were not sealed by dsh: written by something else, or while dsh could not use its key store' })
  })

  it('the harness appending after a forgery freezes the seal, so verify keeps saying it', async () => {
    const file = await chainOf(5)
    forge(file)
    const warnings: string[] = []
    const chain = ProofChain.open({ file, onWarning: m => warnings.push(m) })
    await fill(chain, 2, 50)
    expect(warnings).toEqual([`${file}: seq 4 in the chain is not the entry dsh sealed; the seal is frozen as evidence (run dsh proof verify)`])
    expect(verifyChainFile(file).problem).toMatchObject({ seq: 4, kind: 'hash mismatch' })
  })

  it('a dsh stopped between writing a batch and moving the seal leaves a chain that still verifies, and appends on', async () => {
    const chain = freshChain()
    await fill(chain, 3)
    const sealed = readChainSeal(chain.file)
    if (!sealed || sealed === 'forged') throw new Error('no seal')
    // The state a stop right after the append leaves: the seal still at seq 1, naming seq 2 as next.
    const tail = JSON.parse(lines(chain.file).at(-1)!) as ProofEntry
    const before = JSON.parse(lines(chain.file).at(-2)!) as ProofEntry
    writeChainSeal(chain.file, { seq: before.seq, hash: before.hash, time: sealed.time, next: { seq: tail.seq, hash: tail.hash } })
    expect(verifyChainFile(chain.file)).toMatchObject({ ok: true, entries: 3 })
    const warnings: string[] = []
    const reopened = ProofChain.open({ file: chain.file, onWarning: m => warnings.push(m) })
    await fill(reopened, 2, 10)
    expect(warnings).toEqual([])
    expect(verifyChainFile(chain.file)).toMatchObject({ ok: true, entries: 5, seal: { seq: 4 } })
  })

  it('a seal changed without the key does not verify', async () => {
    const file = await chainOf(2)
    const seals = join(process.env.DSH_STATE_DIR!, 'seals')
    for (const name of readdirSync(seals)) {
      const seal = JSON.parse(readFileSync(join(seals, name), 'utf8')) as { what: string; fields: Record<string, unknown> }
      if (!seal.what.endsWith(file)) continue
      writeFileSync(join(seals, name), JSON.stringify({ ...seal, fields: { ...seal.fields, seq: 0 } }))
    }
    expect(verifyChainFile(file).problem).toMatchObject({ kind: 'bad seal', message: 'the seal in dsh\'s key store does not verify with its key' })
  })
})

describe('appending after damage', () => {
  it('freezes the head record when the newest entries were cut, so verify keeps reporting it', async () => {
    const file = await chainOf(8)
    writeLines(file, lines(file).slice(0, 5))
    const warnings: string[] = []
    const chain = ProofChain.open({ file, onWarning: m => warnings.push(m) })
    await fill(chain, 5, 100)
    expect(warnings).toEqual([
      `${file}: the file ended at seq 4 although seq 7 had been written; the head record is frozen as evidence (run dsh proof verify)`,
      `${file}: the chain ended at seq 4 although dsh had sealed seq 7; the seal is frozen as evidence (run dsh proof verify)`,
    ])
    expect(verifyChainFile(file).problem).toMatchObject({ seq: 7, kind: 'hash mismatch' })
    expect(JSON.parse(readFileSync(headPath(file), 'utf8'))).toMatchObject({ seq: 7, frozen: 'the file ended at seq 4 although seq 7 had been written' })
  })
})

if (process.env.DSH_LONG) {
  describe('verify: exhaustive (DSH_LONG)', () => {
    it('every byte of a chain, every other value: detected on its own line', async () => {
      const file = await chainOf(6)
      const original = readFileSync(file)
      const copy = `${file}.tampered`
      for (let offset = 0; offset < original.length; offset++) {
        for (let value = 0; value < 256; value += 17) {
          if (value === original[offset]) continue
          const bytes = Buffer.from(original)
          bytes[offset] = value
          writeFileSync(copy, bytes)
          const report = verifyChainFile(copy)
          expect(report.ok).toBe(false)
          expect(report.problem!.line).toBe(lineOf(original, offset))
        }
      }
    })
  })
}
