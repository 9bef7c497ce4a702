import Schema from '@deepseek-ai/schemastery'

/** The Jest toolchain's options (Config keys). */
export const JEST_OPTIONS = {
  jestArgs: Schema.array(String).default([]).description('Extra arguments for Jest (e.g. --maxWorkers=2).'),
}
