import { describe, expect, it } from 'vitest'
import { add, applyDiscount } from '../src/money.ts'

describe('money', () => {
  it('adds cents', () => expect(add(150, 275)).toBe(425))
  it('applies a percentage discount, rounding to the cent', () => expect(applyDiscount(999, 10)).toBe(899))
})
