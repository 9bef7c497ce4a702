import { describe, expect, it } from 'vitest'
import { formatCents } from '../src/format.ts'

describe('formatCents', () => {
  it('formats dollars and cents', () => expect(formatCents(1890)).toBe('$18.90'))
  it('formats negative amounts', () => expect(formatCents(-5)).toBe('-$0.05'))
})
