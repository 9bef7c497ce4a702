import { mkdtempSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ensureVault, VAULT_GITIGNORE } from 'dsh-common'

describe('ensureVault', () => {
  it('creates the vault with a .gitignore of * inside, and leaves an existing one alone', () => {
    const root = mkdtempSync(join(tmpdir(), 'dsh-vault-'))
    ensureVault(join(root, 'a/.dsh'))
    expect(readFileSync(join(root, 'a/.dsh/.gitignore'), 'utf8')).toBe(VAULT_GITIGNORE)
    expect(VAULT_GITIGNORE.split('\n').filter(l => l && !l.startsWith('#'))).toEqual(['*'])
    mkdirSync(join(root, 'b'))
    writeFileSync(join(root, 'b/.gitignore'), 'mine\n')
    ensureVault(join(root, 'b'))
    expect(readFileSync(join(root, 'b/.gitignore'), 'utf8')).toBe('mine\n')
  })
})
