import { describe, expect, it } from 'vitest'
import { evidenceOf, formatKey } from 'dsh-claims'

/** A line's evidence with its keys written as `formatKey` writes them. */
function evidence(line: string, ran?: Parameters<typeof evidenceOf>[1]) {
  const { commands, keys } = evidenceOf(line, ran)
  return { commands, keys: keys.map(formatKey) }
}

describe('the evidence a verified line names', () => {
  it.each<[line: string, commands: string[], keys: string[]]>([
    // The command after an em dash (the last one).
    ['login rejects expired tokens — pnpm vitest run tests/auth.test.ts', ['pnpm vitest run tests/auth.test.ts'], ['vitest run']],
    ['dates — even leap years — tested: pytest tests/dates', ['pytest tests/dates'], ['pytest tests/dates']],
    // The command after " -- " (the first one, so the command may hold its own --).
    ['types check -- npx tsc --noEmit', ['npx tsc --noEmit'], ['tsc --noEmit']],
    ['watch mode off -- pnpm test -- --run', ['pnpm test -- --run'], ['test --run']],
    // Every command in backticks; backticked code that is not a command is skipped.
    ['ran `pnpm build` and `pnpm test`, both green', ['pnpm build', 'pnpm test'], ['build', 'test']],
    ['`parseDate` handles leap years — `pnpm vitest run dates`', ['pnpm vitest run dates'], ['vitest run']],
    ['`parseDate` handles leap years — pnpm vitest run dates', ['pnpm vitest run dates'], ['vitest run']],
    ['`parseDate` handles leap years', [], []],
    // The whole line, when the line is a command.
    ['pnpm test', ['pnpm test'], ['test']],
    ['cd web && CI=1 npm test', ['cd web && CI=1 npm test'], ['test']],
    ['./scripts/check.sh --all', ['./scripts/check.sh --all'], ['check.sh --all']],
    // A command in trailing parentheses or after a colon.
    ['tests pass (pnpm test)', ['pnpm test'], ['test']],
    ['lint is clean: pnpm eslint .', ['pnpm eslint .'], ['eslint .']],
    // Quotes and trailing punctuation are stripped.
    ['auth works — "pnpm vitest run auth".', ['pnpm vitest run auth'], ['vitest run']],
    // Text after a dash is the command even for a program it does not know; elsewhere it is not (unless it ran, below).
    ['feature flag works — flagcheck --all', ['flagcheck --all'], ['flagcheck --all']],
    ['flagcheck passes', [], []],
    // Prose names nothing.
    ['Refactored the parser', [], []],
    ['auth is solid', [], []],
    ['fixed the flaky test', [], []],
    ['the parser is done — done', [], []],
  ])('%j names %j, keyed %j', (line, commands, keys) => {
    expect(evidence(line)).toEqual({ commands, keys })
  })

  it('accepts an unknown program elsewhere when that exact command ran', () => {
    expect(evidence('flagcheck passes', k => k.program === 'flagcheck')).toEqual({ commands: ['flagcheck passes'], keys: ['flagcheck passes'] })
  })
})
