import Schema from '@deepseek-ai/schemastery'
import { TYPESCRIPT_OPTIONS } from './toolchains/typescript/options.ts'
import { VITEST_OPTIONS } from './toolchains/vitest/options.ts'
import { JEST_OPTIONS } from './toolchains/jest/options.ts'
import { PYTHON_OPTIONS } from './toolchains/python/options.ts'
import { GENERIC_OPTIONS } from './toolchains/generic/options.ts'

export type ProfileName = 'typescript' | 'go' | 'python' | 'rust' | 'generic'

/** Test files: new failing tests in them, and new diagnostics in those a write touched or whose test-first work is pending, are warnings (test-first work), unless `strictTests`. */
export const DEFAULT_TEST_FILE_PATTERN = String.raw`(^|/)(__tests__|tests?)/|\.(test|spec)\.[cm]?[jt]sx?$|_test\.go$|(^|/)test_[^/]*\.py$|_test\.py$`

/**
 * The plugin's options: the one source of their text (the type below and the
 * README table derive from it). A toolchain's own options live in its folder
 * (`toolchains/<name>/options.ts`); the keys stay flat.
 */
export const Config = Schema.object({
  enabled: Schema.boolean().default(true).description('Judge writes at all; disabling at runtime drops pending state.'),
  per: Schema.union(['call', 'step']).default('call').description('call: judge each write call; step: one judgement for all writes of an agent step.'),
  verdicts: Schema.union(['turn', 'strict']).default('turn').description('turn: a write whose new problems are only in other files (importers, tests) is kept for now and the turn cannot end with them (the stop is refused, then the unfinished change undone as a group; ADR 0037); strict: every write that makes anything worse is rolled back at once.'),
  background: Schema.boolean().default(true).description('A write or shell call whose type-check passed returns at once, kept for now, while its tests run on the guard\'s queue; the next guarded call, a stop, a checkpoint wait for the verdict (verify/settle), and a rollback found meanwhile is applied before that call, which is refused with the reason. Only calls judged per call (per: call, or a shell call) with dsh-snapshot loaded; off: every write waits for its whole verdict.'),
  stopRefusals: Schema.natural().default(2).description('Turn verdicts: how many times a stop that leaves the project worse than the turn began is refused before the unfinished change is undone. A stop with nothing written since the last refusal (the model only answered or read) is not refused again: the change is undone then.'),
  profiles: Schema.array(Schema.union(['typescript', 'go', 'python', 'rust', 'generic'])).default([]).description('Toolchain profiles to use; empty: detect from the workspace.'),
  tests: Schema.union(['related', 'all', 'off']).default('related').description('related: only tests whose import graph reaches the changed files; all: the whole suite; off: no tests.'),
  testArgs: Schema.array(String).default([]).description('Extra arguments for vitest, go test, pytest and cargo test (e.g. --pool=threads for vitest).'),
  ...JEST_OPTIONS,
  strictTests: Schema.boolean().default(false).description('Make new failing tests and new diagnostics in test files regressions too.'),
  confirmFlaky: Schema.boolean().default(true).description('Re-run a newly failing test once, alone, before blaming the write.'),
  shell: Schema.boolean().default(true).description('Judge shell calls that changed files like writes (false: not judged; the state they leave is re-measured before the next write).'),
  warmOnStart: Schema.boolean().default(true).description('Measure the baseline in the background when a session is created.'),
  warmMap: Schema.boolean().default(false).description('With warmOnStart, also run the tests measured per write once, whole, in the background (their accepted results and the map of what each test executed), so the first write is judged at the steady cost.'),
  warmTimeoutMs: Schema.natural().default(1_800_000).description('Milliseconds the warm-up (warmOnStart, warmMap) may take in all: its own limit, not timeoutMs. It runs in pieces that yield to writes; past the limit, what it has not measured is measured for each write.'),
  timeoutMs: Schema.natural().default(120_000).description('Milliseconds a judgement waits for one check: a command is then killed (its process group); the type-check worker goes on in the background (its work kept for the next check).'),
  maxOutputBytes: Schema.natural().default(1_048_576).description('Cap on the output kept from one check command, in bytes.'),
  maxProblemLines: Schema.natural().default(30).description('Problem lines shown in a rewritten result before "… N more".'),
  maxProblemBytes: Schema.natural().default(4096).description('Byte cap of the problem lines in a rewritten result.'),
  testFilePattern: Schema.string().default(DEFAULT_TEST_FILE_PATTERN).description('Regular expression (on workspace-relative paths) for test files.'),
  ...TYPESCRIPT_OPTIONS,
  ...VITEST_OPTIONS,
  impact: Schema.union(['off', 'notice', 'result']).default('off').description('Change impact before a write: off; notice: the files that import the edited file, as a dstvalid/notice; result: also appended to the tool result.'),
  impactMax: Schema.natural().default(10).description('Importers listed (nearest first) before "… and N more".'),
  style: Schema.union(['off', 'warn', 'rollback']).default('off').description('The workspace\'s own formatters and linters on the changed files: off; warn: new problems are warnings; rollback: new problems roll the write back.'),
  styleTools: Schema.array(Schema.union(['eslint', 'prettier', 'biome', 'gofmt', 'ruff'])).default([]).description('Style tools to run; empty: the ones the workspace\'s config files configure.'),
  coverage: Schema.object({
    threshold: Schema.number().min(0).max(100).default(0).description('Warn when a changed file\'s line coverage falls below this percent; 0 disables coverage.'),
    maxDrop: Schema.number().min(0).default(5).description('Warn when a changed file loses more than this many points from its accepted coverage.'),
  }).default({ threshold: 0, maxDrop: 5 }).description('Coverage-drop warnings after a passing test run (never a rollback): threshold (percent, 0 disables the mode) and maxDrop (points).'),
  learnings: Schema.boolean().default(false).description('Emit verify/learning for every write that was kept and verified.'),
  ...PYTHON_OPTIONS,
  ...GENERIC_OPTIONS,
})
export type Config = Schemastery.TypeT<typeof Config>
