/** Amounts are integer cents. */
export type Cents = number

export function add(a: Cents, b: Cents): Cents {
  return a + b
}

export function applyDiscount(amount: Cents, percent: number): Cents {
  return Math.round(amount * (1 - percent / 100))
}
