import Schema from '@deepseek-ai/schemastery'

export type ProfileName = 'typescript' | 'go' | 'python' | 'rust' | 'generic'

/** Test files: new diagnostics or new failing tests in them are warnings (test-first work), unless `strictTests`. */
export const DEFAULT_TEST_FILE_PATTERN = String.raw`(^|/)(__tests__|tests?)/|\.(test|spec)\.[cm]?[jt]sx?$|_test\.go$|(^|/)test_[^/]*\.py$|_test\.py$`

export interface Config {
  /** Judge writes at all; disabling at runtime drops pending state. */
  enabled: boolean
  /** `call`: judge each write call; `step`: one judgement for all writes of an agent step. */
  per: 'call' | 'step'
  /** Toolchain profiles to use; empty: detect from the workspace. */
  profiles: ProfileName[]
  /** `related`: only tests whose import graph reaches the changed files; `all`: the whole suite; `off`: no tests. */
  tests: 'related' | 'all' | 'off'
  /** Extra arguments for the test runner (e.g. `--pool=threads` for vitest). */
  testArgs: string[]
  /** Make new failing tests and new diagnostics in test files regressions too (no test-first leniency). */
  strictTests: boolean
  /** Re-run a newly failing test once, alone, before blaming the write. */
  confirmFlaky: boolean
  /** Also judge shell calls that changed files (found by comparing file stats before and after). */
  shell: boolean
  /** Measure the baseline in the background when a session is created. */
  warmOnStart: boolean
  /** Milliseconds one check command may run before its process group is killed. */
  timeoutMs: number
  /** Cap on the output kept from one check command, in bytes. */
  maxOutputBytes: number
  /** Problem lines shown in a rewritten result before "… N more". */
  maxProblemLines: number
  /** Byte cap of the problem lines in a rewritten result. */
  maxProblemBytes: number
  /** Regular expression (on workspace-relative paths) for test files. */
  testFilePattern: string
  /** tsconfig of the TypeScript profile, relative to the workspace. */
  tsconfig: string
  /** Heap bound of the type-check worker in MB; 0: Node's default. */
  typescriptMaxHeapMb: number
  /** Generic profile: a compile command (run by /bin/sh in the workspace), judged by exit status. */
  compileCommand?: string
  /** Generic profile: a test command, judged by exit status. */
  testCommand?: string
}

export const Config: Schema<Config> = Schema.object({
  enabled: Schema.boolean().default(true).description('Judge writes at all; disabling at runtime drops pending state.'),
  per: Schema.union(['call', 'step']).default('call').description('call: judge each write call; step: one judgement for all writes of an agent step.'),
  profiles: Schema.array(Schema.union(['typescript', 'go', 'python', 'rust', 'generic'])).default([]).description('Toolchain profiles to use; empty: detect from the workspace.'),
  tests: Schema.union(['related', 'all', 'off']).default('related').description('related: only tests whose import graph reaches the changed files; all: the whole suite; off: no tests.'),
  testArgs: Schema.array(String).default([]).description('Extra arguments for the test runner (e.g. --pool=threads for vitest).'),
  strictTests: Schema.boolean().default(false).description('Make new failing tests and new diagnostics in test files regressions too.'),
  confirmFlaky: Schema.boolean().default(true).description('Re-run a newly failing test once, alone, before blaming the write.'),
  shell: Schema.boolean().default(false).description('Also judge shell calls that changed files.'),
  warmOnStart: Schema.boolean().default(true).description('Measure the baseline in the background when a session is created.'),
  timeoutMs: Schema.natural().default(120_000).description('Milliseconds one check command may run before its process group is killed.'),
  maxOutputBytes: Schema.natural().default(1_048_576).description('Cap on the output kept from one check command, in bytes.'),
  maxProblemLines: Schema.natural().default(30).description('Problem lines shown in a rewritten result before "… N more".'),
  maxProblemBytes: Schema.natural().default(4096).description('Byte cap of the problem lines in a rewritten result.'),
  testFilePattern: Schema.string().default(DEFAULT_TEST_FILE_PATTERN).description('Regular expression (on workspace-relative paths) for test files.'),
  tsconfig: Schema.string().default('tsconfig.json').description('tsconfig of the TypeScript profile, relative to the workspace.'),
  typescriptMaxHeapMb: Schema.natural().default(0).description('Heap bound of the type-check worker in MB; 0: Node\'s default.'),
  compileCommand: Schema.string().description('Generic profile: a compile command (run by /bin/sh in the workspace), judged by exit status.'),
  testCommand: Schema.string().description('Generic profile: a test command, judged by exit status.'),
})
