import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { Snapshots } from 'dsh-snapshot'
import { listTree, workspace } from './helpers.ts'

// Leaves only: no path is ever both a file and a directory.
const PATHS = ['a', 'b.bin', 'x/c', 'x/y/d', 'z/w/e'] as const
const MODES = [0o644, 0o755, 0o600] as const

type Op =
  | { op: 'write'; path: string; data: Uint8Array; mode: number }
  | { op: 'delete'; path: string }
  | { op: 'chmod'; path: string; mode: number }

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('write' as const), path: fc.constantFrom(...PATHS), data: fc.uint8Array({ maxLength: 300 }), mode: fc.constantFrom(...MODES) }),
  fc.record({ op: fc.constant('delete' as const), path: fc.constantFrom(...PATHS) }),
  fc.record({ op: fc.constant('chmod' as const), path: fc.constantFrom(...PATHS), mode: fc.constantFrom(...MODES) }),
)

const initialArb = fc.dictionary(fc.constantFrom(...PATHS), fc.record({ data: fc.uint8Array({ maxLength: 300 }), mode: fc.constantFrom(...MODES) }))

function apply(root: string, op: Op) {
  const abs = join(root, op.path)
  switch (op.op) {
    case 'write':
      mkdirSync(dirname(abs), { recursive: true })
      writeFileSync(abs, op.data)
      chmodSync(abs, op.mode)
      break
    case 'delete':
      rmSync(abs, { force: true })
      break
    case 'chmod':
      if (existsSync(abs)) chmodSync(abs, op.mode)
      break
  }
}

describe('properties', () => {
  it('rolling back scopes newest-first restores each earlier state exactly (content, modes, created directories)', async () => {
    await fc.assert(fc.asyncProperty(initialArb, fc.array(fc.array(opArb, { maxLength: 6 }), { minLength: 1, maxLength: 4 }), async (initial, scopes) => {
      const root = workspace()
      for (const [path, { data, mode }] of Object.entries(initial)) apply(root, { op: 'write', path, data, mode })
      const s = new Snapshots({ root, vault: join(root, '.dsh'), sessionId: 'p', fsync: 'off' })
      const states = [listTree(root)]
      scopes.forEach((ops, i) => {
        for (const op of ops) {
          // Capture right before each change, as the guard does for each write call.
          s.capture({ key: `call:c${i}`, callId: `c${i}`, step: 0 }, [op.path])
          apply(root, op)
        }
        states.push(listTree(root))
      })
      const last = await s.rollback({ callId: `c${scopes.length - 1}` }, 'property')
      expect(last.matched).toBe(scopes.at(-1)!.length > 0)
      expect(last.failed).toEqual([])
      expect(listTree(root)).toEqual(states.at(-2))
      const all = await s.rollback({ step: 0 }, 'property')
      expect(all.failed).toEqual([])
      expect(listTree(root)).toEqual(states[0])
      expect(s.openScopes).toBe(0)
      rmSync(root, { recursive: true, force: true })
    }), { numRuns: 60 })
  })
})
