import { describe, expect, it } from 'vitest'
import { subtotal, total } from '../src/cart.ts'

const lines = [
  { sku: 'tea', price: 450, qty: 2 },
  { sku: 'mug', price: 1200, qty: 1 },
]

describe('cart', () => {
  it('sums line prices times quantities', () => expect(subtotal(lines)).toBe(2100))
  it('applies the discount to the subtotal', () => expect(total(lines, 10)).toBe(1890))
})
