import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { defineConfig } from 'vitest/config'

/**
 * The slow end-to-end runs: real agent CLIs, real fetched projects, soaks.
 * They live in `packages/<pkg>/e2e/*.e2e.ts`, outside `pnpm test` (which stays
 * under ten minutes on two cores); `.ci/run` runs both.
 */
export default defineConfig({
  test: {
    include: ['packages/*/e2e/**/*.e2e.ts'],
    testTimeout: 600_000,
    hookTimeout: 600_000,
    globalSetup: ['packages/dsh-testkit/src/leftovers.ts'],
    pool: 'forks',
    poolOptions: { forks: { maxForks: 1, minForks: 1 } },
    passWithNoTests: true,
    // DSH_BACKGROUND=0: each write's whole verdict in its own hook answer, as these runs assert it; background-verdicts.e2e.ts turns it on for its agent.
    env: { NODE_ENV: 'test', DSH_STATE_DIR: join(tmpdir(), `dsh-test-state-${process.getuid?.() ?? 0}`), DSH_BACKGROUND: '0' },
  },
})
