// Old receipt code, already broken before the agent arrived: two type errors.
import { formatCents } from './format.ts'

export function receiptLine(label: string, amount: number): string {
  const padded: number = label.padEnd(20)
  return `${padded}${formatCents(amount)}`
}

export function receiptTotal(amount: number): string {
  return formatCents(amount.toFixed(2))
}
