import { describe, expect, it } from 'vitest'
import { evidenceOf, formatKey } from 'dsh-claims'

const commands = (line: string) => evidenceOf(line).commands
const keys = (line: string) => evidenceOf(line).keys.map(formatKey)

describe('the evidence a verified line names', () => {
  it('is the command after an em dash (the last one)', () => {
    expect(commands('login rejects expired tokens — pnpm vitest run tests/auth.test.ts')).toEqual(['pnpm vitest run tests/auth.test.ts'])
    expect(commands('dates — even leap years — tested: pytest tests/dates')).toEqual(['pytest tests/dates'])
    expect(keys('login rejects expired tokens — pnpm vitest run tests/auth.test.ts')).toEqual(['vitest run'])
  })

  it('is the command after " -- " (the first one, so the command may hold its own --)', () => {
    expect(commands('types check -- npx tsc --noEmit')).toEqual(['npx tsc --noEmit'])
    expect(commands('watch mode off -- pnpm test -- --run')).toEqual(['pnpm test -- --run'])
  })

  it('is every command in backticks', () => {
    expect(commands('ran `pnpm build` and `pnpm test`, both green')).toEqual(['pnpm build', 'pnpm test'])
    expect(keys('ran `pnpm build` and `pnpm test`, both green')).toEqual(['build', 'test'])
  })

  it('skips backticked code that is not a command', () => {
    expect(commands('`parseDate` handles leap years — `pnpm vitest run dates`')).toEqual(['pnpm vitest run dates'])
    expect(commands('`parseDate` handles leap years — pnpm vitest run dates')).toEqual(['pnpm vitest run dates'])
    expect(commands('`parseDate` handles leap years')).toEqual([])
  })

  it('is the whole line when the line is a command', () => {
    expect(commands('pnpm test')).toEqual(['pnpm test'])
    expect(commands('cd web && CI=1 npm test')).toEqual(['cd web && CI=1 npm test'])
    expect(commands('./scripts/check.sh --all')).toEqual(['./scripts/check.sh --all'])
  })

  it('also finds a command in trailing parentheses or after a colon', () => {
    expect(commands('tests pass (pnpm test)')).toEqual(['pnpm test'])
    expect(commands('lint is clean: pnpm eslint .')).toEqual(['pnpm eslint .'])
  })

  it('takes text after a dash as the command even for a program it does not know', () => {
    expect(keys('feature flag works — flagcheck --all')).toEqual(['flagcheck --all'])
  })

  it('accepts an unknown program elsewhere when that exact command ran', () => {
    expect(commands('flagcheck passes')).toEqual([])
    expect(evidenceOf('flagcheck passes', k => k.program === 'flagcheck').commands).toEqual(['flagcheck passes'])
  })

  it('is nothing for prose', () => {
    for (const line of ['Refactored the parser', 'auth is solid', 'fixed the flaky test']) {
      expect(evidenceOf(line)).toEqual({ commands: [], keys: [] })
    }
    expect(evidenceOf('the parser is done — done')).toEqual({ commands: [], keys: [] })
  })

  it('strips quotes and trailing punctuation', () => {
    expect(commands('auth works — "pnpm vitest run auth".')).toEqual(['pnpm vitest run auth'])
  })
})
