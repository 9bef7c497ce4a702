import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { Toolchain } from '../toolchain.ts'
import { CargoCheck, CargoTestCheck } from './check.ts'

/** Rust: `cargo check` and `cargo test` (no targeting, no impact, no style). */
export const rust: Toolchain = {
  name: 'rust',
  profile: 'rust',
  detect: root => existsSync(join(root, 'Cargo.toml')),
  contribute({ root, config, note }) {
    if (config.coverage.threshold > 0) note('coverage is not measured for Rust (vitest and go test only)')
    return { checks: [new CargoCheck(root)], tests: config.tests !== 'off' ? [new CargoTestCheck(root, config.testArgs)] : [] }
  },
}
