import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { boot, makeWorkspace, readText } from '../../helpers.ts'

const hasCargo = spawnSync('cargo', ['--version']).status === 0
if (!hasCargo) console.warn('rust-profile.spec: skipped — `cargo` is not on PATH')

describe.skipIf(!hasCargo)('Rust profile (Cargo.toml → cargo check, cargo test)', () => {
  it('keeps a good edit; rolls back a compile error and a test break', async () => {
    const root = makeWorkspace('rustproj')
    const h = await boot(root, { testArgs: [], timeoutMs: 300_000 })
    expect(await h.exec('edit_file', { path: 'src/lib.rs', old_string: 'pub fn add', new_string: '/// Adds.\npub fn add' })).toEqual({ content: 'edited src/lib.rs' })
    const compile = await h.exec('edit_file', { path: 'src/lib.rs', old_string: '    a + b', new_string: '    a + c' })
    expect(compile.content).toBe('rolled back: compile failed after edit_file on src/lib.rs\nsrc/lib.rs:3 E0425 cannot find value `c` in this scope')
    const test = await h.exec('edit_file', { path: 'src/lib.rs', old_string: '+ 50) / 100', new_string: '+ 50) / 10' })
    expect(test.content).toBe('rolled back: test failed after edit_file on src/lib.rs\nsrc/lib.rs FAIL tests::discounts')
    expect(readText(root, 'src/lib.rs')).toContain('+ 50) / 100')
  }, 600_000)
})
