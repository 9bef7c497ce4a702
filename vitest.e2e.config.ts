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
    // Background verdicts stay on (the default): a run that asserts each write's whole verdict in its hook answer turns them off in its workspace's host settings (writeHostSettings), which reaches the host under every agent.
    env: { NODE_ENV: 'test', DSH_STATE_DIR: join(tmpdir(), `dsh-test-state-${process.getuid?.() ?? 0}`) },
  },
})
