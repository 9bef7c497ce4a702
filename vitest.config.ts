import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { configDefaults, defineConfig } from 'vitest/config'

/**
 * Spec files that change no process state (no env, cwd, signal handlers, module
 * mocks, fake timers) and leave nothing running: they share two worker threads
 * and their loaded modules in this process.
 *
 * Every other spec file runs in one of two forked processes (`forks`), each
 * kept for the files after it with its loaded modules (`isolate: false`):
 * importing the packages again per file cost 1.75 s of CPU a file (20 of them
 * alone: 87 s CPU, 107 s wall in a fresh fork each; 52 s, 58 s reused). What a
 * file changes in its process it puts back (env, listeners) before it ends;
 * vitest resets `vi.setConfig` and mocks between files either way.
 */
const shared = [
  'packages/dsh-agent/tests/messages.spec.ts',
  'packages/dsh-claims/tests/{check,checkpoint-tool,command-keys,evidence,handoff,offline}.spec.ts',
  'packages/dsh-common/tests/{jsonl-select,read-text,vault,xml}.spec.ts',
  'packages/dsh-dstvalid/tests/{judging,toolchains/parsers,toolchains/typescript7/typescript7-units}.spec.ts',
  'packages/dsh-host-deepseek/tests/translate.spec.ts',
  'packages/dsh-host-hooks/tests/{codex-gemini-adapters,install}.spec.ts',
  'packages/dsh-invariants/tests/{agent-run,plugin,properties,rules}.spec.ts',
  'packages/dsh-llm-openai/tests/*.spec.ts',
  'packages/dsh-llm/tests/script.spec.ts',
  'packages/dsh-proofchain/tests/{plugin,prune,restart,sources,summary,tamper}.spec.ts',
  'packages/dsh-snapshot/tests/{capture-restore,plugin,properties,recovery}.spec.ts',
  'packages/dsh-testkit/tests/dsh-session/{jsonl,log}.spec.ts',
  'packages/dsh-testkit/tests/dsh-tools/execute.spec.ts',
  'scripts/tests/{markdown,prose-wrap}.spec.ts',
]

export default defineConfig({
  test: {
    testTimeout: 60_000,
    // Removes the temp dirs and tmpfs mounts the workers could not (a stopped worker emits no `exit`).
    globalSetup: ['packages/dsh-testkit/src/leftovers.ts'],
    hookTimeout: 60_000,
    pool: 'forks',
    poolOptions: { forks: { isolate: false, maxForks: 2, minForks: 1 }, threads: { isolate: false, maxThreads: 2, minThreads: 1 } },
    // dsh's key store (seals) for tests: never the user's own.
    // DSH_BACKGROUND=0 (cordis.yml): the specs that boot the configured suite in this process or a child of it see each write's whole verdict in its result; background verdicts (the default) have their own specs, and demo.spec runs the default.
    env: { NODE_ENV: 'test', DSH_STATE_DIR: join(tmpdir(), `dsh-test-state-${process.getuid?.() ?? 0}`), DSH_BACKGROUND: '0' },
    projects: [
      // First, on their own: the two groups never hold more than two workers between them.
      { extends: true, test: { name: 'shared', include: shared, pool: 'threads', isolate: false, sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: 'forks', include: ['packages/*/tests/**/*.spec.ts', 'scripts/tests/**/*.spec.ts'], exclude: [...configDefaults.exclude, ...shared], sequence: { groupOrder: 1 } } },
    ],
  },
})
