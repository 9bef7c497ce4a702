import Schema from '@deepseek-ai/schemastery'

/** The vitest toolchain's options (Config keys). */
export const VITEST_OPTIONS = {
  warmTests: Schema.boolean().default(true).description('Vitest tests through a warm runner: the workspace\'s own vitest kept alive in a child process (its Node API), started at session start. Off: the vitest CLI per run.'),
  testSelection: Schema.union(['functions', 'files']).default('functions').description('Related vitest tests (the warm runner or the CLI): functions: an edit confined to function bodies runs only the related test files that executed a changed function (a map recorded from the runs, kept in the vault), and a write of comments and whitespace only runs none; files: every related test file.'),
  warmTestsMaxRssMb: Schema.natural().default(1024).description('Resident memory (MB) of the warm test runner and its workers above which it is recycled after a run; 0: never.'),
}
