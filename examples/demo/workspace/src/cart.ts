import { add, applyDiscount, type Cents } from './money.ts'

export interface Line {
  sku: string
  price: Cents
  qty: number
}

export function subtotal(lines: Line[]): Cents {
  return lines.reduce((sum, line) => add(sum, line.price * line.qty), 0)
}

export function total(lines: Line[], discountPercent = 0): Cents {
  return applyDiscount(subtotal(lines), discountPercent)
}
