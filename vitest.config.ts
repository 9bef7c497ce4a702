import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['packages/*/tests/**/*.spec.ts', 'scripts/tests/**/*.spec.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    // dsh's key store (seals) for tests: never the user's own.
    env: { NODE_ENV: 'test', DSH_STATE_DIR: join(tmpdir(), `dsh-test-state-${process.getuid?.() ?? 0}`) },
  },
})
